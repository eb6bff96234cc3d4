package monitor

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
)

// A failback's reverse flow dr -> primary, watched at run time: its
// Connect positions are read from DR (the forward workers' cluster), its
// heartbeats from the primary's dr.heartbeats, and neither flow counts the
// other's heartbeats topic as data at risk. Unwatched, it is gone from the
// pages and its ingestion stops; watched again, it starts from its stored
// history.
func TestSetWatchedReverseFlow(t *testing.T) {
	t.Parallel() // clusters and a store of its own; it waits on ingestion
	ctx := context.Background()
	primary, pcl := newCluster(t, "primary", "events")
	dr, dcl := newCluster(t, "dr", "events")
	const connectTopic = "connect-offsets"
	for _, c := range []struct {
		cl     *kgo.Client
		topics []string
	}{{dcl, []string{connectTopic, "primary.heartbeats", "heartbeats"}}, {pcl, []string{"dr.heartbeats", "mm2-offset-syncs.dr.internal", "dr.checkpoints.internal"}}} {
		for _, topic := range c.topics {
			if _, err := kadm.NewClient(c.cl).CreateTopic(ctx, 1, 1, nil, topic); err != nil {
				t.Fatal(err)
			}
		}
	}
	now := time.Now()
	for i := range 6 { // the primary holds 6 of DR's 10 records
		produce(t, pcl, &kgo.Record{Topic: "events", Value: []byte{byte(i)}})
	}
	for i := range 10 {
		produce(t, dcl, &kgo.Record{Topic: "events", Value: []byte{byte(i)}, Timestamp: now.Add(-time.Duration(10-i) * time.Second)})
	}
	produce(t, pcl, &kgo.Record{Topic: "events", Partition: 1})
	produce(t, dcl, &kgo.Record{Topic: "events", Partition: 1})
	hbOld := model.Heartbeat{SourceAlias: "primary", TargetAlias: "dr", EmittedMs: now.Add(-time.Hour).UnixMilli()}
	produce(t, dcl, &kgo.Record{Topic: "primary.heartbeats", Key: mm2.EncodeKey(hbOld), Value: mm2.EncodeValue(hbOld)})
	hb := model.Heartbeat{SourceAlias: "dr", TargetAlias: "primary", EmittedMs: now.Add(-time.Second).UnixMilli()}
	produce(t, pcl, &kgo.Record{Topic: "dr.heartbeats", Key: mm2.EncodeKey(hb), Value: mm2.EncodeValue(hb)})
	co := func(cluster string, p int32, last int64) *kgo.Record {
		o := model.ConnectOffset{Connector: "dr-to-primary-MirrorSourceConnector", Cluster: cluster, Topic: "events", Partition: p, LastOffset: last}
		return &kgo.Record{Topic: connectTopic, Key: mm2.EncodeKey(o), Value: mm2.EncodeValue(o)}
	}
	// The forward source's position is not the reverse one's.
	produce(t, dcl, co("primary", 0, 2), co("dr", 0, 5), co("dr", 1, 0))

	cfg := testConfig(t, primary, dr)
	cfg.Flows[0].Topics.Include = nil // every topic: the heartbeats topics must still not count
	if err := cfg.Normalize("test"); err != nil {
		t.Fatal(err)
	}
	rev := &config.Flow{Name: "primary->dr~reverse", ReverseOf: "primary->dr", Kind: "mm2", Source: "dr", Target: "primary",
		SourceAlias: "dr", TargetAlias: "primary", ReplicationPolicy: "identity", OffsetSyncsLocation: "target",
		ConnectOffsetsTopic: connectTopic, Topics: cfg.Flows[0].Topics}
	m, store := newTestMonitor(t, cfg, filepath.Join(t.TempDir(), "db"))
	runCtx, cancel := context.WithCancel(ctx)
	ran := make(chan struct{})
	go func() { defer close(ran); m.Run(runCtx) }()
	t.Cleanup(func() { cancel(); <-ran })

	if err := m.SetWatched(ctx, []*config.Flow{{Name: "primary->dr"}}); err == nil {
		t.Fatal("watching a configured flow's name: no error")
	}
	if err := m.SetWatched(ctx, []*config.Flow{rev}); err != nil {
		t.Fatal(err)
	}
	if got := m.Watched(); !slices.Equal(got, []string{rev.Name}) {
		t.Fatalf("Watched = %v", got)
	}
	var s *flowstate.FlowSnapshot
	waitFor(t, "the reverse flow refreshed with its Connect position and heartbeat", func() bool {
		s = m.Snapshot(rev.Name)
		return s != nil && len(s.Partitions) == 2 && s.Partitions[0].LagMessages.Known && s.HeartbeatAge != nil
	})
	p := s.Partitions[0]
	if p.Partition != 0 {
		p = s.Partitions[1]
	}
	if p.Topic.String() != "events" || p.Replicated.V != 6 || p.LagMessages.V != 4 || !p.LagMs.Known || p.LagMs.V < 4000 {
		t.Fatalf("reverse events-0 = %s; want replicated 6 (Connect's dr position 5, +1), lag 4 records, >= 4 s", describe(p))
	}
	if age := s.HeartbeatAge.Round(time.Second); age > 5*time.Second {
		t.Fatalf("reverse heartbeat age %v: not the primary's dr.heartbeats record", age)
	}
	snaps := m.Snapshots()
	if len(snaps) != 2 || snaps[1].Flow.Name != rev.Name {
		t.Fatalf("snapshots: %d, last %q; want the reverse flow after the configured one", len(snaps), snaps[len(snaps)-1].Flow.Name)
	}
	// Neither flow's partitions hold a heartbeats topic, though both are
	// visible and the forward filter takes every topic.
	waitFor(t, "the forward flow refreshed", func() bool { return len(m.Snapshot("primary->dr").Partitions) > 0 })
	for _, s := range m.Snapshots() {
		for _, p := range s.Partitions {
			if p.Topic.String() != "events" {
				t.Errorf("flow %s watches %s-%d: only events is data", s.Flow.Name, p.Topic, p.Partition)
			}
		}
	}
	if err := m.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	// Unwatched: gone, and its ingestion stops.
	if err := m.SetWatched(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if m.Snapshot(rev.Name) != nil || len(m.Snapshots()) != 1 || len(m.Watched()) != 0 {
		t.Fatalf("after unwatching: snapshot %v, %d snapshots, watched %v", m.Snapshot(rev.Name), len(m.Snapshots()), m.Watched())
	}
	produce(t, dcl, co("dr", 0, 7))
	time.Sleep(2 * time.Second) // the ingester would store it within ~1 s
	if cos, err := store.ConnectOffsets(ctx, rev.Name); err != nil || len(cos) != 2 || cos[0].LastOffset != 5 {
		t.Fatalf("stored reverse positions after unwatching = %+v, %v; want the last one read while watched (5)", cos, err)
	}

	// Watched again: from its stored figures, then the position it missed.
	if err := m.SetWatched(ctx, []*config.Flow{rev}); err != nil {
		t.Fatal(err)
	}
	if s := m.Snapshot(rev.Name); s == nil || len(s.Partitions) != 2 || !s.FiguresStale || s.Partitions[0].LagMessages.V != 4 {
		t.Fatalf("re-watched before a refresh: %+v; want the stored figures, stale", s)
	}
	waitFor(t, "the missed position ingested", func() bool {
		s := m.Snapshot(rev.Name)
		return s != nil && len(s.Partitions) == 2 && !s.FiguresStale && s.Partitions[0].LagMessages.Known && s.Partitions[0].LagMessages.V == 2
	})

	// After Run ends no ingester starts.
	cancel()
	<-ran
	if err := m.SetWatched(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := m.SetWatched(ctx, []*config.Flow{rev}); err != nil {
		t.Fatal(err)
	}
	for _, fm := range m.flowList() {
		if fm.stop != nil && fm.watched {
			t.Fatalf("an ingester started after Run ended")
		}
	}
}

// Only the bookkeeping topics that live on a flow's source are left out of
// its data: a source topic that shares a name with one on the target
// (a forward flow's Connect offsets topic) is still data at risk.
func TestOwnTopicsOnSourceOnly(t *testing.T) {
	fwd := &config.Flow{SourceAlias: "primary", TargetAlias: "dr", ReplicationPolicy: "identity", OffsetSyncsLocation: "target", ConnectOffsetsTopic: "connect-offsets"}
	rev := &config.Flow{SourceAlias: "dr", TargetAlias: "primary", ReplicationPolicy: "identity", ConnectOffsetsTopic: "connect-offsets", ReverseOf: "x"}
	ft, rt := flowstate.TopicsOf(fwd), flowstate.TopicsOf(rev)
	for _, c := range []struct {
		t     flowstate.FlowTopics
		topic string
		own   bool
	}{
		{ft, "connect-offsets", false}, // on the target: a source topic of that name is data
		{ft, ft.OffsetSyncs, false},
		{ft, ft.Checkpoints, false},
		{rt, "connect-offsets", true},               // the reverse flow's positions, on its source
		{rt, rt.OffsetSyncs, true},                  // MM2's default location: the source
		{rt, "mm2-offset-syncs.dr.internal", false}, // another flow's
	} {
		if got := c.t.OwnOnSource(c.topic); got != c.own {
			t.Errorf("%+v ownOnSource(%q) = %v, want %v", c.t, c.topic, got, c.own)
		}
	}
}
