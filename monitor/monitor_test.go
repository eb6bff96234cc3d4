package monitor

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/kafka/kafkatest"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// The cluster helpers are shared with package kafka's tests.
var (
	produce    = kafkatest.Produce
	newCluster = kafkatest.NewCluster
	waitFor    = kafkatest.WaitFor
)

func testConfig(t *testing.T, primary, dr *kfake.Cluster) *config.Config {
	t.Helper()
	c := &config.Config{
		Clusters: map[string]*config.Cluster{"primary": {Bootstrap: primary.ListenAddrs()}, "dr": {Bootstrap: dr.ListenAddrs()}},
		Flows: []*config.Flow{{Source: "primary", Target: "dr", ReplicationPolicy: "identity", OffsetSyncsLocation: "target",
			ConnectOffsetsTopic: "mm2-offsets.primary.internal", Topics: config.Topics{Include: []string{"events"}}}},
		RefreshInterval: config.Duration(time.Second),
	}
	if err := c.Normalize("test"); err != nil {
		t.Fatal(err)
	}
	return c
}

// A hand-built MM2 picture on two kfake clusters: the console must ingest it
// and compute the lag this picture implies.
func TestMonitorComputesLagFromMM2Records(t *testing.T) {
	t.Parallel() // clusters and a store of its own; it waits on ingestion
	ctx := context.Background()
	primary, pcl := newCluster(t, "primary", "events")
	dr, dcl := newCluster(t, "dr", "events")
	now := time.Now()
	base := now.Add(-100 * time.Second).Truncate(time.Millisecond)
	for i := range 100 { // events-0: 100 records one second apart
		produce(t, pcl, &kgo.Record{Topic: "events", Partition: 0, Value: []byte{byte(i)}, Timestamp: base.Add(time.Duration(i) * time.Second)})
	}
	for i := range 50 {
		produce(t, pcl, &kgo.Record{Topic: "events", Partition: 1, Value: []byte{byte(i)}, Timestamp: base})
	}
	for i := range 80 { // DR holds 80 of events-0 and all of events-1
		produce(t, dcl, &kgo.Record{Topic: "events", Partition: 0, Value: []byte{byte(i)}})
	}
	for i := range 50 {
		produce(t, dcl, &kgo.Record{Topic: "events", Partition: 1, Value: []byte{byte(i)}})
	}
	cfg := testConfig(t, primary, dr)
	ft := flowstate.TopicsOf(cfg.Flows[0])
	if ft.OffsetSyncs != "mm2-offset-syncs.primary.internal" || ft.Heartbeats != "primary.heartbeats" || ft.Checkpoints != "primary.checkpoints.internal" {
		t.Fatalf("derived topics = %+v", ft)
	}
	adm := kadm.NewClient(dcl)
	for _, topic := range []string{ft.OffsetSyncs, ft.Heartbeats, ft.Checkpoints, ft.ConnectOffsets} {
		if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	sync := func(p int32, up, down int64) *kgo.Record {
		s := model.OffsetSync{Topic: "events", Partition: p, Upstream: up, Downstream: down}
		return &kgo.Record{Topic: ft.OffsetSyncs, Key: mm2.EncodeKey(s), Value: mm2.EncodeValue(s)}
	}
	produce(t, dcl, sync(0, 0, 0), sync(1, 0, 0), sync(0, 60, 60), sync(1, 49, 49))
	hb := model.Heartbeat{SourceAlias: "dr", TargetAlias: "primary", EmittedMs: now.Add(-2 * time.Second).UnixMilli()}
	produce(t, dcl, &kgo.Record{Topic: ft.Heartbeats, Key: mm2.EncodeKey(hb), Value: mm2.EncodeValue(hb)})
	co := func(p int32, last int64) *kgo.Record {
		o := model.ConnectOffset{Connector: "MirrorSourceConnector", Cluster: "primary", Topic: "events", Partition: p, LastOffset: last}
		return &kgo.Record{Topic: ft.ConnectOffsets, Key: mm2.EncodeKey(o), Value: mm2.EncodeValue(o)}
	}
	produce(t, dcl, co(0, 70), co(1, 49))
	cp := model.Checkpoint{Group: "g", Topic: "events", Partition: 0, Upstream: 60, Downstream: 60}
	produce(t, dcl, &kgo.Record{Topic: ft.Checkpoints, Key: mm2.EncodeKey(cp), Value: mm2.EncodeValue(cp)},
		&kgo.Record{Topic: ft.Checkpoints, Key: []byte{0, 9}, Value: []byte{1}}) // garbage must be counted, not fatal

	dbPath := filepath.Join(t.TempDir(), "db")
	m, store := newTestMonitor(t, cfg, dbPath)
	stop := runIngester(m)
	waitFor(t, "ingestion of 4 syncs, heartbeat, connect offsets", func() bool {
		n, _ := store.CountSyncs(ctx, "primary->dr")
		st := m.flows[0].state
		_, c0 := st.connectOffset(model.TP{Topic: "events", Partition: 0})
		_, c1 := st.connectOffset(model.TP{Topic: "events", Partition: 1})
		return n == 4 && st.snapshot().heartbeat != nil && c0 && c1
	})
	stop()

	m.Now = func() time.Time { return now }
	m.Refresh(ctx)
	s := m.Snapshot("primary->dr")
	if len(s.Partitions) != 2 {
		t.Fatalf("partitions = %+v", s.Partitions)
	}
	p0, p1 := s.Partitions[0], s.Partitions[1]
	// events-0: Connect says 71, the sync 60->60 plus 20 more DR records says 80.
	if p0.Replicated.V != 80 || p0.Method != model.PositionEstimate || p0.LagMessages.V != 20 {
		t.Fatalf("events-0 = %s", describe(p0))
	}
	// The first unreplicated record is offset 80, written at base+80s.
	if want := now.Sub(base.Add(80 * time.Second)).Milliseconds(); !p0.LagMs.Known || p0.LagMs.V != want {
		t.Fatalf("events-0 lag ms = %v, want %d", p0.LagMs, want)
	}
	if p1.Replicated.V != 50 || p1.LagMessages.V != 0 || p1.LagMs.V != 0 {
		t.Fatalf("events-1 = %s", describe(p1))
	}
	if *s.RPOMs != p0.LagMs.V || *s.TotalLagMessages != 20 || s.Status != model.FlowStatusOK || s.HeartbeatAge.Round(time.Second) != 2*time.Second {
		t.Fatalf("flow: rpo %v total %v status %s (%s) hb %v", *s.RPOMs, *s.TotalLagMessages, s.Status, s.Reason, s.HeartbeatAge)
	}
	if st := ingestStats(s, ft.Checkpoints); st.DecodeErrors != 1 || st.Records != 2 {
		t.Fatalf("checkpoint ingest stats = %+v", st)
	}
	if err := m.Flush(ctx); err != nil { // the sample writer's rows
		t.Fatal(err)
	}
	// The saved minute: a row for the topic, one for the lagging events-0,
	// none for the caught-up events-1, which reads as caught up.
	if tm, err := store.TopicMinutes(ctx, "primary->dr", "events", 0); err != nil || len(tm) != 1 || tm[0].Partitions != 2 ||
		tm[0].Lagging != 1 || *tm[0].TotalLagMessages != 20 || *tm[0].MaxLagMs != p0.LagMs.V || tm[0].MaxLagAtLeast {
		t.Fatalf("topic minute %+v %v", tm, err)
	}
	if xs, _ := store.PartitionSamples(ctx, "primary->dr", "events", 0, 0); len(xs) != 1 || xs[0].CaughtUp || *xs[0].LagMessages != 20 {
		t.Fatalf("events-0 saved %+v", xs)
	}
	if xs, _ := store.PartitionSamples(ctx, "primary->dr", "events", 1, 0); len(xs) != 1 || !xs[0].CaughtUp || xs[0].SourceEnd != nil {
		t.Fatalf("events-1 (caught up) must have no row of its own: %+v", xs)
	}
	if xs, _ := store.FlowSamples(ctx, "primary->dr", 0); len(xs) != 1 || *xs[0].RPOMs != *s.RPOMs || xs[0].RPOAtLeast ||
		*xs[0].MaxLagMessages != 20 || *xs[0].LagMessages != 20 {
		t.Fatalf("flow sample %+v", xs)
	}

	// Retention deletes records MM2 may not have copied: suspected, not yet
	// a loss (MM2 may have read them already; loss_test.go judges it).
	if _, err := kadm.NewClient(pcl).DeleteRecords(ctx, kadm.Offsets{"events": {0: {At: 90}}}); err != nil {
		t.Fatal(err)
	}
	m.Refresh(ctx)
	fresh := m.Snapshot("primary->dr")
	if s := fresh; !s.Partitions[0].LossSuspected || s.Partitions[0].DataLost || s.Partitions[0].SourceStart.V != 90 ||
		s.LossSuspected != 1 || s.DataLost != 0 || s.FiguresStale {
		t.Fatalf("after DeleteRecords: %s, stale %v", describe(s.Partitions[0]), s.FiguresStale)
	}

	// The primary dies: last known values stay, marked stale; the heartbeat
	// ages past the timeout and the flow is BROKEN.
	primary.Close()
	m.Now = func() time.Time { return now.Add(40 * time.Second) }
	m.Refresh(ctx)
	s = m.Snapshot("primary->dr")
	if s.Source.OK || s.Source.Err == "" || !s.Target.OK {
		t.Fatalf("reachability source %+v target %+v", s.Source, s.Target)
	}
	if !s.FiguresStale || s.Partitions[0].LagMessages.V != 20 || s.Status != model.FlowStatusBroken {
		t.Fatalf("after primary loss: %s stale %v status %s", describe(s.Partitions[0]), s.FiguresStale, s.Status)
	}
	// The stale snapshot shares the table of the last fresh one, which
	// its readers still see as it was: the flag is the snapshot's.
	if &s.Partitions[0] != &fresh.Partitions[0] || fresh.FiguresStale {
		t.Fatalf("first refresh of the outage: shared %v, the fresh snapshot stale %v", &s.Partitions[0] == &fresh.Partitions[0], fresh.FiguresStale)
	}
	// The outage's next refresh shares it too, the same figures.
	m.Now = func() time.Time { return now.Add(45 * time.Second) }
	m.Refresh(ctx)
	if s2 := m.Snapshot("primary->dr"); s2 == s || &s2.Partitions[0] != &s.Partitions[0] || !s2.FiguresStale ||
		s2.Partitions[0].LagMessages.V != 20 || s2.Status != model.FlowStatusBroken {
		t.Fatalf("second refresh of the outage: shared %v, %s status %s", &s2.Partitions[0] == &s.Partitions[0], describe(s2.Partitions[0]), s2.Status)
	}

	// A restarted console shows the saved figures, stale, before any refresh.
	if err := m.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	m2, err := NewMonitor(ctx, cfg, store, discardLog())
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	s = m2.Snapshot("primary->dr")
	if len(s.Partitions) != 2 || !s.FiguresStale || !s.Partitions[0].LagMessages.Known || s.Partitions[0].LagMessages.V != 20 {
		t.Fatalf("after restart: %+v", s.Partitions)
	}

	// The restarted console resumes ingestion where the first one stopped:
	// two new syncs arrive, none is lost and none of the four is read twice.
	produce(t, dcl, sync(0, 80, 80), sync(1, 50, 50))
	stop = runIngester(m2)
	waitFor(t, "ingestion of the 2 new syncs after the restart", func() bool {
		n, _ := store.CountSyncs(ctx, "primary->dr")
		return n == 6
	})
	stop()
	if n := m2.flows[0].state.Syncs.Len(); n != 6 {
		t.Fatalf("the restarted console's index holds %d syncs, want 6 (4 loaded + 2 new)", n)
	}

	// Retention, a month on: old syncs are thinned in SQLite and in the
	// index alike, and the newest of each partition stays.
	m2.Now = func() time.Time { return now.Add(30 * 24 * time.Hour) }
	m2.ApplyRetention(ctx)
	stored, _ := store.CountSyncs(ctx, "primary->dr")
	if kept := int64(m2.flows[0].state.Syncs.Len()); stored != kept || kept > 6 {
		t.Fatalf("after retention: %d stored, %d in the index", stored, kept)
	}
	t.Logf("retention kept %d of 6 syncs", stored)
	if tl := m2.flows[0].state.Syncs.Translate(model.TP{Topic: "events", Partition: 0}, 80); tl.Method != mm2.MethodExact || tl.Offset != 80 {
		t.Fatalf("newest sync of events-0 gone after retention: %+v", tl)
	}
	if tl := m2.flows[0].state.Syncs.Translate(model.TP{Topic: "events", Partition: 1}, 50); tl.Method != mm2.MethodExact || tl.Offset != 50 {
		t.Fatalf("newest sync of events-1 gone after retention: %+v", tl)
	}
}

func ingestStats(s *flowstate.FlowSnapshot, topic string) model.IngestStats {
	for _, st := range s.Ingest {
		if st.Topic == topic {
			return st
		}
	}
	return model.IngestStats{}
}

func describe(p model.PartitionLag) string {
	f := func(v *int64) any {
		if v == nil {
			return "nil"
		}
		return *v
	}
	return slog.GroupValue(slog.Any("start", f(p.SourceStart.Ptr())), slog.Any("end", f(p.SourceEnd.Ptr())), slog.Any("target_end", f(p.TargetEnd.Ptr())),
		slog.Any("replicated", f(p.Replicated.Ptr())), slog.String("method", p.Method.String()), slog.Any("lag", f(p.LagMessages.Ptr())),
		slog.Any("lag_ms", f(p.LagMs.Ptr())), slog.Bool("lost", p.DataLost)).String()
}

// newTestMonitor opens a store at dbPath and a monitor for cfg, both
// closed when the test ends.
func newTestMonitor(t *testing.T, cfg *config.Config, dbPath string) (*Monitor, *storage.Store) {
	t.Helper()
	store, err := storage.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	m, err := NewMonitor(context.Background(), cfg, store, discardLog())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m, store
}

// runIngester runs m's first flow's ingester until stop returns.
func runIngester(m *Monitor) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); m.flows[0].ingester.Run(ctx) }()
	return func() { cancel(); <-done }
}
