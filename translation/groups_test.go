package translation

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/kafka/kafkatest"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// translator returns a translator of flow primary->dr over a default
// (renaming) policy, with one exact sync per partition of events.
func translator(t *testing.T, source, target *kgo.Client) (*GroupTranslator, *storage.Store) {
	t.Helper()
	store, err := storage.Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	index := mm2.NewSyncIndex()
	index.Add([]model.OffsetSync{
		{Topic: "events", Partition: 0, Upstream: 100, Downstream: 90, LogOffset: 0},
		{Topic: "events", Partition: 1, Upstream: 40, Downstream: 40, LogOffset: 1},
	})
	return NewGroupTranslator(GroupTranslator{Flow: "primary->dr", Alias: "primary", Policy: mm2.ReplicationPolicy{}, Index: index, Store: store}, source, target), store
}

func commit(t *testing.T, cl *kgo.Client, group string, offs map[model.TP]int64) {
	t.Helper()
	o := kadm.Offsets{}
	for tp, at := range offs {
		o.Add(kadm.Offset{Topic: tp.Topic, Partition: tp.Partition, At: at, LeaderEpoch: -1})
	}
	if err := kadm.NewClient(cl).CommitAllOffsets(context.Background(), group, o); err != nil {
		t.Fatal(err)
	}
}

// A savepoint's offsets are translated under the DR names of the policy,
// next to the DR group's current offsets, and say where they came from.
func TestPlanOffsetsRenamesAndReadsDR(t *testing.T) {
	ctx := context.Background()
	_, dcl := kafkatest.NewCluster(t, "dr", "primary.events")
	g, _ := translator(t, nil, dcl)
	commit(t, dcl, "job", map[model.TP]int64{{Topic: "primary.events", Partition: 1}: 7})

	from := FromSavepoint("s3://sp/savepoint-1")
	plan, err := g.PlanOffsets(ctx, "job", map[model.TP]int64{{Topic: "events", Partition: 1}: 40, {Topic: "events", Partition: 0}: 100}, from)
	if err != nil {
		t.Fatal(err)
	}
	if plan.From != from || !strings.Contains(from, "s3://sp/savepoint-1") || plan.DRState != "Empty" || len(plan.Rows) != 2 {
		t.Fatalf("plan = %+v", plan)
	}
	r0, r1 := plan.Rows[0], plan.Rows[1] // sorted by partition
	if r0.Source.Partition != 0 || r0.DR != (model.TP{Topic: "primary.events", Partition: 0}) || r0.Translation.Offset != 90 || r0.Current != nil {
		t.Fatalf("row 0 = %+v", r0)
	}
	if r1.DR.Topic != "primary.events" || r1.Translation.Offset != 40 || r1.Current == nil || *r1.Current != 7 {
		t.Fatalf("row 1 = %+v", r1)
	}
	if p := plan.Proposed(); len(p) != 2 || p[model.TP{Topic: "primary.events", Partition: 0}] != 90 {
		t.Fatalf("proposed = %v", p)
	}

	if _, err := g.PlanOffsets(ctx, "job", nil, from); err == nil || !strings.Contains(err.Error(), "no offsets to translate") {
		t.Fatalf("empty savepoint offsets: %v", err)
	}
}

