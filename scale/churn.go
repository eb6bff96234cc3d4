package scale

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
)

// churn keeps a long run moving as MirrorMaker 2 does: every second it
// mirrors one more record on each of perSecond caught-up partitions (the
// record on both sides, and the offset sync MM2 would write), walking the
// estate round-robin. The lag stays as seeded; the sync history grows, so
// the console's index, thinning and retention work as they would over days.
// It returns the number of syncs written when ctx ends.
func (c *Clusters) churn(ctx context.Context, perSecond int) (int64, error) {
	pcl, err := newClient(c.Primary)
	if err != nil {
		return 0, err
	}
	defer pcl.Close()
	dcl, err := newClient(c.DR)
	if err != nil {
		return 0, err
	}
	defer dcl.Close()
	var caught []model.TP
	for i, t := range c.Shape.topics() {
		for p := range c.Shape.partitionsOf(i) {
			if lagging(i, p) == 0 {
				caught = append(caught, model.TP{Topic: t, Partition: p})
			}
		}
	}
	if len(caught) == 0 || perSecond <= 0 {
		<-ctx.Done()
		return 0, nil
	}
	next := make(map[model.TP]int64, len(caught)) // records mirrored so far beyond the seeded ones
	syncsTopic := policy.OffsetSyncsTopic(sourceAlias)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var written int64
	at := 0
	for {
		select {
		case <-ctx.Done():
			return written, nil
		case <-tick.C:
		}
		src, dst, meta := &producer{ctx: ctx, cl: pcl}, &producer{ctx: ctx, cl: dcl}, &producer{ctx: ctx, cl: dcl}
		var syncs []model.OffsetSync
		for range min(perSecond, len(caught)) {
			tp := caught[at%len(caught)]
			at++
			off := int64(c.Shape.SyncsPerPart) + next[tp]
			if err := src.add(&kgo.Record{Topic: tp.Topic, Partition: tp.Partition, Value: []byte("v")}); err != nil {
				return written, err
			}
			if err := dst.add(&kgo.Record{Topic: policy.RemoteTopic(sourceAlias, tp.Topic), Partition: tp.Partition, Value: []byte("v")}); err != nil {
				return written, err
			}
			syncs = append(syncs, model.OffsetSync{Topic: tp.Topic, Partition: tp.Partition, Upstream: off, Downstream: off})
			next[tp]++
		}
		// The records first, then their syncs: a sync never names a record
		// that is not yet on both sides.
		for _, p := range []*producer{src, dst} {
			if err := p.flush(); err != nil {
				return written, ctxOr(ctx, err)
			}
		}
		for _, s := range syncs {
			if err := meta.add(&kgo.Record{Topic: syncsTopic, Key: mm2.EncodeKey(s), Value: mm2.EncodeValue(s), Timestamp: time.Now()}); err != nil {
				return written, err
			}
		}
		if err := meta.flush(); err != nil {
			return written, ctxOr(ctx, err)
		}
		written += int64(len(syncs))
	}
}

// ctxOr is nil when ctx ended (the run is over, not failed), else err.
func ctxOr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("scale: churn: %w", err)
}
