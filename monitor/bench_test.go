package monitor

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// BenchmarkLagRefresh10kPartitions measures one lag refresh of a flow with
// 100 topics x 100 partitions on 3-broker kfake clusters: half the
// partitions caught up, half one record behind, DR's records past each
// partition's sync counted. It reports the ListOffsets
// requests each source broker received per refresh (budget: 2). "steady"
// reuses the timestamps of positions that did not move; "cold-timestamps"
// fetches the first unreplicated record of all 5,000 lagging partitions.
func BenchmarkLagRefresh10kPartitions(b *testing.B) {
	const topics, parts = 100, 100
	names := make([]string, topics)
	for i := range names {
		names[i] = fmt.Sprintf("events-%03d", i)
	}
	src := kfake.MustCluster(kfake.NumBrokers(3), kfake.ClusterID("primary"), kfake.SeedTopics(parts, names...))
	defer src.Close()
	dst := kfake.MustCluster(kfake.NumBrokers(3), kfake.ClusterID("dr"), kfake.SeedTopics(parts, names...))
	defer dst.Close()
	newClient := func(c *kfake.Cluster) *kgo.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.ProducerBatchCompression(kgo.SnappyCompression()))
		if err != nil {
			b.Fatal(err)
		}
		return cl
	}
	scl, dcl := newClient(src), newClient(dst)
	defer scl.Close()
	defer dcl.Close()
	var srcRecs, dstRecs []*kgo.Record
	state := NewMirrorState()
	var syncs []model.OffsetSync
	for i, t := range names {
		for p := range int32(parts) {
			// Three records, all in DR or all but the last; the sync is of
			// the first, so DR's records past it are counted (and kept
			// while DR's end stays), as with MM2, whose syncs trail.
			copied := 2 + (i+int(p)+1)%2
			for k := range 3 {
				srcRecs = append(srcRecs, &kgo.Record{Topic: t, Partition: p, Value: []byte("v"), Timestamp: time.Now().Add(-time.Minute)})
				if k < copied {
					dstRecs = append(dstRecs, &kgo.Record{Topic: t, Partition: p, Value: []byte("v")})
				}
			}
			syncs = append(syncs, model.OffsetSync{Topic: t, Partition: p, LogOffset: int64(len(syncs))})
		}
	}
	ctx := context.Background()
	if err := scl.ProduceSync(ctx, srcRecs...).FirstErr(); err != nil {
		b.Fatal(err)
	}
	if err := dcl.ProduceSync(ctx, dstRecs...).FirstErr(); err != nil {
		b.Fatal(err)
	}
	state.apply(storage.Batch{Syncs: syncs})

	var mu sync.Mutex
	listOffsets := map[int32]int{}
	src.ControlKey(int16(kmsg.ListOffsets), func(kmsg.Request) (kmsg.Response, error, bool) {
		mu.Lock()
		listOffsets[src.CurrentNode()]++
		mu.Unlock()
		src.KeepControl()
		return nil, nil, false // observe only
	})
	flow := &config.Flow{Name: "bench", Source: "primary", Target: "dr", SourceAlias: "primary", TargetAlias: "dr",
		ReplicationPolicy: "identity", OffsetSyncsLocation: "target", Topics: config.Topics{Include: []string{"events-.*"}}}
	cfg := &config.Config{Clusters: map[string]*config.Cluster{"primary": {Bootstrap: src.ListenAddrs()}, "dr": {Bootstrap: dst.ListenAddrs()}},
		Flows: []*config.Flow{flow}}
	if err := cfg.Normalize("bench"); err != nil {
		b.Fatal(err)
	}
	r := &LagReader{Flow: flow, Topics: flowstate.TopicsOf(flow), Source: scl, Target: dcl}
	check := func(rd Reading) {
		if rd.SourceErr != nil || rd.TargetErr != nil || len(rd.Partitions) != topics*parts {
			b.Fatalf("refresh: %v %v, %d partitions", rd.SourceErr, rd.TargetErr, len(rd.Partitions))
		}
		lagging := 0
		for _, p := range rd.Partitions {
			if !p.LagMs.Known || !p.LagMessages.Known {
				b.Fatalf("unknown lag for %s-%d", p.Topic, p.Partition)
			}
			if p.LagMessages.V > 0 {
				lagging++
			}
		}
		if lagging != topics*parts/2 {
			b.Fatalf("%d lagging partitions, want %d", lagging, topics*parts/2)
		}
	}
	check(r.Read(ctx, state, time.Now())) // connections, metadata
	run := func(b *testing.B, fresh bool) {
		mu.Lock()
		clear(listOffsets)
		mu.Unlock()
		for b.Loop() {
			if fresh {
				// No timestamp cache: every lagging partition is fetched.
				r = &LagReader{Flow: flow, Topics: flowstate.TopicsOf(flow), Source: scl, Target: dcl}
			}
			check(r.Read(ctx, state, time.Now()))
		}
		b.StopTimer()
		mu.Lock()
		maxPerBroker := 0
		for _, n := range listOffsets {
			maxPerBroker = max(maxPerBroker, n)
		}
		mu.Unlock()
		b.ReportMetric(float64(maxPerBroker)/float64(b.N), "listoffsets/broker/refresh")
	}
	b.Run("steady", func(b *testing.B) { run(b, false) })
	b.Run("cold-timestamps", func(b *testing.B) { run(b, true) })
}