// Without a primary client and with nothing recorded or checkpointed there
// is nothing to translate from; with a checkpoint, it is used.
func TestPlanWithoutPrimary(t *testing.T) {
	ctx := context.Background()
	_, dcl := kafkatest.NewCluster(t, "dr", "primary.events")
	g, store := translator(t, nil, dcl)
	if _, err := g.Plan(ctx, "billing"); err == nil || !strings.Contains(err.Error(), "primary unreachable") {
		t.Fatalf("plan with nothing to read: %v", err)
	}
	if _, err := g.SourceGroups(ctx); !errors.Is(err, errNoSource) {
		t.Fatalf("SourceGroups without a primary client: %v", err)
	}
	err := store.Apply(ctx, storage.Batch{Flow: "primary->dr", Topic: "cp", NextOffset: 1, Checkpoints: []model.Checkpoint{
		{Group: "billing", Topic: "primary.events", Partition: 0, Upstream: 100, Downstream: 90, LogOffset: 0, RecordMs: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := g.Plan(ctx, "billing")
	if err != nil {
		t.Fatal(err)
	}
	if plan.From != FromCheckpoint || len(plan.Rows) != 1 || plan.Rows[0].Source != (model.TP{Topic: "events", Partition: 0}) ||
		plan.Rows[0].Offset != 100 || plan.Rows[0].Checkpoint == nil || *plan.Rows[0].Checkpoint != 90 {
		t.Fatalf("plan from the checkpoint = %+v", plan)
	}
}

// The primary's groups and DR's offsets by timestamp are read through the
// translator's clients.
func TestSourceGroupsAndSeekDR(t *testing.T) {
	ctx := context.Background()
	_, pcl := kafkatest.NewCluster(t, "primary", "events")
	_, dcl := kafkatest.NewCluster(t, "dr", "primary.events")
	g, _ := translator(t, pcl, dcl)
	commit(t, pcl, "billing", map[model.TP]int64{{Topic: "events", Partition: 0}: 1})
	commit(t, pcl, "audit", map[model.TP]int64{{Topic: "events", Partition: 1}: 1})
	groups, err := g.SourceGroups(ctx)
	slices.Sort(groups)
	if err != nil || !slices.Equal(groups, []string{"audit", "billing"}) {
		t.Fatalf("source groups %v, %v", groups, err)
	}
	base := time.UnixMilli(1_700_000_000_000)
	for i := range 3 {
		if err := dcl.ProduceSync(ctx, &kgo.Record{Topic: "primary.events", Partition: 0, Timestamp: base.Add(time.Duration(i) * time.Second)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	seek, err := g.SeekDR(ctx, base.Add(1500*time.Millisecond).UnixMilli(), "primary.events")
	if r := seek[model.TP{Topic: "primary.events", Partition: 0}]; err != nil || r.Offset != 2 {
		t.Fatalf("seek = %+v, %v", seek, err)
	}
}

// Undo restores previous offsets and lists partitions that had none.
func TestUndoOffsets(t *testing.T) {
	prev := int64(3)
	restore, none := UndoOffsets(storage.GroupChange{Changes: []storage.OffsetChange{
		{Topic: "events", Partition: 0, Previous: &prev, Applied: 91},
		{Topic: "events", Partition: 1, Applied: 50},
	}})
	if len(restore) != 1 || restore[model.TP{Topic: "events", Partition: 0}] != 3 {
		t.Fatalf("restore = %v", restore)
	}
	if len(none) != 1 || none[0] != (model.TP{Topic: "events", Partition: 1}) {
		t.Fatalf("no previous = %v", none)
	}
}

// KnownGroups merges the stored checkpoints (newest record time per group)
// with the primary's list: a group only the primary has is primary-only;
// without a primary the checkpointed groups still come, with the reason.
func TestKnownGroups(t *testing.T) {
	ctx := context.Background()
	_, pcl := kafkatest.NewCluster(t, "primary", "events")
	_, dcl := kafkatest.NewCluster(t, "dr", "primary.events")
	g, store := translator(t, pcl, dcl)
	commit(t, pcl, "billing", map[model.TP]int64{{Topic: "events", Partition: 0}: 1})
	commit(t, pcl, "fresh, with comma", map[model.TP]int64{{Topic: "events", Partition: 0}: 1})
	err := store.Apply(ctx, storage.Batch{Flow: "primary->dr", Topic: "cp", NextOffset: 3, Checkpoints: []model.Checkpoint{
		{Group: "billing", Topic: "primary.events", Partition: 0, Upstream: 1, Downstream: 1, LogOffset: 0, RecordMs: 5_000},
		{Group: "billing", Topic: "primary.events", Partition: 1, Upstream: 1, Downstream: 1, LogOffset: 1, RecordMs: 9_000},
		{Group: "gone-from-primary", Topic: "primary.events", Partition: 0, Upstream: 1, Downstream: 1, LogOffset: 2, RecordMs: 7_000}}})
	if err != nil {
		t.Fatal(err)
	}
	groups, err := g.KnownGroups(ctx, 5*time.Second)
	want := []model.KnownGroup{{Name: "billing", LastCheckpointMs: 9_000, OnPrimary: true}, {Name: "fresh, with comma", OnPrimary: true},
		{Name: "gone-from-primary", LastCheckpointMs: 7_000}}
	if err != nil || !slices.Equal(groups, want) {
		t.Fatalf("known groups %+v, %v; want %+v", groups, err, want)
	}
	if !groups[1].PrimaryOnly() || groups[0].PrimaryOnly() || groups[2].PrimaryOnly() {
		t.Fatalf("primary-only: %+v", groups)
	}
	noPrimary, _ := translator(t, nil, dcl)
	noPrimary.Store = store
	groups, err = noPrimary.KnownGroups(ctx, time.Second)
	if !errors.Is(err, errNoSource) || len(groups) != 2 || groups[0].OnPrimary {
		t.Fatalf("without the primary: %+v, %v", groups, err)
	}
}
