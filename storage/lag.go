package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
)

// FlowSample is a flow's recovery point at one refresh. A nil figure was
// unknown at that moment and is stored as NULL, never as 0.
type FlowSample struct {
	AtMs  int64
	RPOMs *int64
	// RPOAtLeast: RPOMs is only a lower bound (some partition's lag or age
	// was not known exactly). Rows written before this was recorded read
	// true: they were never shown to be exact.
	RPOAtLeast bool
	// LagMessages is the flow's total offsets behind; MaxLagMessages the
	// largest partition's.
	LagMessages    *int64
	MaxLagMessages *int64
	HeartbeatAgeMs *int64
	Status         string
}

// PartitionSample is one partition's lag at one moment.
type PartitionSample struct {
	Topic       string
	Partition   int32
	AtMs        int64
	SourceEnd   *int64
	Replicated  *int64
	LagMessages *int64
	LagMs       *int64
	// LagMsAtLeast is a lower bound on the age when LagMs is unknown.
	LagMsAtLeast *int64
	// CaughtUp (read only): the minute was saved and the partition had no
	// row, so it was caught up (LagMessages and LagMs read 0, the offsets
	// were not kept).
	CaughtUp bool
}

// caughtUp is true when a partition is known to be caught up: 0 offsets
// behind and 0 ms. Such a partition costs no row.
func (x *PartitionSample) caughtUp() bool {
	return x.LagMessages != nil && *x.LagMessages == 0 && x.LagMs != nil && *x.LagMs == 0
}

// MinuteMs is the length of a flow RPO rollup bucket.
const MinuteMs = 60_000

