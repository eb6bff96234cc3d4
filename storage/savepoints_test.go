package storage_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

func i64(v int64) *int64 { return &v }

func TestSavepointUpsertRemembersAndRefreshes(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()

	// Found by a directory scan first: no job, no trigger time.
	id, err := s.UpsertSavepoint(ctx, model.Savepoint{Path: "file:/sp/savepoint-a1-x", Kind: model.KindCheckpoint,
		Origin: model.OriginScan, Status: model.SavepointCompleted, CompletedMs: i64(900), SizeBytes: i64(10)}, 1000)
	if err != nil || id == 0 {
		t.Fatalf("insert: %d %v", id, err)
	}
	// Then Flink REST reports it: job, kind, times, size fill in; origin
	// and first-seen stay.
	id2, err := s.UpsertSavepoint(ctx, model.Savepoint{FlinkTarget: "flink-dr", JobID: "a1", JobName: "events", Path: "file:/sp/savepoint-a1-x",
		Kind: model.KindSavepoint, Origin: model.OriginREST, Status: model.SavepointCompleted,
		TriggerMs: i64(800), SizeBytes: i64(4562), CheckpointID: i64(7)}, 2000)
	if err != nil || id2 != id {
		t.Fatalf("re-upsert: id %d (want %d) %v", id2, id, err)
	}
	if err := s.SetSavepointOffsets(ctx, id, `{"events-0":800,"events-1":1300}`, "kafka-source", 23, ""); err != nil {
		t.Fatal(err)
	}
	// A later scan knows less: it must not erase what REST told, nor the offsets.
	if _, err := s.UpsertSavepoint(ctx, model.Savepoint{Path: "file:/sp/savepoint-a1-x", Kind: model.KindCheckpoint,
		Origin: model.OriginScan, Status: model.SavepointUnknown}, 3000); err != nil {
		t.Fatal(err)
	}
	got, err := s.SavepointByID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want := model.Savepoint{ID: id, FlinkTarget: "flink-dr", JobID: "a1", JobName: "events", Path: "file:/sp/savepoint-a1-x",
		Kind: model.KindSavepoint, Origin: model.OriginScan, Status: model.SavepointCompleted,
		OffsetsJSON: `{"events-0":800,"events-1":1300}`, SourceUID: "kafka-source", FirstSeenMs: 1000, LastSeenMs: 3000}
	if got.FlinkTarget != want.FlinkTarget || got.JobID != want.JobID || got.JobName != want.JobName || got.Kind != want.Kind ||
		got.Origin != want.Origin || got.Status != want.Status || got.OffsetsJSON != want.OffsetsJSON || got.SourceUID != want.SourceUID ||
		got.FirstSeenMs != 1000 || got.LastSeenMs != 3000 || got.ReadError != "" {
		t.Fatalf("entry = %+v\nwant   %+v", got, want)
	}
	if *got.TriggerMs != 800 || *got.CompletedMs != 900 || *got.SizeBytes != 4562 || *got.CheckpointID != 23 {
		t.Fatalf("numbers: trigger %d completed %d size %d checkpoint %d", *got.TriggerMs, *got.CompletedMs, *got.SizeBytes, *got.CheckpointID)
	}
	offs, err := got.Offsets()
	if err != nil || len(offs) != 2 || offs["events-1"] != 1300 {
		t.Fatalf("offsets %v %v", offs, err)
	}
	// An older sighting does not move last-seen back; the console taking it
	// makes it "triggered".
	if _, err := s.UpsertSavepoint(ctx, model.Savepoint{Path: "file:/sp/savepoint-a1-x", Kind: model.KindSavepoint,
		Origin: model.OriginTriggered}, 2500); err != nil {
		t.Fatal(err)
	}
	got, _ = s.SavepointByPath(ctx, "file:/sp/savepoint-a1-x")
	if got.ID != id || got.LastSeenMs != 3000 || got.Origin != model.OriginTriggered || got.Status != model.SavepointCompleted {
		t.Fatalf("after triggered sighting: %+v", got)
	}
}

