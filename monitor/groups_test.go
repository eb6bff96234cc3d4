package monitor

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
)

// The failover quality of a flow's consumer groups, on two kfake clusters
// with MM2's syncs and checkpoints written by hand, against figures worked
// out by hand from them.
func TestGroupQualityFromSyncsAndCheckpoints(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	primary, pcl := newCluster(t, "primary", "events", "audit")
	dr, dcl := newCluster(t, "dr", "events", "audit")
	now := time.Now().Truncate(time.Millisecond)
	base := now.Add(-10 * time.Minute)
	at := func(s int) time.Time { return base.Add(time.Duration(s) * time.Second) }
	for range 120 {
		produce(t, pcl, &kgo.Record{Topic: "events", Partition: 0, Value: []byte{1}})
	}
	for range 50 {
		produce(t, pcl, &kgo.Record{Topic: "events", Partition: 1, Value: []byte{1}})
	}
	for range 10 {
		produce(t, pcl, &kgo.Record{Topic: "audit", Partition: 0, Value: []byte{1}})
	}
	produce(t, dcl, &kgo.Record{Topic: "events", Partition: 0, Value: []byte{1}})
	cfg := testConfig(t, primary, dr)
	f := cfg.Flows[0]
	f.Topics.Include = []string{"events", "audit"}
	cfg.RefreshReadTimeout = config.Duration(2 * time.Second) // the outage's reads wait it out
	f.Groups = []config.Group{{Name: "billing", Critical: true, ReprocessObjective: 10}, {Name: "lagger"}, {Name: "never-ran"}}
	if err := cfg.Normalize("test"); err != nil {
		t.Fatal(err)
	}
	ft := flowstate.TopicsOf(f)
	adm := kadm.NewClient(dcl)
	for _, topic := range []string{ft.OffsetSyncs, ft.Checkpoints} {
		if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	sync := func(p int32, up, down int64, when time.Time) *kgo.Record {
		s := model.OffsetSync{Topic: "events", Partition: p, Upstream: up, Downstream: down}
		return &kgo.Record{Topic: ft.OffsetSyncs, Key: mm2.EncodeKey(s), Value: mm2.EncodeValue(s), Timestamp: when}
	}
	produce(t, dcl, sync(0, 10, 10, at(10)), sync(1, 0, 0, at(0)), sync(0, 60, 60, at(60)), sync(1, 49, 49, at(49)), sync(0, 100, 95, at(100)))
	checkpoint := func(group string, p int32, up, down int64, when time.Time) *kgo.Record {
		c := model.Checkpoint{Group: group, Topic: "events", Partition: p, Upstream: up, Downstream: down}
		return &kgo.Record{Topic: ft.Checkpoints, Key: mm2.EncodeKey(c), Value: mm2.EncodeValue(c), Timestamp: when}
	}
	produce(t, dcl, checkpoint("billing", 0, 60, 60, at(70)), checkpoint("orders", 0, 100, 95, at(110)), checkpoint("orders", 1, 30, 1, at(111)))
	commitGroup(t, pcl, "billing", map[model.TP]int64{{Topic: "events", Partition: 0}: 80, {Topic: "events", Partition: 1}: 50})
	commitGroup(t, pcl, "lagger", map[model.TP]int64{{Topic: "events", Partition: 0}: 5, {Topic: "audit", Partition: 0}: 3})

	m, store := newTestMonitor(t, cfg, filepath.Join(t.TempDir(), "db"))
	stop := runIngester(m)
	waitFor(t, "ingestion of 5 syncs and 3 checkpoints", func() bool {
		n, _ := store.CountSyncs(ctx, f.Name)
		cps, _ := store.Checkpoints(ctx, f.Name)
		return n == 5 && len(cps) == 3
	})
	stop()
	readAt := now.Add(-20 * time.Second)
	if _, err := RecordPrimaryGroups(ctx, store, f.Name, m.clients["primary"], f.Topics.Matches, readAt); err != nil {
		t.Fatal(err)
	}
	m.Now = func() time.Time { return now }
	m.Refresh(ctx)
	gs := m.Snapshot(f.Name).Groups
	if gs == nil || gs.Err != "" || gs.Over != 0 {
		t.Fatalf("groups = %+v", gs)
	}
	names := []string{}
	for _, g := range gs.Groups {
		names = append(names, g.Group)
	}
	// Worst first: unknown bounds (more untranslated partitions first),
	// then the largest bound.
	if want := []string{"lagger", "never-ran", "orders", "billing"}; !slices.Equal(names, want) {
		t.Fatalf("order = %v, want %v", names, want)
	}
	lagger, never, orders, billing := gs.Groups[0], gs.Groups[1], gs.Groups[2], gs.Groups[3]

	// billing: events-0 at 80, the newest sync at or below is 60->60, so it
	// resumes at 61 in DR and reads again at most 80-60-1 = 19 records;
	// events-1 at 50 is past the newest sync 49->49: resumes at 50, 0 again.
	if billing.Reread == nil || *billing.Reread != 19 || !billing.Critical || billing.Objective != 10 || !billing.OverObjective() ||
		billing.Untranslated != 0 || !billing.OldestSyncAt.Equal(at(49)) || !billing.CheckpointAt.Equal(at(70)) ||
		!billing.OffsetsAt.Equal(readAt) || billing.OffsetsStale {
		t.Fatalf("billing = %+v", billing)
	}
	b0, b1 := billing.Partitions[0], billing.Partitions[1]
	if b0.Offset != 80 || b0.OffsetFrom != model.OffsetFromPrimary || b0.DROffset != 61 || *b0.Reread != 19 || !b0.SyncAt.Equal(at(60)) ||
		!b0.CheckpointAt.Equal(at(70)) || b0.Note() != "" || b0.Problem != "" {
		t.Fatalf("billing events-0 = %+v", b0)
	}
	if b1.DROffset != 50 || *b1.Reread != 0 || !b1.SyncAt.Equal(at(49)) || !strings.Contains(b1.Note(), "past the newest offset sync") || !b1.CheckpointAt.IsZero() {
		t.Fatalf("billing events-1 = %+v", b1)
	}
	// orders, known from MM2's checkpoints only: events-0 at 100 is exact
	// (95), events-1 at 30 uses 0->0: resumes at 1, at most 29 again.
	if orders.Reread == nil || *orders.Reread != 29 || orders.Configured || orders.OverObjective() || !orders.CheckpointAt.Equal(at(111)) ||
		!orders.OffsetsAt.Equal(at(110)) || !orders.OldestSyncAt.Equal(at(0)) {
		t.Fatalf("orders = %+v", orders)
	}
	if o0 := orders.Partitions[0]; o0.OffsetFrom != model.OffsetFromCheckpoint || o0.Method != model.MethodExact || o0.DROffset != 95 || *o0.Reread != 0 {
		t.Fatalf("orders events-0 = %+v", o0)
	}
	// lagger: audit-0 has no sync at all, events-0 at 5 is below the oldest
	// sync (10): its bound is unknown, not 0.
	if lagger.Reread != nil || lagger.Untranslated != 2 || !lagger.OldestSyncAt.IsZero() {
		t.Fatalf("lagger = %+v", lagger)
	}
	if a0, e0 := lagger.Partitions[0], lagger.Partitions[1]; a0.Source.Topic != "audit" || !strings.HasPrefix(a0.Problem, "no offset sync for this partition") ||
		!strings.Contains(e0.Problem, "no offset sync at or below offset 5 (the oldest kept is at upstream 10)") || e0.Reread != nil {
		t.Fatalf("lagger partitions = %+v", lagger.Partitions)
	}
	if never.Reread != nil || !strings.HasPrefix(never.Problem, "no committed offsets recorded") || len(never.Partitions) != 0 {
		t.Fatalf("never-ran = %+v", never)
	}
	if w, bound, ok := gs.Worst(); !ok || w.Group != "lagger" || bound != nil {
		t.Fatalf("worst = %v %v %v", w, bound, ok)
	}

	// Retention passes lagger's offset on the primary: truncated.
	if _, err := kadm.NewClient(pcl).DeleteRecords(ctx, kadm.Offsets{"events": {0: {At: 8}}}); err != nil {
		t.Fatal(err)
	}
	m.Refresh(ctx)
	if e0 := m.Snapshot(f.Name).Groups.Groups[0].Partitions[1]; !strings.HasPrefix(e0.Problem, "truncated: offset 5 is below the primary's log start 8") {
		t.Fatalf("lagger events-0 after DeleteRecords = %+v", e0)
	}

	// A cap of one group: billing (configured first) is computed, the
	// other three are counted and named, and the flow's worst is unknown
	// though billing's is not.
	m.GroupCap = 1
	m.Refresh(ctx)
	gs = m.Snapshot(f.Name).Groups
	if len(gs.Groups) != 1 || gs.Groups[0].Group != "billing" || gs.Over != 3 || !slices.Equal(gs.OverNames, []string{"lagger", "never-ran", "orders"}) {
		t.Fatalf("capped = %+v", gs)
	}
	if w, bound, ok := gs.Worst(); !ok || w.Group != "billing" || bound != nil {
		t.Fatalf("capped worst = %v %v %v", w, bound, ok)
	}
	m.GroupCap = 0 // the default again

	// The primary goes: the last recorded offsets still bound what they
	// cover, marked stale with the time they were read; but the group may
	// have read on before the primary went, so its bound, and the flow's
	// worst, are unknown.
	primary.Close()
	m.Now = func() time.Time { return now.Add(time.Minute) }
	m.Refresh(ctx)
	s := m.Snapshot(f.Name)
	if s.Source.OK {
		t.Fatal("the primary still answers")
	}
	i := slices.IndexFunc(s.Groups.Groups, func(g model.GroupQuality) bool { return g.Group == "billing" })
	if i < 0 {
		t.Fatalf("no billing in the outage: %+v", s.Groups)
	}
	if b := s.Groups.Groups[i]; b.Reread != nil || b.RereadKnown != 19 || !b.OffsetsStale || !b.OffsetsAt.Equal(readAt) {
		t.Fatalf("billing in the outage = %+v", b)
	}
	if _, bound, ok := s.Groups.Worst(); !ok || bound != nil {
		t.Fatalf("worst in the outage = %v %v", bound, ok)
	}

	// Retention in DR passes where billing's events-0 would resume (61):
	// once DR's log starts are read, that partition is not translated.
	for range 70 {
		produce(t, dcl, &kgo.Record{Topic: "events", Partition: 0, Value: []byte{1}})
	}
	if _, err := kadm.NewClient(dcl).DeleteRecords(ctx, kadm.Offsets{"events": {0: {At: 65}}}); err != nil {
		t.Fatal(err)
	}
	fm := m.flowList()[0]
	if err := m.readDRStarts(ctx, fm, m.Snapshot(f.Name)); err != nil {
		t.Fatal(err)
	}
	m.Refresh(ctx)
	s = m.Snapshot(f.Name)
	i = slices.IndexFunc(s.Groups.Groups, func(g model.GroupQuality) bool { return g.Group == "billing" })
	b := s.Groups.Groups[i]
	if b0 := b.Partitions[0]; b0.Reread != nil || !strings.HasPrefix(b0.Problem, "deleted in DR: it would resume at DR offset 61, below DR's log start 65") ||
		b.Untranslated != 1 || b.Reread != nil {
		t.Fatalf("billing after DR's retention = %+v", b)
	}
	if b1 := b.Partitions[1]; b1.Reread == nil || b1.Problem != "" {
		t.Fatalf("billing events-1, not deleted in DR = %+v", b1)
	}
}

func commitGroup(t *testing.T, cl *kgo.Client, group string, offs map[model.TP]int64) {
	t.Helper()
	o := kadm.Offsets{}
	for tp, at := range offs {
		o.Add(kadm.Offset{Topic: tp.Topic, Partition: tp.Partition, At: at, LeaderEpoch: -1})
	}
	if err := kadm.NewClient(cl).CommitAllOffsets(context.Background(), group, o); err != nil {
		t.Fatal(err)
	}
}
