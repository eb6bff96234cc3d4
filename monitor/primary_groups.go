package monitor

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/storage"
)

// RecordPrimaryGroups reads every consumer group's committed offsets on the
// primary (one ListGroups and one batched OffsetFetch) and stores those on
// the flow's topics, so a failover after the primary died still knows where
// each group was. The monitor's groupOffsetsLoop calls it every
// GroupOffsetsEvery while the primary answers; translation.GroupTranslator
// reads what it stored when the primary does not.
func RecordPrimaryGroups(ctx context.Context, store *storage.Store, flow string, source *kgo.Client, mirrored func(topic string) bool, now time.Time) (int, error) {
	adm := kadm.NewClient(source)
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		return 0, err
	}
	groups := listed.Groups()
	if len(groups) == 0 {
		return 0, nil
	}
	fetched := adm.FetchManyOffsets(ctx, groups...)
	var offs []storage.GroupOffset
	for _, r := range fetched {
		if r.Err != nil {
			continue
		}
		r.Fetched.Each(func(o kadm.OffsetResponse) {
			if o.Err == nil && o.At >= 0 && mirrored(o.Topic) {
				offs = append(offs, storage.GroupOffset{Group: r.Group, Topic: o.Topic, Partition: o.Partition, Offset: o.At, AtMs: now.UnixMilli()})
			}
		})
	}
	if len(offs) == 0 {
		return 0, nil
	}
	return len(offs), store.RecordPrimaryGroupOffsets(ctx, flow, offs)
}