// BenchmarkIngestSyncs measures ingestion end to end: 100,000 MM2 offset
// syncs (1,000 partitions) consumed from a kfake cluster, decoded and
// stored in SQLite with their resume positions.
func BenchmarkIngestSyncs(b *testing.B) {
	const n = 100_000
	dst := kfake.MustCluster(kfake.NumBrokers(1), kfake.ClusterID("dr"), kfake.SeedTopics(1, "mm2-offset-syncs.primary.internal"))
	defer dst.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(dst.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	recs := make([]*kgo.Record, 0, n)
	for i := range int64(n) {
		s := model.OffsetSync{Topic: "events", Partition: int32(i % 1000), Upstream: i * 2, Downstream: i}
		recs = append(recs, &kgo.Record{Topic: "mm2-offset-syncs.primary.internal", Key: mm2.EncodeKey(s), Value: mm2.EncodeValue(s)})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		b.Fatal(err)
	}
	flow := &config.Flow{Name: "bench", SourceAlias: "primary", TargetAlias: "dr", ReplicationPolicy: "identity", OffsetSyncsLocation: "target"}
	topics := flowstate.TopicsOf(flow)
	topics.Checkpoints, topics.Heartbeats = "none-1", "none-2"
	for b.Loop() {
		b.StopTimer()
		store, err := storage.Open(b.TempDir() + "/db")
		if err != nil {
			b.Fatal(err)
		}
		runCtx, cancel := context.WithCancel(ctx)
		in := &Ingester{Flow: flow, Topics: topics, Store: store, State: NewMirrorState(), Log: discardLog(),
			TargetOpts: []kgo.Opt{kgo.SeedBrokers(dst.ListenAddrs()...)}}
		done := make(chan struct{})
		b.StartTimer()
		go func() { defer close(done); in.Run(runCtx) }()
		for in.State.Syncs.Len() < n {
			time.Sleep(time.Millisecond)
		}
		b.StopTimer()
		cancel()
		<-done
		if c, _ := store.CountSyncs(ctx, "bench"); c != n {
			b.Fatalf("stored %d syncs, want %d", c, n)
		}
		store.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "syncs/s")
}

func discardLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// BenchmarkLoadSyncIndex measures building the index from 1,000,000 stored
// syncs: what a console (or `translate --config`) pays at start-up.
func BenchmarkLoadSyncIndex(b *testing.B) {
	store, err := storage.Open(b.TempDir() + "/db")
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	const n = 1_000_000
	batch := make([]model.OffsetSync, 0, 10_000)
	for i := range int64(n) {
		batch = append(batch, model.OffsetSync{Topic: "events", Partition: int32(i % 10_000), Upstream: i, Downstream: i, LogOffset: i})
		if len(batch) == cap(batch) {
			if err := store.Apply(ctx, storage.Batch{Flow: "f", Topic: "s", NextOffset: i + 1, Syncs: batch}); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	b.ResetTimer()
	for b.Loop() {
		x := mm2.NewSyncIndex()
		if err := LoadSyncIndex(ctx, x, store, "f"); err != nil || x.Len() != n {
			b.Fatalf("loaded %d, %v", x.Len(), err)
		}
	}
}
