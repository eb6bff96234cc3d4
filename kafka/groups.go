package kafka

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

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

// GroupRow is one partition of a group translation preview.
type GroupRow struct {
	Source model.TP // primary topic partition
	DR     model.TP // its name in DR
	Offset int64    // the group's next offset to read on the primary
	// Current is the DR group's committed offset now; nil when none.
	Current     *int64
	Translation mm2.Translation
	// Checkpoint is MM2's own translation from its latest checkpoint, for
	// comparison; nil when MM2 has none for this partition.
	Checkpoint *int64
}

// GroupPlan is a preview of moving a DR consumer group to the translated
// offsets of its primary counterpart. Nothing changes until ApplyGroupPlan.
type GroupPlan struct {
	Flow  string
	Group string
	From  string // FromPrimary or FromCheckpoint
	At    time.Time
	Rows  []GroupRow
	// DRState is the DR group's state ("Empty", "Stable", "Dead" for none).
	DRState   string
	DRMembers int
}

// Untranslatable counts rows that cannot be moved.
func (p *GroupPlan) Untranslatable() int {
	n := 0
	for _, r := range p.Rows {
		if !r.Translation.Translated() {
			n++
		}
	}
	return n
}

// Proposed returns the offsets Apply would commit: translated rows only.
func (p *GroupPlan) Proposed() map[model.TP]int64 {
	out := map[model.TP]int64{}
	for _, r := range p.Rows {
		if r.Translation.Translated() {
			out[r.DR] = r.Translation.Offset
		}
	}
	return out
}

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
	source *kgo.Client
	target *kgo.Client
}

// NewGroupTranslator returns t reading the primary through source (which may
// be unreachable) and DR through target.
func NewGroupTranslator(t GroupTranslator, source, target *kgo.Client) *GroupTranslator {
	t.source, t.target = source, target
	return &t
}

// SourceClient is the primary's client, for reads (listing groups, log
// starts).
func (g *GroupTranslator) SourceClient() *kgo.Client { return g.source }

// TargetClient is DR's client, for reads and, until the failover effect
// boundary owns them, the offset commits of failover.
func (g *GroupTranslator) TargetClient() *kgo.Client { return g.target }

