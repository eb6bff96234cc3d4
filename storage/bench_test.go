package storage_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// BenchmarkApplySyncs measures storing offset syncs as ingestion does: one
// transaction per polled batch, with its resume position.
func BenchmarkApplySyncs(b *testing.B) {
	for _, batch := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			s, _ := openStore(b)
			ctx := context.Background()
			syncs := make([]model.OffsetSync, batch)
			var logOff int64
			b.ResetTimer()
			for b.Loop() {
				for i := range syncs {
					syncs[i] = model.OffsetSync{Topic: "events", Partition: int32(logOff % 1000), Upstream: logOff * 3,
						Downstream: logOff * 2, LogOffset: logOff, RecordMs: logOff}
					logOff++
				}
				if err := s.Apply(ctx, storage.Batch{Flow: "f", Topic: "syncs", NextOffset: logOff, Syncs: syncs}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(logOff)/b.Elapsed().Seconds(), "syncs/s")
		})
	}
}

// estate is n partitions over topics of perTopic partitions, one in
// lagEvery lagging (offsets behind and an age), the rest caught up.
func estate(n, perTopic, lagEvery int) []storage.PartitionSample {
	xs := make([]storage.PartitionSample, n)
	for i := range xs {
		end, repl := int64(1_000_000+i), int64(1_000_000+i)
		lagMs := int64(0)
		if i%lagEvery == 0 {
			repl -= int64(1 + i%5)
			lagMs = 30_000
		}
		lag := end - repl
		xs[i] = storage.PartitionSample{Topic: fmt.Sprintf("scale-%05d", i/perTopic), Partition: int32(i % perTopic),
			SourceEnd: &end, Replicated: &repl, LagMessages: &lag, LagMs: &lagMs}
	}
	return xs
}

// oldPartitionTable is the per-partition history as it was before
// migration 0015, written and read with its own statements: the baseline.
type oldPartitionTable struct{ db *sql.DB }

func openOldPartitionTable(b *testing.B) oldPartitionTable {
	path := filepath.Join(b.TempDir(), "old.db")
	s, err := storage.OpenAtVersion(path, 14)
	if err != nil {
		b.Fatal(err)
	}
	s.Close()
	// The store's connection settings at the time (64 MiB page cache).
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_busy_timeout=5000&_synchronous=NORMAL&_cache_size=-65536&_txlock=immediate")
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	b.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`INSERT INTO flows(id, name) VALUES (1, 'f')`); err != nil {
		b.Fatal(err)
	}
	return oldPartitionTable{db}
}

func (o oldPartitionTable) add(b *testing.B, atMs int64, xs []storage.PartitionSample) {
	tx, err := o.db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	st, err := tx.Prepare(`INSERT OR REPLACE INTO partition_lag_samples
		(flow_id, topic, partition, at_ms, source_end, replicated, lag_messages, lag_ms) VALUES (1,?,?,?,?,?,?,?)`)
	if err != nil {
		b.Fatal(err)
	}
	for _, x := range xs {
		if _, err := st.Exec(x.Topic, x.Partition, atMs, x.SourceEnd, x.Replicated, x.LagMessages, x.LagMs); err != nil {
			b.Fatal(err)
		}
	}
	st.Close()
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

// benchHistoryMinutes is how many minutes of history lie in the database
// before a measured write (the old layout's writes slow down as it grows).
const benchHistoryMinutes = 10

const benchT0 = int64(1_764_000_000_000)

// BenchmarkSavePartitionMinute measures saving one minute of 100,000
// partitions (100 per topic) after benchHistoryMinutes minutes of history:
// the bounded layout with 1 % and with every partition lagging, and the old
// one (a row per partition, keyed partition first); and both for a small
// estate of 100 partitions.
func BenchmarkSavePartitionMinute(b *testing.B) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		n        int
		lagEvery int
		old      bool
	}{
		{"bounded/n=100k/lagging=1pct", 100_000, 100, false}, {"bounded/n=100k/lagging=100pct", 100_000, 1, false},
		{"old/n=100k", 100_000, 100, true},
		{"bounded/n=100/lagging=1pct", 100, 100, false}, {"old/n=100", 100, 100, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			xs := estate(tc.n, 100, tc.lagEvery)
			var add func(atMs int64)
			if tc.old {
				o := openOldPartitionTable(b)
				add = func(atMs int64) { o.add(b, atMs, xs) }
			} else {
				s, _ := openStore(b)
				add = func(atMs int64) {
					if err := s.AddPartitionMinute(ctx, "f", atMs, xs); err != nil {
						b.Fatal(err)
					}
				}
			}
			at := benchT0
			for range benchHistoryMinutes {
				add(at)
				at += storage.MinuteMs
			}
			b.ResetTimer()
			for b.Loop() {
				add(at)
				at += storage.MinuteMs
			}
		})
	}
}

