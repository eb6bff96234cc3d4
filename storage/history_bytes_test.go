package storage_test

import (
	"context"
	"database/sql"
	"os"
	"testing"

	"github.com/drconsole/drconsole/storage"
)

// TestLagHistoryBytes measures what the bounded lag history costs on disk
// per row of each kind, with offsets of realistic size (~5·10^9), and
// derives the README's figures: bytes per partition-day caught up and
// lagging, per flow-day of RPO history, and the budgets for 90 days of RPO
// history and 24 h of partition detail at 100,000 partitions (1,000 topics,
// 1 % lagging). A measurement, not a check:
//
//	DRCONSOLE_HISTORY_BYTES=1 go test -run TestLagHistoryBytes -v ./storage/
func TestLagHistoryBytes(t *testing.T) {
	if os.Getenv("DRCONSOLE_HISTORY_BYTES") == "" {
		t.Skip("a measurement: set DRCONSOLE_HISTORY_BYTES=1")
	}
	ctx := context.Background()
	s, path := openStore(t)
	xs := estate(100_000, 100, 100)
	for i := range xs { // offsets of realistic size
		*xs[i].SourceEnd += 5_000_000_000
		*xs[i].Replicated += 5_000_000_000
	}
	if err := s.AddPartitionMinute(ctx, "f", benchT0-storage.MinuteMs, xs); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	used := func() float64 {
		t.Helper()
		var pages, free, size int64
		if _, err := db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
			t.Fatal(err)
		}
		for q, p := range map[string]*int64{"PRAGMA page_count": &pages, "PRAGMA freelist_count": &free, "PRAGMA page_size": &size} {
			if err := db.QueryRow(q).Scan(p); err != nil {
				t.Fatal(err)
			}
		}
		return float64((pages - free) * size)
	}
	var snapshot int64
	if err := db.QueryRow(`SELECT length(snapshot) FROM partition_last_known`).Scan(&snapshot); err != nil {
		t.Fatal(err)
	}
	perRow := map[string]float64{}
	const minutes = 1440
	for _, m := range []struct {
		name, q string
		rows    float64
	}{
		{"topic-minute", `WITH RECURSIVE m(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM m WHERE i < ?2 - 1)
			INSERT INTO topic_lag SELECT 1, ?1 + m.i*60000, t.id, 100, 1, 0, 30000, 0, 3, 3 FROM m, lag_topics t`, minutes * 1000},
		{"lagging-partition-minute", `WITH RECURSIVE m(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM m WHERE i < ?2 - 1)
			INSERT INTO partition_lag SELECT 1, ?1 + m.i*60000, t.id, t.id % 100, 5000000000 + m.i*1000, 4999999997 + m.i*1000, 3, 30000, NULL
			FROM m, lag_topics t`, minutes * 1000},
		{"flow-sample", `WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM s WHERE i < ?2 * 12 - 1)
			INSERT INTO flow_lag_samples SELECT 1, ?1 + s.i*5000, 30000 + s.i % 1000, 0, 3000 + s.i % 100, 3, 1000, 'OK' FROM s`, minutes * 12},
		{"rpo-minute", `WITH RECURSIVE m(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM m WHERE i < ?2 - 1)
			INSERT INTO flow_rpo_minutes SELECT 1, ?1 + m.i*60000, 12, 0, 0, 30000 + m.i % 1000, 3, 3000, 'OK', 0 FROM m`, minutes},
	} {
		before := used()
		if _, err := db.Exec(m.q, benchT0, minutes); err != nil {
			t.Fatal(err)
		}
		perRow[m.name] = (used() - before) / m.rows
		t.Logf("%-26s %6.1f B per row", m.name, perRow[m.name])
	}
	const day = 1440.0
	caughtUp := perRow["topic-minute"] * day / 100 // its share of its topic's rows (100 partitions per topic)
	lagging := caughtUp + perRow["lagging-partition-minute"]*day
	flowDayRaw := perRow["flow-sample"] * day * 12
	flowDayRollup := perRow["rpo-minute"] * day
	mib := func(b float64) float64 { return b / (1 << 20) }
	t.Logf("last known snapshot at 100k partitions: %.1f MiB (one row per flow, replaced every minute)", mib(float64(snapshot)))
	t.Logf("per partition-day: caught up %.0f B, lagging %.0f B", caughtUp, lagging)
	t.Logf("per flow-day: raw samples every 5 s %.0f KiB (kept retention.lag_history), minute rollups %.0f KiB", flowDayRaw/1024, flowDayRollup/1024)
	t.Logf("90 days of RPO rollups: %.1f MiB per flow (+ %.1f MiB of raw samples for 24 h)", mib(90*flowDayRollup), mib(flowDayRaw))
	t.Logf("24 h of partition detail at 100k partitions, 1%% lagging: %.0f MiB (all lagging: %.0f MiB)",
		mib(99_000*caughtUp+1_000*lagging+float64(snapshot)), mib(100_000*lagging+float64(snapshot)))
}