func TestSavepointsFilterOrderAndErrors(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	sps := []model.Savepoint{
		{FlinkTarget: "f1", JobID: "a1", JobName: "events", Path: "file:/ck/a1/chk-3", Kind: model.KindCheckpoint, Origin: model.OriginREST, TriggerMs: i64(300)},
		{FlinkTarget: "f1", JobID: "a1", JobName: "events", Path: "file:/sp/savepoint-a1-1", Kind: model.KindSavepoint, Origin: model.OriginREST, TriggerMs: i64(100)},
		{FlinkTarget: "f1", JobID: "b2", JobName: "events", Path: "s3://bucket/sp/savepoint-b2-1", Kind: model.KindSavepoint, Origin: model.OriginREST, TriggerMs: i64(200)},
		{Path: "file:/scan/savepoint-c3-1", Kind: model.KindSavepoint, Origin: model.OriginScan, CompletedMs: i64(250)},
	}
	ids, err := s.UpsertSavepoints(ctx, sps, 1000)
	if err != nil || len(ids) != 4 {
		t.Fatal(ids, err)
	}
	paths := func(f storage.SavepointFilter) string {
		t.Helper()
		got, err := s.Savepoints(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, sp := range got {
			out = append(out, sp.Path)
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		f    storage.SavepointFilter
		want string
	}{
		{storage.SavepointFilter{}, "file:/ck/a1/chk-3 file:/scan/savepoint-c3-1 s3://bucket/sp/savepoint-b2-1 file:/sp/savepoint-a1-1"},
		{storage.SavepointFilter{JobID: "a1"}, "file:/ck/a1/chk-3 file:/sp/savepoint-a1-1"},
		{storage.SavepointFilter{JobName: "events", Limit: 2}, "file:/ck/a1/chk-3 s3://bucket/sp/savepoint-b2-1"},
		{storage.SavepointFilter{FlinkTarget: "f1", JobID: "b2"}, "s3://bucket/sp/savepoint-b2-1"},
		{storage.SavepointFilter{JobID: "zz"}, ""},
	} {
		if got := paths(tc.f); got != tc.want {
			t.Errorf("%+v:\n got %s\nwant %s", tc.f, got, tc.want)
		}
	}
	if s0, _ := s.SavepointByID(ctx, ids[0]); s0.Status != model.SavepointUnknown || s0.SizeBytes != nil || s0.Read() {
		t.Fatalf("defaults: %+v", s0)
	}

	// Unread: neither offsets nor an error yet.
	if err := s.SetSavepointOffsets(ctx, ids[2], "", "", 0, "s3:// is not readable here"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetSavepointOffsets(ctx, ids[1], `{"events-0":5}`, "kafka-source", 0, ""); err != nil {
		t.Fatal(err)
	}
	if got := paths(storage.SavepointFilter{Unread: true}); got != "file:/ck/a1/chk-3 file:/scan/savepoint-c3-1" {
		t.Fatalf("unread = %s", got)
	}
	// A later successful read clears the error.
	if err := s.SetSavepointOffsets(ctx, ids[2], `{"events-0":7}`, "u", 4, ""); err != nil {
		t.Fatal(err)
	}
	if sp, _ := s.SavepointByID(ctx, ids[2]); sp.ReadError != "" || sp.OffsetsJSON != `{"events-0":7}` || *sp.CheckpointID != 4 {
		t.Fatalf("after re-read: %+v", sp)
	}

	if _, err := s.SavepointByID(ctx, 999); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("missing id: %v", err)
	}
	if _, err := s.SavepointByPath(ctx, "file:/nope"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("missing path: %v", err)
	}
	if err := s.SetSavepointOffsets(ctx, 999, "", "", 0, "x"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("offsets of a missing id: %v", err)
	}
	if err := s.SetSavepointOffsets(ctx, ids[0], `[1,2]`, "", 0, ""); err == nil {
		t.Fatal("offsets that are not an object were stored")
	}
	for _, bad := range []model.Savepoint{
		{Path: "", Kind: model.KindSavepoint, Origin: model.OriginScan},
		{Path: "file:/x", Kind: "snapshot", Origin: model.OriginScan},
		{Path: "file:/x", Kind: model.KindSavepoint, Origin: "web"},
		{Path: "file:/x", Kind: model.KindSavepoint, Origin: model.OriginScan, Status: "DONE"},
	} {
		if _, err := s.UpsertSavepoint(ctx, bad, 1); err == nil {
			t.Errorf("%+v was accepted", bad)
		}
	}
	// A failing entry rolls back the whole batch.
	if _, err := s.UpsertSavepoints(ctx, []model.Savepoint{
		{Path: "file:/ok", Kind: model.KindSavepoint, Origin: model.OriginScan},
		{Path: "file:/bad", Kind: "x", Origin: model.OriginScan},
	}, 1); err == nil {
		t.Fatal("bad batch accepted")
	}
	if _, err := s.SavepointByPath(ctx, "file:/ok"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("half a batch stored: %v", err)
	}
}

// A rewritten savepoint is marked as such with its source and flow, even
// when a directory scan found the new directory first; a later scan does
// not take the mark away. Rows written before migration 12 survive the
// table's rebuild.
func TestRewrittenSavepointMark(t *testing.T) {
	path := oldSchema(t, 11)
	ctx := context.Background()
	rawDB(t, path, `INSERT INTO savepoints(id, path, kind, origin, status, checkpoint_id, offsets_json, source_uid, first_seen_ms, last_seen_ms)
		VALUES (7, 'file:/sp/a', 'savepoint', 'rest', 'COMPLETED', 23, '{"events-0":800}', 'kafka-source', 1000, 1000)`)
	old := int64(7)
	s, err := storage.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.SavepointByID(ctx, old); err != nil || got.OffsetsJSON != `{"events-0":800}` || got.SourceUID != "kafka-source" ||
		*got.CheckpointID != 23 || got.Origin != model.OriginREST || got.RewrittenFrom != "" {
		t.Fatalf("entry after the upgrade: %+v %v", got, err)
	}
	scan := model.Savepoint{Path: "file:/sp/a-dr", Kind: model.KindSavepoint, Origin: model.OriginScan, Status: model.SavepointUnknown}
	id, err := s.UpsertSavepoint(ctx, scan, 2000)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpsertSavepoint(ctx, model.Savepoint{Path: "file:/sp/a-dr", Kind: model.KindSavepoint, Origin: model.OriginRewritten,
		Status: model.SavepointCompleted, RewrittenFrom: "file:/sp/a", RewrittenFlow: "primary->dr"}, 3000); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpsertSavepoint(ctx, scan, 4000); err != nil {
		t.Fatal(err)
	}
	got, err := s.SavepointByID(ctx, id)
	if err != nil || got.Origin != model.OriginRewritten || got.RewrittenFrom != "file:/sp/a" || got.RewrittenFlow != "primary->dr" ||
		got.Status != model.SavepointCompleted {
		t.Fatalf("rewritten entry %+v %v", got, err)
	}
}