// Plan previews translating group. It reads the group's offsets on the
// primary when it answers, else from MM2's checkpoints.
func (g *GroupTranslator) Plan(ctx context.Context, group string) (*GroupPlan, error) {
	plan := &GroupPlan{Flow: g.Flow, Group: group, At: time.Now()}
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
func (g *GroupTranslator) PlanOffsets(ctx context.Context, group string, offsets map[model.TP]int64, from string) (*GroupPlan, error) {
	if len(offsets) == 0 {
		return nil, fmt.Errorf("group %s: no offsets to translate (%s)", group, from)
	}
	mm2, err := g.checkpoints(ctx, group)
	if err != nil {
		return nil, err
	}
	return g.planRows(ctx, &GroupPlan{Flow: g.Flow, Group: group, At: time.Now(), From: from}, offsets, mm2)
}

// planRows completes a plan: the DR group's state and current offsets,
// and one translated row per primary partition.
func (g *GroupTranslator) planRows(ctx context.Context, plan *GroupPlan, offsets map[model.TP]int64, mm2 map[model.TP]model.Checkpoint) (*GroupPlan, error) {
	group := plan.Group
	adm := kadm.NewClient(g.target)
	current, err := groupOffsets(ctx, adm, group)
	if err != nil {
		return nil, fmt.Errorf("reading DR offsets of group %s: %w", group, err)
	}
	plan.DRState, plan.DRMembers, err = groupState(ctx, adm, group)
	if err != nil {
		return nil, err
	}
	for tp, off := range offsets {
		row := GroupRow{Source: tp, DR: model.TP{Topic: g.Policy.RemoteTopic(g.Alias, tp.Topic), Partition: tp.Partition}, Offset: off,
			Translation: g.Index.Translate(tp, off)}
		if o, ok := current.Lookup(row.DR.Topic, row.DR.Partition); ok && o.Err == nil && o.At >= 0 {
			v := o.At
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
	return groupState(ctx, kadm.NewClient(g.target), group)
}

func (g *GroupTranslator) primaryOffsets(ctx context.Context, group string) (map[model.TP]int64, error) {
	if g.source == nil {
		return nil, errors.New("no primary client")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := groupOffsets(ctx, kadm.NewClient(g.source), group)
	if err != nil {
		return nil, err
	}
	out := map[model.TP]int64{}
	resp.Each(func(o kadm.OffsetResponse) {
		if o.Err == nil && o.At >= 0 {
			out[model.TP{Topic: o.Topic, Partition: o.Partition}] = o.At
		}
	})
	return out, nil
}

// groupOffsets fetches a group's committed offsets; a group that does not
// exist (yet) has none, which is not an error.
func groupOffsets(ctx context.Context, adm *kadm.Client, group string) (kadm.OffsetResponses, error) {
	var resp kadm.OffsetResponses
	err := coordinatorRetry(ctx, func() (err error) {
		resp, err = adm.FetchOffsets(ctx, group)
		if err == nil {
			err = resp.Error()
		}
		return err
	})
	if errors.Is(err, kerr.GroupIDNotFound) {
		return kadm.OffsetResponses{}, nil
	}
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// coordinatorPatience bounds how long a group request waits for its
// coordinator: a DR broker that just started (or took over the group)
// answers COORDINATOR_NOT_AVAILABLE / COORDINATOR_LOAD_IN_PROGRESS until
// __consumer_offsets is created and loaded, which on a busy broker outlasts
// the client's own retries (it returns FindCoordinator errors at once).
const coordinatorPatience = 20 * time.Second

// coordinatorRetry runs f until it succeeds, fails with an error that is
// not a retriable Kafka error, ctx ends, or coordinatorPatience passes.
func coordinatorRetry(ctx context.Context, f func() error) error {
	deadline := time.Now().Add(coordinatorPatience)
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		err := f()
		if err == nil || !kerr.IsRetriable(err) || time.Now().Add(wait).After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// groupState describes a group in DR; a group that does not exist is "Dead".
func groupState(ctx context.Context, adm *kadm.Client, group string) (string, int, error) {
	var described kadm.DescribedGroups
	err := coordinatorRetry(ctx, func() (err error) {
		described, err = adm.DescribeGroups(ctx, group)
		if d, ok := described[group]; err == nil && ok && kerr.IsRetriable(d.Err) {
			err = d.Err
		}
		return err
	})
	if errors.Is(err, kerr.GroupIDNotFound) {
		return "Dead", 0, nil
	}
	if err != nil {
		return "", 0, fmt.Errorf("describing DR group %s: %w", group, err)
	}
	d, ok := described[group]
	if !ok {
		return "Dead", 0, nil
	}
	if errors.Is(d.Err, kerr.GroupIDNotFound) {
		return "Dead", 0, nil
	}
	if d.Err != nil {
		return "", 0, fmt.Errorf("describing DR group %s: %w", group, d.Err)
	}
	return d.State, len(d.Members), nil
}

// ErrGroupActive refuses to move offsets under running consumers: Kafka
// would reject the commit, and their positions would overwrite it anyway.
var ErrGroupActive = errors.New("the DR group has active members; stop its consumers first")

// GroupState describes group on adm's cluster: its state ("Dead" when it
// does not exist) and member count, waiting for a coordinator that is
// still loading. failover/internal/effect checks it before committing.
func GroupState(ctx context.Context, adm *kadm.Client, group string) (string, int, error) {
	return groupState(ctx, adm, group)
}

// GroupOffsets fetches group's committed offsets on adm's cluster (none for
// a group that does not exist).
func GroupOffsets(ctx context.Context, adm *kadm.Client, group string) (kadm.OffsetResponses, error) {
	return groupOffsets(ctx, adm, group)
}

// CoordinatorRetry runs f until it succeeds, fails with an error that is
// not a retriable Kafka error, ctx ends, or the coordinator's patience
// passes.
func CoordinatorRetry(ctx context.Context, f func() error) error { return coordinatorRetry(ctx, f) }

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

func sortRows(rows []GroupRow) {
	slices.SortFunc(rows, func(a, b GroupRow) int {
		return cmp.Or(strings.Compare(a.Source.Topic, b.Source.Topic), cmp.Compare(a.Source.Partition, b.Source.Partition))
	})
}

// SeekResult is the DR offset for a timestamp in one partition.
type SeekResult struct {
	Offset int64
	// Timestamp of the record at Offset; -1 when the timestamp is past the
	// partition's last record (Offset is then its end).
	Timestamp int64
}

// SeekByTimestamp finds, for each DR partition of topics, the first offset
// whose record timestamp is at or after ms (Kafka's ListOffsets by
// timestamp). The alternative to translation: simpler, at-least-once.
func SeekByTimestamp(ctx context.Context, target *kgo.Client, ms int64, topics ...string) (map[model.TP]SeekResult, error) {
	listed, err := kadm.NewClient(target).ListOffsetsAfterMilli(ctx, ms, topics...)
	if err != nil && !Partial(err) {
		return nil, fmt.Errorf("listing DR offsets by timestamp: %w", err)
	}
	out := map[model.TP]SeekResult{}
	listed.Each(func(o kadm.ListedOffset) {
		if o.Err == nil {
			out[model.TP{Topic: o.Topic, Partition: o.Partition}] = SeekResult{Offset: o.Offset, Timestamp: o.Timestamp}
		}
	})
	return out, nil
}

// RecordPrimaryGroups reads every consumer group's committed offsets on the
// primary (one ListGroups and one batched OffsetFetch) and stores those on
// the flow's topics, so a failover after the primary died still knows where
// each group was.
func (g *GroupTranslator) RecordPrimaryGroups(ctx context.Context, mirrored func(topic string) bool, now time.Time) (int, error) {
	adm := kadm.NewClient(g.source)
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
	return len(offs), g.Store.RecordPrimaryGroupOffsets(ctx, g.Flow, offs)
}
