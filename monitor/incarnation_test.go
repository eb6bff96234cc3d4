package monitor

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// The offset-syncs topic restarts at offset 0 when it is recreated or when
// offset-syncs.topic.location moves it to the other cluster. Its syncs must
// be stored and used, not dropped as "already seen" log offsets.
func TestNewSyncsTopicIncarnationIsIngested(t *testing.T) {
	t.Parallel() // clusters and a store of its own; it waits on ingestion
	ctx := context.Background()
	primary, pcl := newCluster(t, "primary", "events")
	dr, dcl := newCluster(t, "dr", "events")
	cfg := testConfig(t, primary, dr)
	cfg.Flows[0].OffsetSyncsLocation = "source"
	srcTopics := flowstate.TopicsOf(cfg.Flows[0])
	sync := func(topic string, up int64) *kgo.Record {
		s := model.OffsetSync{Topic: "events", Partition: 0, Upstream: up, Downstream: up}
		return &kgo.Record{Topic: topic, Key: mm2.EncodeKey(s), Value: mm2.EncodeValue(s)}
	}
	padm, dadm := kadm.NewClient(pcl), kadm.NewClient(dcl)
	if _, err := padm.CreateTopic(ctx, 1, 1, nil, srcTopics.OffsetSyncs); err != nil {
		t.Fatal(err)
	}
	for i := range int64(10) {
		produce(t, pcl, sync(srcTopics.OffsetSyncs, i*100))
	}
	store, err := storage.Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	run := func(m *Monitor) func() {
		rctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		m.flows[0].ingester.Recheck = 200 * time.Millisecond
		go func() { defer close(done); m.flows[0].ingester.Run(rctx) }()
		return func() { stop(); <-done; m.Close() }
	}
	latest := func(m *Monitor) int64 {
		return m.flows[0].state.Syncs.Latest()[model.TP{Topic: "events", Partition: 0}].Upstream
	}

	m, err := NewMonitor(ctx, cfg, store, log)
	if err != nil {
		t.Fatal(err)
	}
	stop := run(m)
	waitFor(t, "the 10 syncs of the source-side topic", func() bool { return latest(m) == 900 })

	// Recreated in place: same name, new topic id, log back at 0.
	if _, err := padm.DeleteTopics(ctx, srcTopics.OffsetSyncs); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the topic to be gone", func() bool {
		td, err := padm.ListTopics(ctx, srcTopics.OffsetSyncs)
		return err == nil && td[srcTopics.OffsetSyncs].Err != nil
	})
	waitFor(t, "the topic to be created again", func() bool {
		_, err := padm.CreateTopic(ctx, 1, 1, nil, srcTopics.OffsetSyncs)
		return err == nil
	})
	fresh, err := kgo.NewClient(kgo.SeedBrokers(primary.ListenAddrs()...)) // pcl still knows the old topic id
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	for i := range int64(3) {
		produce(t, fresh, sync(srcTopics.OffsetSyncs, 1000+i*100))
	}
	waitFor(t, "the recreated topic's syncs (log offsets 0-2, like old ones)", func() bool { return latest(m) == 1200 })
	stop()

	// offset-syncs.topic.location switched to target: another topic, its log
	// also starts at 0.
	// MM2 creates the new topic after the console started.
	cfg.Flows[0].OffsetSyncsLocation = "target"
	tgtTopics := flowstate.TopicsOf(cfg.Flows[0])
	if _, err := dadm.CreateTopic(ctx, 1, 1, nil, tgtTopics.Checkpoints); err != nil {
		t.Fatal(err)
	}
	m, err = NewMonitor(ctx, cfg, store, log)
	if err != nil {
		t.Fatal(err)
	}
	if got := latest(m); got != 1200 {
		t.Fatalf("history after restart: newest upstream %d, want 1200", got)
	}
	stop = run(m)
	time.Sleep(500 * time.Millisecond) // let the ingester read the layout without the new topic
	if _, err := dadm.CreateTopic(ctx, 1, 1, nil, tgtTopics.OffsetSyncs); err != nil {
		t.Fatal(err)
	}
	for i := range int64(5) {
		produce(t, dcl, sync(tgtTopics.OffsetSyncs, 2000+i*100))
	}
	waitFor(t, "the target-side topic's syncs", func() bool { return latest(m) == 2400 })
	stop()
	if n, _ := store.CountSyncs(ctx, "primary->dr"); n != 18 {
		t.Fatalf("stored %d syncs, want 10 + 3 + 5", n)
	}
	if tl := m.flows[0].state.Syncs.Translate(model.TP{Topic: "events", Partition: 0}, 2400); tl.Method != mm2.MethodExact || tl.Offset != 2400 {
		t.Fatalf("translation through the newest incarnation: %+v", tl)
	}
	incs, err := store.Incarnations(ctx, "primary->dr")
	if err != nil || len(incs) != 4 {
		t.Fatalf("incarnations %+v %v", incs, err)
	}
}