// seedHistory adds minutes of history from fromMs for 100,000 partitions
// (1,000 topics, 1 % lagging) as the monitor writes it, straight in SQL
// (the monitor would take that long): one flow sample per 5 s with its
// minute rollups, a row per topic and per lagging partition every minute.
func seedHistory(b *testing.B, db *sql.DB, fromMs int64, minutes int) {
	b.Helper()
	for _, q := range []string{
		`WITH RECURSIVE m(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM m WHERE i < ?2 - 1)
		 INSERT INTO topic_lag SELECT 1, ?1 + m.i*60000, t.id, 100, 1, 0, 30000, 0, 3, 3 FROM m, lag_topics t`,
		`WITH RECURSIVE m(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM m WHERE i < ?2 - 1)
		 INSERT INTO partition_lag SELECT 1, ?1 + m.i*60000, t.id, 0, 1000000, 999997, 3, 30000, NULL FROM m, lag_topics t`,
		`WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM s WHERE i < ?2 * 12 - 1)
		 INSERT INTO flow_lag_samples SELECT 1, ?1 + s.i*5000, 30000, 0, 3000, 3, 1000, 'OK' FROM s`,
		`WITH RECURSIVE m(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM m WHERE i < ?2 - 1)
		 INSERT INTO flow_rpo_minutes SELECT 1, ?1 + m.i*60000, 12, 0, 0, 30000, 3, 3000, 'OK', 0 FROM m`,
	} {
		if _, err := db.Exec(q, fromMs, minutes); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPruneLagHistory measures the hourly retention run over a day of
// history at 100,000 partitions (1 % lagging): each run deletes the oldest
// hour, in batches, and (untimed) the next hour is added, so the store
// always holds 24 h.
func BenchmarkPruneLagHistory(b *testing.B) {
	ctx := context.Background()
	s, path := openStore(b)
	if err := s.AddPartitionMinute(ctx, "f", benchT0-storage.MinuteMs, estate(100_000, 100, 100)); err != nil {
		b.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_busy_timeout=5000&_synchronous=NORMAL")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	const hour = 3_600_000
	seedHistory(b, db, benchT0, 24*60)
	cut := benchT0
	var deleted int64
	b.ResetTimer()
	for b.Loop() {
		cut += hour
		n, err := s.PruneLagSamples(ctx, cut, cut)
		if err != nil {
			b.Fatal(err)
		}
		deleted += n
		b.StopTimer()
		seedHistory(b, db, cut+23*hour, 60)
		b.StartTimer()
	}
	b.ReportMetric(float64(deleted)/float64(b.N), "rows/op")
}

// BenchmarkStartupLastKnown measures reading the last known figures of
// 100,000 partitions at start-up: the bounded layout's one snapshot row,
// and the old GROUP BY over benchHistoryMinutes minutes of history.
func BenchmarkStartupLastKnown(b *testing.B) {
	const n = 100_000
	ctx := context.Background()
	xs := estate(n, 100, 100)
	b.Run("bounded", func(b *testing.B) {
		s, _ := openStore(b)
		for i := range benchHistoryMinutes {
			if err := s.AddPartitionMinute(ctx, "f", benchT0+int64(i)*storage.MinuteMs, xs); err != nil {
				b.Fatal(err)
			}
		}
		b.ResetTimer()
		for b.Loop() {
			got, err := s.LatestPartitionSamples(ctx, "f")
			if err != nil || len(got) != n {
				b.Fatal(len(got), err)
			}
		}
	})
	b.Run("old", func(b *testing.B) {
		o := openOldPartitionTable(b)
		for i := range benchHistoryMinutes {
			o.add(b, benchT0+int64(i)*storage.MinuteMs, xs)
		}
		b.ResetTimer()
		for b.Loop() {
			rows, err := o.db.Query(`SELECT topic, partition, max(at_ms), source_end, replicated, lag_messages, lag_ms
				FROM partition_lag_samples WHERE flow_id=1 GROUP BY topic, partition`)
			if err != nil {
				b.Fatal(err)
			}
			var got []storage.PartitionSample
			for rows.Next() {
				var x storage.PartitionSample
				var end, repl, lag, lagMs sql.NullInt64
				if err := rows.Scan(&x.Topic, &x.Partition, &x.AtMs, &end, &repl, &lag, &lagMs); err != nil {
					b.Fatal(err)
				}
				got = append(got, x)
			}
			rows.Close()
			if len(got) != n {
				b.Fatal(len(got))
			}
		}
	})
}

// BenchmarkAddFlowSample measures the per-refresh write: the raw sample
// and its minute rollup in one transaction.
func BenchmarkAddFlowSample(b *testing.B) {
	s, _ := openStore(b)
	ctx := context.Background()
	rpo, lag := int64(30_000), int64(3)
	at := benchT0
	for b.Loop() {
		if err := s.AddFlowSample(ctx, "f", storage.FlowSample{AtMs: at, RPOMs: &rpo, LagMessages: &lag, MaxLagMessages: &lag, Status: "OK"}); err != nil {
			b.Fatal(err)
		}
		at += 5_000
	}
}

// BenchmarkSessionUser measures what every signed-in request pays to know
// its user: "read" queries SQLite each time (the cached answer always too
// old), "cached" is a busy session read again within the second.
func BenchmarkSessionUser(b *testing.B) {
	for _, cached := range []bool{false, true} {
		b.Run(map[bool]string{false: "read", true: "cached"}[cached], func(b *testing.B) {
			s, _ := openStore(b)
			ctx := context.Background()
			now := time.Unix(1_800_000_000, 0)
			defer storage.SetClock(func() time.Time { return now })()
			if err := s.CreateUser(ctx, model.User{Name: "alice", Role: "operator", PasswordHash: "h"}); err != nil {
				b.Fatal(err)
			}
			tok, err := s.CreateSession(ctx, "alice", "", "")
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if !cached {
					now = now.Add(storage.SessionCacheTTL) // every read finds the cached one too old
				}
				if _, err := s.PeekSession(ctx, tok, 1000*time.Hour, 1000*time.Hour); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkApplyCheckpoints measures storing MM2 checkpoints as ingestion
// does: a polled batch of one group's partitions per transaction.
func BenchmarkApplyCheckpoints(b *testing.B) {
	s, _ := openStore(b)
	ctx := context.Background()
	const batch = 1_000
	cps := make([]model.Checkpoint, batch)
	var logOff int64
	b.ReportAllocs()
	for b.Loop() {
		for i := range cps {
			cps[i] = model.Checkpoint{Group: fmt.Sprintf("g%d", logOff%50), Topic: "events", Partition: int32(logOff % 100),
				Upstream: logOff * 3, Downstream: logOff * 2, LogOffset: logOff, RecordMs: logOff}
			logOff++
		}
		if err := s.Apply(ctx, storage.Batch{Flow: "f", Topic: "checkpoints", NextOffset: logOff, Checkpoints: cps}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(batch)*float64(b.N)/b.Elapsed().Seconds(), "checkpoints/s")
}
