package monitor

import (
	"context"
	"time"

	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/storage"
)

// RecordPrimaryGroups reads every consumer group's committed offsets on the
// primary (one ListGroups and one batched OffsetFetch) and stores those on
// the flow's topics, so a failover after the primary died still knows where
// each group was. The monitor's groupOffsetsLoop calls it every
// GroupOffsetsEvery while the primary answers; translation.GroupTranslator
// reads what it stored when the primary does not.
func RecordPrimaryGroups(ctx context.Context, store *storage.Store, flow string, source *kafka.Client, mirrored func(topic string) bool, now time.Time) (int, error) {
	fetched, err := kafka.AllGroupsCommitted(ctx, source)
	if err != nil {
		return 0, err
	}
	var offs []storage.GroupOffset
	for group, committed := range fetched {
		for tp, at := range committed {
			if mirrored(tp.Topic) {
				offs = append(offs, storage.GroupOffset{Group: group, Topic: tp.Topic, Partition: tp.Partition, Offset: at, AtMs: now.UnixMilli()})
			}
		}
	}
	if len(offs) == 0 {
		return 0, nil
	}
	return len(offs), store.RecordPrimaryGroupOffsets(ctx, flow, offs)
}
