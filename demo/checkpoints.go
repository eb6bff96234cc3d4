package demo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// checkpointRoundTimeout bounds one checkpoint round, so a down primary
// only costs one missed round whatever Options.CheckpointInterval is.
const checkpointRoundTimeout = 2 * time.Second

type checkpointKey struct {
	group string
	topicPartition
}

// mirrorCheckpoints is MM2's MirrorCheckpointTask (mm2.md §3.3): it reads
// the primary's committed group offsets, translates them through the
// mirror's syncs, and writes checkpoints to dr.
type mirrorCheckpoints struct {
	m      *mirror
	srcAdm *kadm.Client
	topic  string
	last   map[checkpointKey]model.Checkpoint // owned by run
}

func (c *mirrorCheckpoints) run(ctx context.Context) {
	every(ctx, c.m.s.opts.CheckpointInterval, func() {
		if _, running := c.m.s.ctl.mirror(); !running {
			return
		}
		rctx, cancel := context.WithTimeout(ctx, checkpointRoundTimeout)
		err := c.once(rctx)
		cancel()
		if err != nil && ctx.Err() == nil {
			c.m.s.log.Debug("demo checkpoints: round failed", "err", err)
		}
	})
}

// groupExcluded is MM2's default groups.exclude.
func groupExcluded(g string) bool {
	return strings.HasPrefix(g, "console-consumer-") || strings.HasPrefix(g, "connect-") || strings.HasPrefix(g, "__")
}

func (c *mirrorCheckpoints) once(ctx context.Context) error {
	listed, err := c.srcAdm.ListGroups(ctx)
	if err != nil {
		return fmt.Errorf("list groups on primary: %w", err)
	}
	groups := slices.DeleteFunc(listed.Groups(), groupExcluded)
	if len(groups) == 0 {
		return nil
	}
	slices.Sort(groups)
	var recs []*kgo.Record
	var emitted []model.Checkpoint
	var errs []error
	fetched := c.srcAdm.FetchManyOffsets(ctx, groups...)
	for _, group := range groups {
		resp := fetched[group]
		if resp.Err != nil {
			errs = append(errs, fmt.Errorf("fetch offsets of %s: %w", group, resp.Err))
			continue
		}
		resp.Fetched.Each(func(o kadm.OffsetResponse) {
			if cp, ok := c.checkpoint(group, o); ok {
				recs = append(recs, &kgo.Record{Topic: c.topic, Partition: 0, Key: mm2.EncodeKey(cp), Value: mm2.EncodeValue(cp)})
				emitted = append(emitted, cp)
			}
		})
	}
	if len(recs) == 0 {
		return errors.Join(errs...)
	}
	var res []error
	if !c.m.s.ctl.round(func() { res = produceAll(ctx, c.m.dst, recs) }) {
		return nil // paused while translating: write nothing
	}
	for i, err := range res {
		if err != nil {
			errs = append(errs, err)
			continue // not remembered, so retried next round
		}
		c.remember(emitted[i])
		c.m.s.checkpoints.Add(1)
	}
	return errors.Join(errs...)
}

// checkpoint translates one committed offset and applies MM2's emission
// rule: first checkpoint, upstream rewind, or downstream progress.
func (c *mirrorCheckpoints) checkpoint(group string, o kadm.OffsetResponse) (model.Checkpoint, bool) {
	if o.Err != nil || o.At < 0 || !slices.Contains(Topics, o.Topic) {
		return model.Checkpoint{}, false
	}
	tp := topicPartition{o.Topic, o.Partition}
	tr := mm2.Translate(c.m.syncHistory(tp), o.At)
	if !tr.Translated() {
		return model.Checkpoint{}, false
	}
	cp := model.Checkpoint{
		Group:      group,
		Topic:      policy.RemoteTopic(SourceAlias, o.Topic),
		Partition:  o.Partition,
		Upstream:   o.At,
		Downstream: tr.Offset,
		Metadata:   o.Metadata,
	}
	last, seen := c.last[checkpointKey{group, tp}]
	if seen && cp.Upstream >= last.Upstream && cp.Downstream <= last.Downstream {
		return model.Checkpoint{}, false
	}
	return cp, true
}

// remember records cp as written: the next emission decision compares to it.
func (c *mirrorCheckpoints) remember(cp model.Checkpoint) {
	up, _ := policy.UpstreamTopic(SourceAlias, cp.Topic)
	c.last[checkpointKey{cp.Group, topicPartition{up, cp.Partition}}] = cp
}