// AddFlowSample records a flow's figures, in one transaction with the
// rollups it changes. The first sample of a minute rolls up the minutes
// before it (rollUp); a sample for a minute already rolled up (stored
// late, or twice) rolls that minute up again, or, when retention already
// deleted the minute's samples, is counted into its rollup. A second
// sample at the same AtMs replaces the first.
func (s *Store) AddFlowSample(ctx context.Context, flow string, x FlowSample) error {
	id, err := s.flowID(ctx, flow)
	if err != nil {
		return err
	}
	minute := floorMinute(x.AtMs)
	err = s.tx(ctx, func(tx *sql.Tx) error {
		// prev: the newest sample; rolled: the newest rollup; kept: the
		// minute has raw samples (retention deletes whole minutes);
		// counted: it has a rollup.
		var prev, rolled sql.NullInt64
		var kept, counted bool
		if err := tx.QueryRowContext(ctx, `SELECT (SELECT max(at_ms) FROM flow_lag_samples WHERE flow_id=?1),
				(SELECT max(minute_ms) FROM flow_rpo_minutes WHERE flow_id=?1),
				EXISTS (SELECT 1 FROM flow_lag_samples WHERE flow_id=?1 AND at_ms >= ?2 AND at_ms < ?2 + ?3),
				EXISTS (SELECT 1 FROM flow_rpo_minutes WHERE flow_id=?1 AND minute_ms = ?2)`,
			id, minute, MinuteMs).Scan(&prev, &rolled, &kept, &counted); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO flow_lag_samples
			(flow_id, at_ms, rpo_ms, rpo_at_least, lag_messages, max_lag_messages, heartbeat_age_ms, status) VALUES (?,?,?,?,?,?,?,?)
			ON CONFLICT (flow_id, at_ms) DO UPDATE SET rpo_ms=excluded.rpo_ms, rpo_at_least=excluded.rpo_at_least,
				lag_messages=excluded.lag_messages, max_lag_messages=excluded.max_lag_messages,
				heartbeat_age_ms=excluded.heartbeat_age_ms, status=excluded.status`,
			id, x.AtMs, x.RPOMs, x.RPOAtLeast, x.LagMessages, x.MaxLagMessages, x.HeartbeatAgeMs, x.Status)
		if err != nil {
			return err
		}
		// Every minute before the newest sample's is rolled up, and so
		// is every minute up to the newest rollup.
		late := (prev.Valid && minute < floorMinute(prev.Int64)) || (rolled.Valid && minute <= rolled.Int64)
		switch {
		case late && counted && !kept:
			// Retention deleted the minute's samples after rolling them
			// up: recomputing would forget them. The sample is counted
			// in, and not kept (retention would delete it).
			return countLate(ctx, tx, id, x.AtMs)
		case late:
			return rollUpRange(ctx, tx, id, minute, minute+MinuteMs)
		case prev.Valid && minute > floorMinute(prev.Int64):
			return rollUp(ctx, tx, id, minute)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("storage: flow sample: %w", err)
	}
	return nil
}

func floorMinute(ms int64) int64 { return ms - ms%MinuteMs }

// querier is a connection or a transaction.
type querier interface {
	execer
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// rollUp rolls up a flow's minutes before beforeMs that are not rolled up
// yet: after the newest rollup, or from the oldest raw sample (a database
// migrated from before rollups). Retention calls it before deleting raw
// samples, so none goes uncounted.
func rollUp(ctx context.Context, q querier, flowID, beforeMs int64) error {
	var newest, oldest sql.NullInt64
	if err := q.QueryRowContext(ctx, `SELECT max(minute_ms) FROM flow_rpo_minutes WHERE flow_id=?`, flowID).Scan(&newest); err != nil {
		return err
	}
	from := newest.Int64 + MinuteMs
	if !newest.Valid {
		if err := q.QueryRowContext(ctx, `SELECT min(at_ms) FROM flow_lag_samples WHERE flow_id=?`, flowID).Scan(&oldest); err != nil || !oldest.Valid {
			return err
		}
		from = floorMinute(oldest.Int64)
	}
	if to := floorMinute(beforeMs); from < to {
		return rollUpRange(ctx, q, flowID, from, to)
	}
	return nil
}

// rollupColumns and rollupSelect roll up a flow's (?1) raw samples with
// at_ms in [?2, ?3) by minute (?4 = MinuteMs). Aggregate max() skips NULLs:
// an unknown figure never becomes 0, and a minute with no figure at all
// keeps NULL. A sample whose RPO was not recorded as exact (rpo_at_least
// NULL) counts as a lower bound.
const (
	rollupColumns = `flow_rpo_minutes (flow_id, minute_ms, samples, unknown, at_least,
		max_rpo_ms, max_lag_messages, max_total_lag_messages, worst_status, status_rank)`
	rollupSelect = ` SELECT flow_id, minute, n, unknown, at_least, rpo, max_lag, max_total,
			CASE rank WHEN 0 THEN 'OK' WHEN 1 THEN 'WARNING' WHEN 3 THEN 'CRITICAL' WHEN 4 THEN 'BROKEN' ELSE 'UNKNOWN' END, rank
		FROM (SELECT flow_id, at_ms - at_ms % ?4 AS minute, count(*) AS n, sum(rpo_ms IS NULL) AS unknown,
				sum(rpo_ms IS NOT NULL AND coalesce(rpo_at_least, 1)) AS at_least, max(rpo_ms) AS rpo,
				max(max_lag_messages) AS max_lag, max(lag_messages) AS max_total,
				max(CASE status WHEN 'OK' THEN 0 WHEN 'WARNING' THEN 1 WHEN 'CRITICAL' THEN 3 WHEN 'BROKEN' THEN 4 ELSE 2 END) AS rank
			FROM flow_lag_samples WHERE flow_id = ?1 AND at_ms >= ?2 AND at_ms < ?3 GROUP BY minute)`
)

// rollUpRange (re)computes a flow's minute rollups of [fromMs, toMs) from
// its raw samples.
func rollUpRange(ctx context.Context, q execer, flowID, fromMs, toMs int64) error {
	_, err := q.ExecContext(ctx, `INSERT OR REPLACE INTO `+rollupColumns+rollupSelect, flowID, fromMs, toMs, MinuteMs)
	return err
}

// countLate adds the raw sample at atMs to its minute's rollup, keeping
// what the rollup counted before (max() of NULL and a figure is the
// figure), and deletes the raw sample.
func countLate(ctx context.Context, q execer, flowID, atMs int64) error {
	_, err := q.ExecContext(ctx, `INSERT INTO `+rollupColumns+rollupSelect+` WHERE true
		ON CONFLICT (flow_id, minute_ms) DO UPDATE SET samples = samples + excluded.samples,
			unknown = unknown + excluded.unknown, at_least = at_least + excluded.at_least,
			max_rpo_ms = max(coalesce(max_rpo_ms, excluded.max_rpo_ms), coalesce(excluded.max_rpo_ms, max_rpo_ms)),
			max_lag_messages = max(coalesce(max_lag_messages, excluded.max_lag_messages), coalesce(excluded.max_lag_messages, max_lag_messages)),
			max_total_lag_messages = max(coalesce(max_total_lag_messages, excluded.max_total_lag_messages),
				coalesce(excluded.max_total_lag_messages, max_total_lag_messages)),
			worst_status = CASE WHEN excluded.status_rank > status_rank THEN excluded.worst_status ELSE worst_status END,
			status_rank = max(status_rank, excluded.status_rank)`, flowID, atMs, atMs+1, MinuteMs)
	if err != nil {
		return err
	}
	_, err = q.ExecContext(ctx, `DELETE FROM flow_lag_samples WHERE flow_id=? AND at_ms=?`, flowID, atMs)
	return err
}

// FlowSamples returns a flow's samples since sinceMs, oldest first.
func (s *Store) FlowSamples(ctx context.Context, flow string, sinceMs int64) ([]FlowSample, error) {
	id, err := s.flowID(ctx, flow)
	if err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT at_ms, rpo_ms, coalesce(rpo_at_least, 1), lag_messages, max_lag_messages, heartbeat_age_ms, status
		FROM flow_lag_samples WHERE flow_id=? AND at_ms >= ? ORDER BY at_ms`, id, sinceMs)
	if err != nil {
		return nil, fmt.Errorf("storage: flow samples: %w", err)
	}
	defer rows.Close()
	var out []FlowSample
	for rows.Next() {
		var x FlowSample
		var rpo, lag, maxLag, hb sql.NullInt64
		if err := rows.Scan(&x.AtMs, &rpo, &x.RPOAtLeast, &lag, &maxLag, &hb, &x.Status); err != nil {
			return nil, err
		}
		x.RPOMs, x.LagMessages, x.MaxLagMessages, x.HeartbeatAgeMs = ptr(rpo), ptr(lag), ptr(maxLag), ptr(hb)
		x.RPOAtLeast = x.RPOAtLeast && x.RPOMs != nil
		out = append(out, x)
	}
	return out, rows.Err()
}

// FlowMinute is a flow's RPO over one minute, rolled up from its samples.
// A minute was within an objective only if Unknown and AtLeast are 0 and
// MaxRPOMs is within it.
type FlowMinute struct {
	MinuteMs int64
	Samples  int
	Unknown  int    // samples whose RPO was unknown
	AtLeast  int    // samples whose RPO was only a lower bound (or not recorded as exact)
	MaxRPOMs *int64 // lower bounds included; nil when no sample had a figure
	// MaxLagMessages: the largest partition lag in offsets; MaxTotalLagMessages:
	// the largest flow total. Nil when unknown.
	MaxLagMessages      *int64
	MaxTotalLagMessages *int64
	WorstStatus         string
}

// FlowMinutes returns a flow's minute rollups since sinceMs, oldest first.
func (s *Store) FlowMinutes(ctx context.Context, flow string, sinceMs int64) ([]FlowMinute, error) {
	id, err := s.flowID(ctx, flow)
	if err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT minute_ms, samples, unknown, at_least, max_rpo_ms, max_lag_messages,
		max_total_lag_messages, worst_status FROM flow_rpo_minutes WHERE flow_id=? AND minute_ms >= ? ORDER BY minute_ms`, id, sinceMs)
	if err != nil {
		return nil, fmt.Errorf("storage: flow minutes: %w", err)
	}
	defer rows.Close()
	var out []FlowMinute
	for rows.Next() {
		var x FlowMinute
		var rpo, maxLag, total sql.NullInt64
		if err := rows.Scan(&x.MinuteMs, &x.Samples, &x.Unknown, &x.AtLeast, &rpo, &maxLag, &total, &x.WorstStatus); err != nil {
			return nil, err
		}
		x.MaxRPOMs, x.MaxLagMessages, x.MaxTotalLagMessages = ptr(rpo), ptr(maxLag), ptr(total)
		out = append(out, x)
	}
	return out, rows.Err()
}

// TopicMinute aggregates a topic's partitions at one saved minute.
type TopicMinute struct {
	Topic      string
	AtMs       int64
	Partitions int
	Lagging    int // partitions with offsets behind > 0
	Unknown    int // partitions whose lag or age is unknown or only a lower bound
	// MaxLagMs counts lower bounds; MaxLagAtLeast says it is only one. Nil
	// when no partition had a figure.
	MaxLagMs         *int64
	MaxLagAtLeast    bool
	TotalLagMessages *int64 // over partitions with known lag
	MaxLagMessages   *int64
}

// add counts one partition into the topic's aggregate.
func (t *TopicMinute) add(x *PartitionSample) {
	t.Partitions++
	if x.LagMessages != nil {
		if *x.LagMessages > 0 {
			t.Lagging++
		}
		addTo(&t.TotalLagMessages, *x.LagMessages)
		raise(&t.MaxLagMessages, *x.LagMessages)
	}
	if x.LagMessages == nil || x.LagMs == nil {
		t.Unknown++
		t.MaxLagAtLeast = true
	}
	switch {
	case x.LagMs != nil:
		raise(&t.MaxLagMs, *x.LagMs)
	case x.LagMsAtLeast != nil:
		raise(&t.MaxLagMs, *x.LagMsAtLeast)
	}
}

// AddPartitionMinute saves one minute of a flow's partitions (xs: every
// partition the flow watches, sorted or not) in one transaction: a row per
// topic, a row per partition that is not caught up, and the last known
// figures of all of them for the next start. A minute saved again replaces
// what was saved of its topics then. A topic's partitions are 0..n-1 as its
// metadata lists them: the reads take a partition below n without a row as
// caught up, so one left out would read caught up, not as a gap.
func (s *Store) AddPartitionMinute(ctx context.Context, flow string, atMs int64, xs []PartitionSample) error {
	id, err := s.flowID(ctx, flow)
	if err != nil {
		return err
	}
	topics := map[string]*TopicMinute{}
	var order []string
	for i := range xs {
		t := topics[xs[i].Topic]
		if t == nil {
			t = &TopicMinute{Topic: xs[i].Topic, AtMs: atMs}
			topics[xs[i].Topic] = t
			order = append(order, xs[i].Topic)
		}
		t.add(&xs[i])
	}
	slices.Sort(order)
	snapshot := encodeLastKnown(xs)
	err = s.tx(ctx, func(tx *sql.Tx) error {
		ids, err := topicIDs(ctx, tx, id, order)
		if err != nil {
			return err
		}
		st, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO topic_lag (flow_id, at_ms, topic_id, partitions, lagging, unknown,
			max_lag_ms, max_lag_at_least, total_lag_messages, max_lag_messages) VALUES (?,?,?,?,?,?,?,?,?,?)`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, name := range order {
			t := topics[name]
			if _, err := st.ExecContext(ctx, id, atMs, ids[name], t.Partitions, t.Lagging, t.Unknown,
				t.MaxLagMs, t.MaxLagAtLeast, t.TotalLagMessages, t.MaxLagMessages); err != nil {
				return err
			}
		}
		if err := clearMinute(ctx, tx, id, atMs, order, ids); err != nil {
			return err
		}
		var lagging []int32 // the rows saved: caught-up partitions cost none
		for i := range xs {
			if !xs[i].caughtUp() {
				lagging = append(lagging, int32(i))
			}
		}
		err = insertRows(ctx, tx, `INSERT OR REPLACE INTO partition_lag (flow_id, at_ms, topic_id, partition,
			source_end, replicated, lag_messages, lag_ms, lag_ms_at_least) VALUES`, 9, len(lagging), func(args []any, i int) []any {
			x := &xs[lagging[i]]
			return append(args, id, atMs, ids[x.Topic], x.Partition,
				nullable(x.SourceEnd), nullable(x.Replicated), nullable(x.LagMessages), nullable(x.LagMs), nullable(x.LagMsAtLeast))
		})
		if err != nil {
			return err
		}
		// A minute saved late (the clock stepped back) is history, not the
		// newest figures: start-up shows the newest minute, as the history does.
		if _, err := tx.ExecContext(ctx, `INSERT INTO partition_last_known (flow_id, at_ms, snapshot) VALUES (?,?,?)
			ON CONFLICT (flow_id) DO UPDATE SET at_ms=excluded.at_ms, snapshot=excluded.snapshot
			WHERE excluded.at_ms >= partition_last_known.at_ms`,
			id, atMs, snapshot); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM partition_last_legacy WHERE flow_id=?`, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("storage: partition samples: %w", err)
	}
	return nil
}

// clearMinute deletes the partition rows of topics already saved at atMs
// (the minute saved again): a partition caught up this time must not read
// back the lag saved the first time. Other topics' rows stay, as their
// topic rows do. The first save of a minute costs one keyed lookup.
func clearMinute(ctx context.Context, tx *sql.Tx, flowID, atMs int64, topics []string, ids map[string]int64) error {
	var again bool
	err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM topic_lag WHERE flow_id=? AND at_ms=?)`, flowID, atMs).Scan(&again)
	if err != nil || !again {
		return err
	}
	for _, name := range topics {
		if _, err := tx.ExecContext(ctx, `DELETE FROM partition_lag WHERE flow_id=? AND at_ms=? AND topic_id=?`, flowID, atMs, ids[name]); err != nil {
			return err
		}
	}
	return nil
}

