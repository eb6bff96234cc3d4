package storage_test

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/storage"
)

func openStore(t testing.TB) (*storage.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "drconsole.db")
	s, err := storage.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func TestMigrateOnceAndReopen(t *testing.T) {
	s, path := openStore(t)
	ctx := context.Background()
	v, err := s.SchemaVersion(ctx)
	if err != nil || v != 1 {
		t.Fatalf("schema version = %d, %v", v, err)
	}
	if err := s.Apply(ctx, storage.Batch{Flow: "f", Topic: "syncs", NextOffset: 1,
		Syncs: []storage.Sync{{Topic: "events", Partition: 0, Upstream: 1, Downstream: 1, LogOffset: 0}}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2, err := storage.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	n, err := s2.CountSyncs(ctx, "f")
	if err != nil || n != 1 {
		t.Fatalf("after reopen: %d syncs, %v", n, err)
	}
}

func TestApplyIsAtomicAndReplaySafe(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	b := storage.Batch{
		Flow: "primary->dr", Topic: "mm2-offset-syncs.primary.internal", Partition: 0, NextOffset: 3,
		Syncs: []storage.Sync{
			{Topic: "events", Partition: 1, Upstream: 0, Downstream: 0, LogOffset: 0},
			{Topic: "events", Partition: 1, Upstream: 100, Downstream: 98, LogOffset: 2},
			{Topic: "events", Partition: 0, Upstream: 5, Downstream: 5, LogOffset: 1},
		},
	}
	for range 2 { // a replay after a crash must not duplicate
		if err := s.Apply(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	n, _ := s.CountSyncs(ctx, b.Flow)
	if n != 3 {
		t.Fatalf("stored %d syncs, want 3", n)
	}
	next, ok, err := s.Position(ctx, b.Flow, b.Topic, 0)
	if err != nil || !ok || next != 3 {
		t.Fatalf("position = %d %v %v", next, ok, err)
	}
	latest, err := s.LatestSyncs(ctx, b.Flow)
	if err != nil || len(latest) != 2 {
		t.Fatalf("latest = %+v, %v", latest, err)
	}
	for _, x := range latest {
		if x.Partition == 1 && x.Upstream != 100 {
			t.Fatalf("latest of events-1 = %+v, want upstream 100", x)
		}
	}
	// A failing batch leaves nothing behind, position included.
	bad := storage.Batch{Flow: b.Flow, Topic: b.Topic, NextOffset: 10,
		Checkpoints: []storage.Checkpoint{{Group: "g", Topic: "events"}}}
	ctxDone, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Apply(ctxDone, bad); err == nil {
		t.Fatal("apply with a cancelled context succeeded")
	}
	if next, _, _ := s.Position(ctx, b.Flow, b.Topic, 0); next != 3 {
		t.Fatalf("position moved to %d after a failed batch", next)
	}
}

func TestLatestStateTablesKeepNewest(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	apply := func(next int64, b storage.Batch) {
		t.Helper()
		b.Flow, b.Topic, b.NextOffset = "f", "t", next
		if err := s.Apply(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	apply(2, storage.Batch{
		Checkpoints:    []storage.Checkpoint{{Group: "g", Topic: "events", Partition: 0, Upstream: 10, Downstream: 9, LogOffset: 1}},
		Heartbeats:     []storage.Heartbeat{{SourceAlias: "dr", TargetAlias: "primary", EmittedMs: 2000, LogOffset: 1, Count: 2}},
		ConnectOffsets: []storage.ConnectOffset{{Topic: "events", Partition: 0, LastOffset: 41, LogOffset: 1}},
	})
	// An older record (lower log offset) must not overwrite a newer one.
	apply(3, storage.Batch{
		Checkpoints:    []storage.Checkpoint{{Group: "g", Topic: "events", Partition: 0, Upstream: 5, Downstream: 4, LogOffset: 0}},
		Heartbeats:     []storage.Heartbeat{{SourceAlias: "dr", TargetAlias: "primary", EmittedMs: 1000, LogOffset: 0, Count: 1}},
		ConnectOffsets: []storage.ConnectOffset{{Topic: "events", Partition: 0, LastOffset: 7, LogOffset: 0}},
	})
	cps, _ := s.Checkpoints(ctx, "f")
	hbs, _ := s.Heartbeats(ctx, "f")
	cos, _ := s.ConnectOffsets(ctx, "f")
	if len(cps) != 1 || cps[0].Upstream != 10 || len(hbs) != 1 || hbs[0].EmittedMs != 2000 || hbs[0].Count != 2 ||
		len(cos) != 1 || cos[0].LastOffset != 41 {
		t.Fatalf("checkpoints %+v heartbeats %+v connect %+v", cps, hbs, cos)
	}
}

// Thinning may only make translations more conservative: for every upstream
// offset the translated downstream offset after thinning is at most what it
// was before, a translatable offset stays translatable unless it falls before
// every kept sync, and the newest sync of each partition survives.
func TestThinSyncsNeverTranslatesFurther(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 30 {
		s, _ := openStore(t)
		ctx := context.Background()
		var syncs []storage.Sync
		var logOff int64
		for p := int32(0); p < 3; p++ {
			up, down, ms := int64(0), int64(0), int64(0)
			for range 200 {
				up += 1 + rng.Int64N(50)
				down += 1 + rng.Int64N(40)
				ms += rng.Int64N(120_000)
				if rng.IntN(60) == 0 { // an upstream rewind or a downstream truncation
					if rng.IntN(2) == 0 {
						up = rng.Int64N(up)
					} else {
						down = rng.Int64N(down)
					}
				}
				syncs = append(syncs, storage.Sync{Topic: "t", Partition: p, Upstream: up, Downstream: down, LogOffset: logOff, RecordMs: ms})
				logOff++
			}
		}
		if err := s.Apply(ctx, storage.Batch{Flow: "f", Topic: "syncs", NextOffset: logOff, Syncs: syncs}); err != nil {
			t.Fatal(err)
		}
		cutoff := int64(8_000_000)
		deleted, err := s.ThinSyncs(ctx, "f", cutoff, 3_600_000)
		if err != nil {
			t.Fatal(err)
		}
		if round == 0 && deleted == 0 {
			t.Fatal("nothing thinned: the test data does not exercise thinning")
		}
		for p := int32(0); p < 3; p++ {
			before := history(syncs, p)
			after, err := s.SyncHistory(ctx, "f", "t", p, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if after[len(after)-1].LogOffset != logOffsetOfLast(syncs, p) {
				t.Fatalf("newest sync of partition %d was deleted", p)
			}
			a := toKafka(after)
			for u := int64(0); u < before[len(before)-1].Upstream+100; u += 7 {
				tb, ta := kafka.Translate(before, u), kafka.Translate(a, u)
				if ta.Translated() && (!tb.Translated() || ta.Offset > tb.Offset) {
					t.Fatalf("round %d p%d: translate(%d) = %+v after thinning, %+v before", round, p, u, ta, tb)
				}
			}
		}
	}
}

func history(all []storage.Sync, p int32) []kafka.OffsetSync {
	var out []storage.Sync
	for _, x := range all {
		if x.Partition == p {
			out = append(out, x)
		}
	}
	return toKafka(out)
}

func logOffsetOfLast(all []storage.Sync, p int32) int64 {
	var last int64 = -1
	for _, x := range all {
		if x.Partition == p {
			last = x.LogOffset
		}
	}
	return last
}

func toKafka(xs []storage.Sync) []kafka.OffsetSync {
	out := make([]kafka.OffsetSync, len(xs))
	for i, x := range xs {
		out[i] = kafka.OffsetSync{Topic: x.Topic, Partition: x.Partition, Upstream: x.Upstream, Downstream: x.Downstream}
	}
	return out
}
