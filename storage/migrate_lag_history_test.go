package storage

import (
	"context"
	"path/filepath"
	"testing"
)

// A database with the per-partition history of before migration 0015 keeps
// it readable: lagging rows move over, caught-up ones become the absence
// their topic's row explains, the newest figures of every partition are
// there for start-up, and the flow samples are rolled up by minute without
// ever being taken for exact.
func TestMigrationSplitsLagHistory(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	old, err := openUpTo(path, 14)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"INSERT INTO flows(id, name) VALUES (1, 'f')",
		// Minute 0: e-0 lagging, e-1 caught up. Minute 1: e-0 caught up, e-1 unknown.
		`INSERT INTO partition_lag_samples VALUES
			(1, 'e', 0, 1764000000000, 15, 10, 5, 3000), (1, 'e', 1, 1764000000000, 8, 8, 0, 0),
			(1, 'e', 0, 1764000060000, 20, 20, 0, 0), (1, 'e', 1, 1764000060000, 9, NULL, NULL, NULL)`,
		`INSERT INTO flow_lag_samples VALUES
			(1, 1764000000000, 3000, 5, 100, 'OK'), (1, 1764000005000, NULL, NULL, 100, 'UNKNOWN'),
			(1, 1764000060000, 100, 0, 100, 'WARNING')`,
	} {
		if _, err := old.w.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	old.Close()

	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := countRows(t, s, "partition_lag"); n != 2 {
		t.Fatalf("%d partition rows kept, want 2 (the caught-up ones are implied)", n)
	}
	e0, err := s.PartitionSamples(ctx, "f", "e", 0, 0)
	if err != nil || len(e0) != 2 || *e0[0].LagMs != 3000 || e0[0].CaughtUp || !e0[1].CaughtUp || *e0[1].LagMs != 0 {
		t.Fatalf("e-0 after migration %+v %v", e0, err)
	}
	e1, _ := s.PartitionSamples(ctx, "f", "e", 1, 0)
	if len(e1) != 2 || !e1[0].CaughtUp || e1[1].CaughtUp || e1[1].LagMs != nil || e1[1].LagMessages != nil {
		t.Fatalf("e-1 after migration %+v", e1)
	}
	tm, _ := s.TopicMinutes(ctx, "f", "e", 0)
	if len(tm) != 2 || tm[0].Lagging != 1 || tm[0].Unknown != 0 || *tm[0].MaxLagMs != 3000 || tm[1].Unknown != 1 || !tm[1].MaxLagAtLeast {
		t.Fatalf("topic rows %+v", tm)
	}

	last, err := s.LatestPartitionSamples(ctx, "f")
	if err != nil || len(last) != 2 || last[0].AtMs != 1764000060000 || *last[0].Replicated != 20 ||
		last[1].Replicated != nil || *last[1].SourceEnd != 9 {
		t.Fatalf("last known after migration %+v %v", last, err)
	}

	// The old samples are rolled up before retention deletes them (or when
	// the next sample closes a minute).
	if _, err := s.PruneLagSamples(ctx, 1764000060000, 0); err != nil {
		t.Fatal(err)
	}
	ms, _ := s.FlowMinutes(ctx, "f", 0)
	if len(ms) != 2 || ms[0].Samples != 2 || ms[0].Unknown != 1 || ms[0].AtLeast != 1 || *ms[0].MaxRPOMs != 3000 ||
		ms[0].WorstStatus != "UNKNOWN" || ms[0].MaxLagMessages != nil || *ms[0].MaxTotalLagMessages != 5 || ms[1].WorstStatus != "WARNING" {
		t.Fatalf("rollups after migration %+v", ms)
	}
	raw, _ := s.FlowSamples(ctx, "f", 0)
	if len(raw) != 1 || !raw[0].RPOAtLeast || *raw[0].RPOMs != 100 {
		t.Fatalf("raw samples after migration (old rows were never shown exact) %+v", raw)
	}

	// The first saved minute replaces the legacy figures.
	if err := s.AddPartitionMinute(ctx, "f", 1764000120000, []PartitionSample{{Topic: "e", Partition: 0, LagMessages: i64(0), LagMs: i64(0)}}); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, s, "partition_last_legacy"); n != 0 {
		t.Fatalf("%d legacy rows left", n)
	}
	if last, _ := s.LatestPartitionSamples(ctx, "f"); len(last) != 1 || last[0].AtMs != 1764000120000 {
		t.Fatalf("last known %+v", last)
	}
}
