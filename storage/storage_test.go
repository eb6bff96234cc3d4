package storage_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/model"
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
		Syncs: []model.OffsetSync{{Topic: "events", Partition: 0, Upstream: 1, Downstream: 1, LogOffset: 0}}}); err != nil {
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
		Syncs: []model.OffsetSync{
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
		Checkpoints: []model.Checkpoint{{Group: "g", Topic: "events"}}}
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
		Checkpoints:    []model.Checkpoint{{Group: "g", Topic: "events", Partition: 0, Upstream: 10, Downstream: 9, LogOffset: 1}},
		Heartbeats:     []model.Heartbeat{{SourceAlias: "dr", TargetAlias: "primary", EmittedMs: 2000, LogOffset: 1, Count: 2}},
		ConnectOffsets: []model.ConnectOffset{{Topic: "events", Partition: 0, LastOffset: 41, LogOffset: 1}},
	})
	// An older record (lower log offset) must not overwrite a newer one.
	apply(3, storage.Batch{
		Checkpoints:    []model.Checkpoint{{Group: "g", Topic: "events", Partition: 0, Upstream: 5, Downstream: 4, LogOffset: 0}},
		Heartbeats:     []model.Heartbeat{{SourceAlias: "dr", TargetAlias: "primary", EmittedMs: 1000, LogOffset: 0, Count: 1}},
		ConnectOffsets: []model.ConnectOffset{{Topic: "events", Partition: 0, LastOffset: 7, LogOffset: 0}},
	})
	cps, _ := s.Checkpoints(ctx, "f")
	hbs, _ := s.Heartbeats(ctx, "f")
	cos, _ := s.ConnectOffsets(ctx, "f")
	if len(cps) != 1 || cps[0].Upstream != 10 || len(hbs) != 1 || hbs[0].EmittedMs != 2000 || hbs[0].Count != 2 ||
		len(cos) != 1 || cos[0].LastOffset != 41 {
		t.Fatalf("checkpoints %+v heartbeats %+v connect %+v", cps, hbs, cos)
	}
}

// One batch of more rows than one statement carries, with the same key
// several times in it, stores what applying the rows one by one would:
// the newest record of each key, whatever its place in the batch, and
// heartbeats counted once each.
func TestLatestStateTablesManyRowsInOneBatch(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	const n = 300 // two full statements and a shorter one
	var b storage.Batch
	for p := range int32(n) {
		newer := model.Checkpoint{Group: "g", Topic: "events", Partition: p, Upstream: 100 + int64(p), Downstream: 99, LogOffset: 2*int64(p) + 1}
		older := newer
		older.Upstream, older.LogOffset = 1, 2*int64(p)
		if p%2 == 0 { // the newer first: the older after it must not overwrite it
			b.Checkpoints = append(b.Checkpoints, newer, older)
		} else {
			b.Checkpoints = append(b.Checkpoints, older, newer)
		}
		b.ConnectOffsets = append(b.ConnectOffsets, model.ConnectOffset{Topic: "events", Partition: p, LastOffset: int64(p), LogOffset: int64(p)})
		b.Heartbeats = append(b.Heartbeats, model.Heartbeat{SourceAlias: "dr", TargetAlias: "primary", EmittedMs: 1000 + int64(p), LogOffset: int64(p), Count: 1})
	}
	b.Flow, b.Topic, b.NextOffset = "f", "t", 2*n
	if err := s.Apply(ctx, b); err != nil {
		t.Fatal(err)
	}
	cps, err := s.Checkpoints(ctx, "f")
	if err != nil || len(cps) != n {
		t.Fatalf("%d checkpoints, %v; want %d", len(cps), err, n)
	}
	for _, c := range cps {
		if c.Upstream != 100+int64(c.Partition) {
			t.Errorf("partition %d: upstream %d, want the newer record's %d", c.Partition, c.Upstream, 100+int64(c.Partition))
		}
	}
	cos, _ := s.ConnectOffsets(ctx, "f")
	hbs, _ := s.Heartbeats(ctx, "f")
	if len(cos) != n || len(hbs) != 1 || hbs[0].Count != n || hbs[0].EmittedMs != 1000+n-1 {
		t.Fatalf("%d connect offsets (want %d), heartbeats %+v (want one, counted %d, emitted %d)", len(cos), n, hbs, n, 1000+n-1)
	}
}

