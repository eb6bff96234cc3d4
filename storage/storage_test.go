package storage_test

import (
	"context"
	"fmt"
	"github.com/drconsole/drconsole/storage"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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

// oldSchema makes a database as a drconsole at schema version v left it.
func oldSchema(t *testing.T, v int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "drconsole.db")
	s, err := storage.OpenAtVersion(path, v)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	return path
}

func TestMigrateOnceAndReopen(t *testing.T) {
	s, path := openStore(t)
	ctx := context.Background()
	v, err := s.SchemaVersion(ctx)
	files, _ := os.ReadDir("migrations")
	last, _ := strconv.Atoi(strings.SplitN(files[len(files)-1].Name(), "_", 2)[0])
	if err != nil || v != last || last < 2 {
		t.Fatalf("schema version = %d, %v; newest migration %d", v, err, last)
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

func TestDeleteSyncs(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	var syncs []storage.Sync
	for i := range int64(10) {
		syncs = append(syncs, storage.Sync{Topic: "t", Upstream: i, Downstream: i, LogOffset: i})
	}
	if err := s.Apply(ctx, storage.Batch{Flow: "f", Topic: "syncs", NextOffset: 10, Syncs: syncs}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSyncs(ctx, "f", []int64{2, 3, 9}); err != nil {
		t.Fatal(err)
	}
	var left []int64
	s.EachSync(ctx, "f", func(x storage.Sync) error { left = append(left, x.LogOffset); return nil })
	if fmt.Sprint(left) != "[0 1 4 5 6 7 8]" {
		t.Fatalf("left %v", left)
	}
}
