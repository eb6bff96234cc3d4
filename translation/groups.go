package translation

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// Where a group's primary offsets were read.
const (
	FromPrimary    = "committed offsets on the primary"
	FromCheckpoint = "MM2 checkpoints in DR (the primary's offsets as of the last checkpoint)"
	FromRecorded   = "the primary's offsets as the console last recorded them, or MM2's checkpoints where newer (the primary does not answer)"
)

// GroupTranslator builds group plans for one flow.
type GroupTranslator struct {
	Flow   string
	Alias  string // the flow's source alias
	Policy mm2.ReplicationPolicy
	Index  *mm2.SyncIndex
	Store  *storage.Store
	// source may be unreachable (the primary is gone): then MM2's
	// checkpoints in DR supply the group's primary offsets. Unexported so
	// that no caller picks a raw client off a translator to write with.
	source *kafka.Client
	target *kafka.Client
}

// NewGroupTranslator returns t reading the primary through source (which may
// be unreachable) and DR through target.
func NewGroupTranslator(t GroupTranslator, source, target *kafka.Client) *GroupTranslator {
	t.source, t.target = source, target
	return &t
}

// Plan previews translating group. It reads the group's offsets on the
// primary when it answers, else from MM2's checkpoints.
func (g *GroupTranslator) Plan(ctx context.Context, group string) (*model.GroupPlan, error) {
	plan := &model.GroupPlan{Flow: g.Flow, Group: group, At: time.Now()}
	mm2, err := g.checkpoints(ctx, group)
	if err != nil {
		return nil, err
	}
	offsets, err := g.primaryOffsets(ctx, group)
	if err == nil && len(offsets) > 0 {
		plan.From = FromPrimary
	} else {
		// The primary does not answer: per partition, the newer of what
		// the console recorded from it and MM2's last checkpoint.
		plan.From = FromCheckpoint
		offsets = map[model.TP]int64{}
		at := map[model.TP]int64{}
		for drTP, c := range mm2 {
			upstream, ok := g.Policy.UpstreamTopic(g.Alias, drTP.Topic)
			if ok {
				tp := model.TP{Topic: upstream, Partition: drTP.Partition}
				offsets[tp], at[tp] = c.Upstream, c.RecordMs
			}
		}
		recorded, rerr := g.Store.PrimaryGroupOffsets(ctx, g.Flow, group)
		if rerr != nil {
			return nil, rerr
		}
		for _, o := range recorded {
			tp := model.TP{Topic: o.Topic, Partition: o.Partition}
			if t, ok := at[tp]; !ok || o.AtMs > t {
				offsets[tp], at[tp] = o.Offset, o.AtMs
				plan.From = FromRecorded
			}
		}
		if len(offsets) == 0 {
			if err != nil {
				return nil, fmt.Errorf("group %s: primary unreachable (%v) and no MM2 checkpoints or recorded offsets for it", group, err)
			}
			return nil, fmt.Errorf("group %s: no committed offsets on the primary and no MM2 checkpoints or recorded offsets for it", group)
		}
	}
	return g.planRows(ctx, plan, offsets, mm2)
}

// checkpoints returns MM2's latest checkpoints of group, by DR partition.
func (g *GroupTranslator) checkpoints(ctx context.Context, group string) (map[model.TP]model.Checkpoint, error) {
	all, err := g.Store.Checkpoints(ctx, g.Flow)
	if err != nil {
		return nil, err
	}
	mm2 := map[model.TP]model.Checkpoint{}
	for _, c := range all {
		if c.Group == group {
			mm2[model.TP{Topic: c.Topic, Partition: c.Partition}] = c
		}
	}
	return mm2, nil
}

// FromSavepoint names where PlanOffsets' offsets came from.
func FromSavepoint(path string) string { return "the Kafka source offsets of savepoint " + path }

// PlanOffsets previews moving group to the translation of given primary
// offsets (a savepoint's next offsets to read) instead of the group's own:
// a job restored from that savepoint with a new source uid then resumes
// exactly where its state ends. from says where they came from.
func (g *GroupTranslator) PlanOffsets(ctx context.Context, group string, offsets map[model.TP]int64, from string) (*model.GroupPlan, error) {
	if len(offsets) == 0 {
		return nil, fmt.Errorf("group %s: no offsets to translate (%s)", group, from)
	}
	mm2, err := g.checkpoints(ctx, group)
	if err != nil {
		return nil, err
	}
	return g.planRows(ctx, &model.GroupPlan{Flow: g.Flow, Group: group, At: time.Now(), From: from}, offsets, mm2)
}

// planRows completes a plan: the DR group's state and current offsets,
// and one translated row per primary partition.
func (g *GroupTranslator) planRows(ctx context.Context, plan *model.GroupPlan, offsets map[model.TP]int64, mm2 map[model.TP]model.Checkpoint) (*model.GroupPlan, error) {
	group := plan.Group
	current, err := kafka.GroupCommitted(ctx, g.target, group)
	if err != nil {
		return nil, fmt.Errorf("reading DR offsets of group %s: %w", group, err)
	}
	plan.DRState, plan.DRMembers, err = kafka.GroupStateOn(ctx, g.target, group)
	if err != nil {
		return nil, err
	}
	for tp, off := range offsets {
		row := model.GroupRow{Source: tp, Offset: off}
		row.DR, row.Translation = g.Translate(tp, off, false)
		if v, ok := current[row.DR]; ok {
			row.Current = &v
		}
		if c, ok := mm2[row.DR]; ok {
			v := c.Downstream
			row.Checkpoint = &v
		}
		plan.Rows = append(plan.Rows, row)
	}
	sortRows(plan.Rows)
	return plan, nil
}

// DRGroupState describes group in DR: its state ("Dead" when it does not
// exist) and how many members it has.
func (g *GroupTranslator) DRGroupState(ctx context.Context, group string) (string, int, error) {
	return kafka.GroupStateOn(ctx, g.target, group)
}

func (g *GroupTranslator) primaryOffsets(ctx context.Context, group string) (map[model.TP]int64, error) {
	if g.source == nil {
		return nil, errors.New("no primary client")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return kafka.GroupCommitted(ctx, g.source, group)
}

// UndoOffsets returns the offsets a recorded change replaced. Partitions
// that had none cannot be "uncommitted" (Kafka deletes offsets only per
// group): they are listed in noPrevious for the operator to decide.
func UndoOffsets(c storage.GroupChange) (restore map[model.TP]int64, noPrevious []model.TP) {
	restore = map[model.TP]int64{}
	for _, x := range c.Changes {
		tp := model.TP{Topic: x.Topic, Partition: x.Partition}
		if x.Previous == nil {
			noPrevious = append(noPrevious, tp)
			continue
		}
		restore[tp] = *x.Previous
	}
	return restore, noPrevious
}

func sortRows(rows []model.GroupRow) {
	slices.SortFunc(rows, func(a, b model.GroupRow) int {
		return cmp.Or(strings.Compare(a.Source.Topic, b.Source.Topic), cmp.Compare(a.Source.Partition, b.Source.Partition))
	})
}