func TestDeleteSyncs(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	var syncs []model.OffsetSync
	for i := range int64(10) {
		syncs = append(syncs, model.OffsetSync{Topic: "t", Upstream: i, Downstream: i, LogOffset: i})
	}
	if err := s.Apply(ctx, storage.Batch{Flow: "f", Topic: "syncs", NextOffset: 10, Syncs: syncs}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSyncs(ctx, "f", []model.SyncKey{{LogOffset: 2}, {LogOffset: 3}, {LogOffset: 9}, {Incarnation: 1, LogOffset: 4}}); err != nil {
		t.Fatal(err)
	}
	var left []int64
	s.EachSync(ctx, "f", func(x model.OffsetSync) error { left = append(left, x.LogOffset); return nil })
	if fmt.Sprint(left) != "[0 1 4 5 6 7 8]" {
		t.Fatalf("left %v", left)
	}
}

// A recreated or relocated offset-syncs topic restarts at log offset 0: its
// syncs, checkpoints and positions are stored beside the old incarnation's,
// never dropped as already known, and read back in write order.
func TestNewIncarnationRestartsLog(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	old, created, err := s.ResolveIncarnation(ctx, "f", "source", "syncs", "aa", map[int32]int64{0: 5})
	if err != nil || !created || old.Incarnation != 1 {
		t.Fatalf("first: %+v %v %v", old, created, err)
	}
	again, created, err := s.ResolveIncarnation(ctx, "f", "source", "syncs", "aa", nil)
	if err != nil || created || again.Incarnation != 1 {
		t.Fatalf("again: %+v %v %v", again, created, err)
	}
	apply := func(inc int64, syncs []model.OffsetSync, cp model.Checkpoint) {
		t.Helper()
		for i := range syncs {
			syncs[i].Incarnation = inc
		}
		if err := s.Apply(ctx, storage.Batch{Flow: "f", Topic: "syncs", Incarnation: inc, NextOffset: int64(len(syncs)),
			Syncs: syncs, Checkpoints: []model.Checkpoint{cp}}); err != nil {
			t.Fatal(err)
		}
	}
	apply(1, []model.OffsetSync{{Topic: "e", Upstream: 10, Downstream: 10, LogOffset: 0}, {Topic: "e", Upstream: 20, Downstream: 20, LogOffset: 1},
		{Topic: "e", Upstream: 30, Downstream: 30, LogOffset: 2}}, model.Checkpoint{Group: "g", Topic: "e", Upstream: 30, LogOffset: 9})
	recreated, created, err := s.ResolveIncarnation(ctx, "f", "source", "syncs", "bb", map[int32]int64{0: 1})
	if err != nil || !created || recreated.Incarnation != 2 {
		t.Fatalf("recreated: %+v %v %v", recreated, created, err)
	}
	if _, ok, _ := s.PositionIn(ctx, "f", "syncs", 2, 0); ok {
		t.Fatal("the new incarnation resumes from the old one's position")
	}
	apply(2, []model.OffsetSync{{Topic: "e", Upstream: 40, Downstream: 40, LogOffset: 0}, {Topic: "e", Upstream: 50, Downstream: 50, LogOffset: 1}},
		model.Checkpoint{Group: "g", Topic: "e", Upstream: 50, LogOffset: 0})
	var ups []int64
	s.EachSync(ctx, "f", func(x model.OffsetSync) error { ups = append(ups, x.Upstream); return nil })
	if fmt.Sprint(ups) != "[10 20 30 40 50]" {
		t.Fatalf("stored syncs by upstream %v, want all five in write order", ups)
	}
	latest, _ := s.LatestSyncs(ctx, "f")
	if len(latest) != 1 || latest[0].Upstream != 50 || latest[0].Incarnation != 2 {
		t.Fatalf("latest %+v", latest)
	}
	cps, _ := s.Checkpoints(ctx, "f")
	if len(cps) != 1 || cps[0].Upstream != 50 {
		t.Fatalf("checkpoint of the new incarnation ignored: %+v", cps)
	}
	if next, ok, _ := s.Position(ctx, "f", "syncs", 0); !ok || next != 2 {
		t.Fatalf("newest position %d %v", next, ok)
	}
	incs, _ := s.Incarnations(ctx, "f")
	if len(incs) != 2 || incs[1].TopicID != "bb" || incs[1].Note == "" {
		t.Fatalf("incarnations %+v", incs)
	}
}

// Rows stored before incarnations were tracked are adopted by the topic
// under the same name only while its log still covers their positions.
func TestLegacyIncarnationAdopted(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	if err := s.Apply(ctx, storage.Batch{Flow: "f", Topic: "syncs", NextOffset: 7}); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, storage.Batch{Flow: "f", Topic: "cps", NextOffset: 9}); err != nil {
		t.Fatal(err)
	}
	inc, _, err := s.ResolveIncarnation(ctx, "f", "source", "syncs", "aa", map[int32]int64{0: 7})
	if err != nil || inc.Incarnation != 0 {
		t.Fatalf("covered legacy not adopted: %+v %v", inc, err)
	}
	inc, _, err = s.ResolveIncarnation(ctx, "f", "target", "cps", "cc", map[int32]int64{0: 3})
	if err != nil || inc.Incarnation == 0 {
		t.Fatalf("legacy positions past the end adopted: %+v %v", inc, err)
	}
}

// A reader that keeps the groups' stored offsets between refreshes knows
// to read them again from the version: every write to them changes it,
// other writes leave it.
func TestGroupRowsVersionChangesWithGroupWrites(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	v := s.GroupRowsVersion()
	step := func(what string, changes bool, write func() error) {
		t.Helper()
		if err := write(); err != nil {
			t.Fatal(err)
		}
		if now := s.GroupRowsVersion(); (now != v) != changes {
			t.Fatalf("%s: version %d then %d, want a change: %v", what, v, now, changes)
		}
		v = s.GroupRowsVersion()
	}
	step("syncs only", false, func() error {
		return s.Apply(ctx, storage.Batch{Flow: "f", Topic: "syncs", NextOffset: 1, Syncs: []model.OffsetSync{{Topic: "events", Upstream: 1, Downstream: 1}}})
	})
	step("a checkpoint", true, func() error {
		return s.Apply(ctx, storage.Batch{Flow: "f", Topic: "cp", NextOffset: 1, Checkpoints: []model.Checkpoint{{Group: "g", Topic: "events", Upstream: 10, Downstream: 9}}})
	})
	step("the primary's offsets", true, func() error {
		return s.RecordPrimaryGroupOffsets(ctx, "f", []storage.GroupOffset{{Group: "g", Topic: "events", Offset: 12, AtMs: 1}})
	})
}
