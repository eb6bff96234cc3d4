package storage

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/drconsole/drconsole/model"
)

// A database written before incarnations were tracked keeps its whole
// history through migration 0010: its rows become incarnation 0, the
// resume positions still apply, and the topic whose log still covers them
// adopts them instead of re-reading from the start.
func TestMigrationKeepsLegacyHistory(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite3", dsn(path, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"0001_init.sql", "0002_group_offset_changes.sql", "0003_operators_audit.sql",
		"0004_failover.sql", "0005_savepoints.sql", "0006_primary_group_offsets.sql"} {
		body, err := migrations.ReadFile("migrations/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, string(body)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	for _, q := range []string{
		"PRAGMA user_version = 6",
		"INSERT INTO flows(id, name) VALUES (1, 'f')",
		"INSERT INTO offset_syncs VALUES (1, 0, 'events', 0, 10, 10, 1), (1, 1, 'events', 0, 20, 19, 2)",
		"INSERT INTO ingest_positions VALUES (1, 'syncs', 0, 2, 3)",
		"INSERT INTO checkpoints VALUES (1, 'g', 'events', 0, 20, 19, '', 5, 6)",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, _ := s.SchemaVersion(ctx); v < 10 {
		t.Fatalf("schema version %d", v)
	}
	var got []model.OffsetSync
	if err := s.EachSync(ctx, "f", func(x model.OffsetSync) error { got = append(got, x); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1].Upstream != 20 || got[1].Incarnation != 0 {
		t.Fatalf("syncs after migration %+v", got)
	}
	if next, ok, err := s.PositionIn(ctx, "f", "syncs", 0, 0); err != nil || !ok || next != 2 {
		t.Fatalf("legacy position %d %v %v", next, ok, err)
	}
	inc, _, err := s.ResolveIncarnation(ctx, "f", "target", "syncs", "abcd", map[int32]int64{0: 2})
	if err != nil || inc.Incarnation != 0 {
		t.Fatalf("the topic covering the legacy positions did not adopt them: %+v %v", inc, err)
	}
	// A checkpoint of a later incarnation replaces the legacy one even at a
	// lower log offset.
	if err := s.Apply(ctx, Batch{Flow: "f", Topic: "cps", Incarnation: 1, NextOffset: 1,
		Checkpoints: []model.Checkpoint{{Group: "g", Topic: "events", Upstream: 30, Downstream: 29, LogOffset: 0}}}); err != nil {
		t.Fatal(err)
	}
	if cps, _ := s.Checkpoints(ctx, "f"); len(cps) != 1 || cps[0].Upstream != 30 {
		t.Fatalf("checkpoints %+v", cps)
	}
}