// topicIDs returns the numbers of a flow's topics, numbering new ones in
// tx (one read of the flow's topic list per saved minute: no cache to keep
// right across a rolled-back transaction).
func topicIDs(ctx context.Context, tx *sql.Tx, flowID int64, names []string) (map[string]int64, error) {
	out := make(map[string]int64, len(names))
	rows, err := tx.QueryContext(ctx, `SELECT name, id FROM lag_topics WHERE flow_id=?`, flowID)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var n string
		var id int64
		if err := rows.Scan(&n, &id); err != nil {
			rows.Close()
			return nil, err
		}
		out[n] = id
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, n := range names {
		if _, ok := out[n]; ok {
			continue
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO lag_topics(flow_id, name) VALUES (?,?)`, flowID, n)
		if err != nil {
			return nil, err
		}
		if out[n], err = res.LastInsertId(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// topicID returns a topic's number for reading, or false if none was saved.
func (s *Store) topicID(ctx context.Context, flowID int64, topic string) (int64, bool, error) {
	var id int64
	err := s.r.QueryRowContext(ctx, `SELECT id FROM lag_topics WHERE flow_id=? AND name=?`, flowID, topic).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return id, err == nil, err
}

// PartitionSamples returns one partition's history since sinceMs, oldest
// first: one sample per saved minute of its topic. A minute without a row
// for the partition reads CaughtUp (0 behind, 0 ms); a minute nothing was
// saved at (the source unreachable, the console stopped) has no sample at
// all: a gap, never a 0.
func (s *Store) PartitionSamples(ctx context.Context, flow, topic string, partition int32, sinceMs int64) ([]PartitionSample, error) {
	id, err := s.flowID(ctx, flow)
	if err != nil {
		return nil, err
	}
	tid, ok, err := s.topicID(ctx, id, topic)
	if err != nil || !ok {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT t.at_ms, p.partition IS NOT NULL, p.source_end, p.replicated, p.lag_messages, p.lag_ms, p.lag_ms_at_least
		FROM topic_lag t LEFT JOIN partition_lag p ON p.flow_id = t.flow_id AND p.at_ms = t.at_ms AND p.topic_id = t.topic_id AND p.partition = ?3
		WHERE t.flow_id = ?1 AND t.topic_id = ?2 AND t.at_ms >= ?4 AND (p.partition IS NOT NULL OR ?3 < t.partitions)
		ORDER BY t.at_ms`, id, tid, partition, sinceMs)
	if err != nil {
		return nil, fmt.Errorf("storage: partition samples: %w", err)
	}
	defer rows.Close()
	var out []PartitionSample
	for rows.Next() {
		x := PartitionSample{Topic: topic, Partition: partition}
		var saved bool
		var end, repl, lag, lagMs, atLeast sql.NullInt64
		if err := rows.Scan(&x.AtMs, &saved, &end, &repl, &lag, &lagMs, &atLeast); err != nil {
			return nil, err
		}
		if saved {
			x.SourceEnd, x.Replicated, x.LagMessages, x.LagMs, x.LagMsAtLeast = ptr(end), ptr(repl), ptr(lag), ptr(lagMs), ptr(atLeast)
		} else {
			var zero int64
			x.CaughtUp, x.LagMessages, x.LagMs = true, &zero, &zero
		}
		out = append(out, x)
	}
	return out, rows.Err()
}

// TopicMinutes returns a topic's saved minutes since sinceMs, oldest first.
func (s *Store) TopicMinutes(ctx context.Context, flow, topic string, sinceMs int64) ([]TopicMinute, error) {
	id, err := s.flowID(ctx, flow)
	if err != nil {
		return nil, err
	}
	tid, ok, err := s.topicID(ctx, id, topic)
	if err != nil || !ok {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT at_ms, partitions, lagging, unknown, max_lag_ms, max_lag_at_least,
		total_lag_messages, max_lag_messages FROM topic_lag WHERE flow_id=? AND topic_id=? AND at_ms >= ? ORDER BY at_ms`, id, tid, sinceMs)
	if err != nil {
		return nil, fmt.Errorf("storage: topic minutes: %w", err)
	}
	defer rows.Close()
	var out []TopicMinute
	for rows.Next() {
		x := TopicMinute{Topic: topic}
		var maxMs, total, maxMsgs sql.NullInt64
		if err := rows.Scan(&x.AtMs, &x.Partitions, &x.Lagging, &x.Unknown, &maxMs, &x.MaxLagAtLeast, &total, &maxMsgs); err != nil {
			return nil, err
		}
		x.MaxLagMs, x.TotalLagMessages, x.MaxLagMessages = ptr(maxMs), ptr(total), ptr(maxMsgs)
		out = append(out, x)
	}
	return out, rows.Err()
}

// LatestPartitionSamples returns the last saved figures of every partition
// of a flow: the last known values after a restart.
func (s *Store) LatestPartitionSamples(ctx context.Context, flow string) ([]PartitionSample, error) {
	id, err := s.flowID(ctx, flow)
	if err != nil {
		return nil, err
	}
	var atMs int64
	var blob []byte
	err = s.r.QueryRowContext(ctx, `SELECT at_ms, snapshot FROM partition_last_known WHERE flow_id=?`, id).Scan(&atMs, &blob)
	switch {
	case err == nil:
		xs, err := decodeLastKnown(blob, atMs)
		if err != nil {
			return nil, fmt.Errorf("storage: last known partition figures of %s: %w", flow, err)
		}
		return xs, nil
	case !errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("storage: last known partition figures: %w", err)
	}
	// Saved before the snapshot existed (migration 0015).
	rows, err := s.r.QueryContext(ctx, `SELECT topic, partition, at_ms, source_end, replicated, lag_messages, lag_ms
		FROM partition_last_legacy WHERE flow_id=? ORDER BY topic, partition`, id)
	if err != nil {
		return nil, fmt.Errorf("storage: last known partition figures: %w", err)
	}
	defer rows.Close()
	var out []PartitionSample
	for rows.Next() {
		var x PartitionSample
		var end, repl, lag, lagMs sql.NullInt64
		if err := rows.Scan(&x.Topic, &x.Partition, &x.AtMs, &end, &repl, &lag, &lagMs); err != nil {
			return nil, err
		}
		x.SourceEnd, x.Replicated, x.LagMessages, x.LagMs = ptr(end), ptr(repl), ptr(lag), ptr(lagMs)
		out = append(out, x)
	}
	return out, rows.Err()
}

// pruneBatch bounds the rows one prune transaction deletes, so retention
// never holds the writer for long (a variable for tests).
var pruneBatch = 20_000

// PruneLagSamples deletes topic and partition rows older than lagBeforeMs,
// raw flow samples of the minutes before lagBeforeMs's (after rolling up
// the minutes they belong to) and flow minute rollups older than
// rpoBeforeMs, flow by flow in index range batches of about pruneBatch
// rows, each its own transaction. It returns how many rows it deleted.
func (s *Store) PruneLagSamples(ctx context.Context, lagBeforeMs, rpoBeforeMs int64) (int64, error) {
	var flows []int64
	rows, err := s.r.QueryContext(ctx, `SELECT id FROM flows`)
	if err != nil {
		return 0, fmt.Errorf("storage: pruning lag history: %w", err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		flows = append(flows, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	var total int64
	for _, id := range flows {
		if err := rollUp(ctx, s.w, id, lagBeforeMs+MinuteMs); err != nil {
			return total, fmt.Errorf("storage: rolling up flow samples before pruning: %w", err)
		}
		for _, r := range []struct {
			table, at string
			before    int64
		}{
			// Whole minutes: a minute's samples are all kept or all gone,
			// so a late sample knows whether recomputing its minute is right.
			{"flow_lag_samples", "at_ms", floorMinute(lagBeforeMs)},
			{"partition_lag", "at_ms", lagBeforeMs},
			{"topic_lag", "at_ms", lagBeforeMs},
			{"flow_rpo_minutes", "minute_ms", rpoBeforeMs},
		} {
			n, err := s.pruneRange(ctx, r.table, r.at, id, r.before)
			total += n
			if err != nil {
				return total, fmt.Errorf("storage: pruning %s: %w", r.table, err)
			}
		}
	}
	return total, nil
}

// pruneRange deletes a flow's rows of table with at < before, oldest first,
// about pruneBatch rows per transaction (a batch ends at a whole
// timestamp). Every statement is a range on the (flow_id, at) key prefix.
func (s *Store) pruneRange(ctx context.Context, table, at string, flowID, before int64) (int64, error) {
	var total int64
	for {
		var edge sql.NullInt64
		err := s.r.QueryRowContext(ctx, fmt.Sprintf(`SELECT %[2]s FROM %[1]s WHERE flow_id=? AND %[2]s < ? ORDER BY %[2]s LIMIT 1 OFFSET ?`, table, at),
			flowID, before, pruneBatch).Scan(&edge)
		upTo, last := before, true
		switch {
		case err == nil:
			upTo, last = edge.Int64+1, false
		case !errors.Is(err, sql.ErrNoRows):
			return total, err
		}
		var n int64
		err = s.tx(ctx, func(tx *sql.Tx) error {
			res, err := tx.ExecContext(ctx, fmt.Sprintf(`DELETE FROM %[1]s WHERE flow_id=? AND %[2]s < ?`, table, at), flowID, upTo)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		})
		total += n
		if err != nil || last {
			return total, err
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}

func ptr(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	return &n.Int64
}

// raise sets *p to v if it is unknown or below v (p owns its figure).
func raise(p **int64, v int64) {
	switch {
	case *p == nil:
		n := v // only a new figure is allocated
		*p = &n
	case v > **p:
		**p = v
	}
}

// addTo adds v to *p, an unknown sum starting at v (p owns its figure).
func addTo(p **int64, v int64) {
	if *p == nil {
		n := v
		*p = &n
	} else {
		**p += v
	}
}
