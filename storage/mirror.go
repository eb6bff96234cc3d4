package storage

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/drconsole/drconsole/model"
)

// Batch is what ingestion read from one partition of one internal topic:
// the decoded records and the offset to resume from. It is stored
// atomically, so a crash either keeps all of it or none.
type Batch struct {
	Flow           string
	Topic          string // the internal topic consumed
	Partition      int32
	Incarnation    int64 // of Topic; every record of the batch is stored with it
	NextOffset     int64
	Syncs          []model.OffsetSync
	Checkpoints    []model.Checkpoint
	Heartbeats     []model.Heartbeat // Count is the number of heartbeats this batch adds
	ConnectOffsets []model.ConnectOffset
}

// Apply stores b and its resume position in one transaction. Records at or
// past an already stored position are ignored (INSERT OR IGNORE on the
// incarnation and log offset), so replaying a batch after a crash cannot
// store anything twice; a record of a newer incarnation is always newer.
func (s *Store) Apply(ctx context.Context, b Batch) error {
	id, err := s.flowID(ctx, b.Flow)
	if err != nil {
		return err
	}
	now := time.Now().UnixMilli()
	err = s.tx(ctx, func(tx *sql.Tx) error {
		if err := insertSyncs(ctx, tx, id, b.Incarnation, b.Syncs); err != nil {
			return err
		}
		err := upsertRows(ctx, tx, `INSERT INTO checkpoints
			(flow_id, group_id, topic, partition, upstream, downstream, metadata, log_offset, record_ms, incarnation) VALUES`,
			`ON CONFLICT DO UPDATE SET upstream=excluded.upstream, downstream=excluded.downstream,
				metadata=excluded.metadata, log_offset=excluded.log_offset, record_ms=excluded.record_ms,
				incarnation=excluded.incarnation
			WHERE (excluded.incarnation, excluded.log_offset) > (checkpoints.incarnation, checkpoints.log_offset)`,
			10, len(b.Checkpoints), func(args []any, i int) []any {
				c := &b.Checkpoints[i]
				return append(args, id, c.Group, c.Topic, c.Partition, c.Upstream, c.Downstream, c.Metadata, c.LogOffset, c.RecordMs, b.Incarnation)
			})
		if err != nil {
			return err
		}
		err = upsertRows(ctx, tx, `INSERT INTO heartbeats
			(flow_id, source_alias, target_alias, emitted_ms, log_offset, count, incarnation) VALUES`,
			`ON CONFLICT DO UPDATE SET emitted_ms=max(emitted_ms, excluded.emitted_ms),
				log_offset=excluded.log_offset, count=count+excluded.count, incarnation=excluded.incarnation
			WHERE (excluded.incarnation, excluded.log_offset) > (heartbeats.incarnation, heartbeats.log_offset)`,
			7, len(b.Heartbeats), func(args []any, i int) []any {
				h := &b.Heartbeats[i]
				return append(args, id, h.SourceAlias, h.TargetAlias, h.EmittedMs, h.LogOffset, h.Count, b.Incarnation)
			})
		if err != nil {
			return err
		}
		err = upsertRows(ctx, tx, `INSERT INTO connect_offsets
			(flow_id, topic, partition, last_offset, log_offset, record_ms, incarnation) VALUES`,
			`ON CONFLICT DO UPDATE SET last_offset=excluded.last_offset, log_offset=excluded.log_offset,
				record_ms=excluded.record_ms, incarnation=excluded.incarnation
			WHERE (excluded.incarnation, excluded.log_offset) > (connect_offsets.incarnation, connect_offsets.log_offset)`,
			7, len(b.ConnectOffsets), func(args []any, i int) []any {
				c := &b.ConnectOffsets[i]
				return append(args, id, c.Topic, c.Partition, c.LastOffset, c.LogOffset, c.RecordMs, b.Incarnation)
			})
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO ingest_positions (flow_id, topic, incarnation, partition, next_offset, updated_ms)
			VALUES (?,?,?,?,?,?) ON CONFLICT DO UPDATE SET next_offset=excluded.next_offset, updated_ms=excluded.updated_ms`,
			id, b.Topic, b.Incarnation, b.Partition, b.NextOffset, now)
		return err
	})
	if len(b.Checkpoints) > 0 {
		s.groupRows.Add(1) // after the commit, and after a failed one too: never a missed change
	}
	if err != nil {
		return fmt.Errorf("storage: storing %s/%d of flow %s: %w", b.Topic, b.Partition, b.Flow, err)
	}
	return nil
}

func insertSyncs(ctx context.Context, tx *sql.Tx, flowID, incarnation int64, syncs []model.OffsetSync) error {
	return insertRows(ctx, tx, "INSERT OR IGNORE INTO offset_syncs (flow_id, incarnation, topic, partition, log_offset, upstream, downstream, record_ms) VALUES",
		8, len(syncs), func(args []any, i int) []any {
			x := &syncs[i]
			return append(args, flowID, incarnation, x.Topic, x.Partition, x.LogOffset, x.Upstream, x.Downstream, x.RecordMs)
		})
}

// Position returns where ingestion of topic/partition resumes in the newest
// incarnation of topic ingested; ok is false when it never ran.
func (s *Store) Position(ctx context.Context, flow, topic string, partition int32) (next int64, ok bool, err error) {
	return s.position(ctx, flow, topic, -1, partition)
}

// PositionIn returns where ingestion of topic/partition resumes in one
// incarnation of topic; ok is false when it never ran there.
func (s *Store) PositionIn(ctx context.Context, flow, topic string, incarnation int64, partition int32) (next int64, ok bool, err error) {
	return s.position(ctx, flow, topic, incarnation, partition)
}

// position: incarnation -1 means the newest.
func (s *Store) position(ctx context.Context, flow, topic string, incarnation int64, partition int32) (next int64, ok bool, err error) {
	id, err := s.flowID(ctx, flow)
	if err != nil {
		return 0, false, err
	}
	err = s.r.QueryRowContext(ctx, `SELECT next_offset FROM ingest_positions WHERE flow_id=? AND topic=? AND partition=?
		AND (incarnation=? OR ?=-1) ORDER BY incarnation DESC LIMIT 1`,
		id, topic, partition, incarnation, incarnation).Scan(&next)
	if err == sql.ErrNoRows {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("storage: ingest position: %w", err)
	}
	return next, true, nil
}

// LatestSyncs returns the newest sync of every partition of a flow. It reads
// the whole table: for start-up, not for every request.
func (s *Store) LatestSyncs(ctx context.Context, flow string) ([]model.OffsetSync, error) {
	id, err := s.flowID(ctx, flow)
	if err != nil {
		return nil, err
	}
	return s.querySyncs(ctx, `SELECT topic, partition, upstream, downstream, log_offset, record_ms, incarnation
		FROM (SELECT *, row_number() OVER (PARTITION BY topic, partition ORDER BY incarnation DESC, log_offset DESC) AS n
			FROM offset_syncs WHERE flow_id=?) WHERE n=1`, id)
}

// EachSync calls fn for every stored sync of a flow in MM2's write order.
func (s *Store) EachSync(ctx context.Context, flow string, fn func(model.OffsetSync) error) error {
	id, err := s.flowID(ctx, flow)
	if err != nil {
		return err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT topic, partition, upstream, downstream, log_offset, record_ms, incarnation
		FROM offset_syncs WHERE flow_id=? ORDER BY incarnation, log_offset`, id)
	if err != nil {
		return fmt.Errorf("storage: reading syncs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var x model.OffsetSync
		if err := rows.Scan(&x.Topic, &x.Partition, &x.Upstream, &x.Downstream, &x.LogOffset, &x.RecordMs, &x.Incarnation); err != nil {
			return err
		}
		if err := fn(x); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (s *Store) querySyncs(ctx context.Context, q string, args ...any) ([]model.OffsetSync, error) {
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("storage: reading syncs: %w", err)
	}
	defer rows.Close()
	var out []model.OffsetSync
	for rows.Next() {
		var x model.OffsetSync
		if err := rows.Scan(&x.Topic, &x.Partition, &x.Upstream, &x.Downstream, &x.LogOffset, &x.RecordMs, &x.Incarnation); err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, rows.Err()
}

// DeleteSyncs deletes syncs by their keys, in one transaction.
func (s *Store) DeleteSyncs(ctx context.Context, flow string, keys []model.SyncKey) error {
	id, err := s.flowID(ctx, flow)
	if err != nil {
		return err
	}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `DELETE FROM offset_syncs WHERE flow_id=? AND incarnation=? AND log_offset=?`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, k := range keys {
			if _, err := st.ExecContext(ctx, id, k.Incarnation, k.LogOffset); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("storage: deleting syncs of %s: %w", flow, err)
	}
	return nil
}

// CountSyncs returns how many syncs are stored for a flow.
func (s *Store) CountSyncs(ctx context.Context, flow string) (int64, error) {
	id, err := s.flowID(ctx, flow)
	if err != nil {
		return 0, err
	}
	var n int64
	err = s.r.QueryRowContext(ctx, `SELECT count(*) FROM offset_syncs WHERE flow_id=?`, id).Scan(&n)
	return n, err
}

// Checkpoints returns the latest checkpoint of every group and partition.
func (s *Store) Checkpoints(ctx context.Context, flow string) ([]model.Checkpoint, error) {
	id, err := s.flowID(ctx, flow)
	if err != nil {
		return nil, err
	}
	out, err := s.queryCheckpoints(ctx, `WHERE flow_id=? ORDER BY group_id, topic, partition`, id)
	if err != nil {
		return nil, fmt.Errorf("storage: reading checkpoints: %w", err)
	}
	return out, nil
}

// queryCheckpoints reads the checkpoints rows where says (a WHERE and
// ORDER BY clause over args).
func (s *Store) queryCheckpoints(ctx context.Context, where string, args ...any) ([]model.Checkpoint, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT group_id, topic, partition, upstream, downstream, metadata, log_offset, record_ms
		FROM checkpoints `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []model.Checkpoint
	for rows.Next() {
		var c model.Checkpoint
		if err := rows.Scan(&c.Group, &c.Topic, &c.Partition, &c.Upstream, &c.Downstream, &c.Metadata, &c.LogOffset, &c.RecordMs); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// GroupCheckpoints returns MM2's latest checkpoints of one consumer group
// of flow, by DR topic and partition: a read of that group's rows only.
func (s *Store) GroupCheckpoints(ctx context.Context, flow, group string) ([]model.Checkpoint, error) {
	id, err := s.flowID(ctx, flow)
	if err != nil {
		return nil, err
	}
	out, err := s.queryCheckpoints(ctx, `WHERE flow_id=? AND group_id=? ORDER BY topic, partition`, id, group)
	if err != nil {
		return nil, fmt.Errorf("storage: reading checkpoints of group %s: %w", group, err)
	}
	return out, nil
}

// CheckpointGroups returns, per consumer group of flow that MM2
// checkpointed, the time of its newest checkpoint record (epoch ms).
func (s *Store) CheckpointGroups(ctx context.Context, flow string) (map[string]int64, error) {
	id, err := s.flowID(ctx, flow)
	if err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT group_id, MAX(record_ms) FROM checkpoints WHERE flow_id=? GROUP BY group_id`, id)
	if err != nil {
		return nil, fmt.Errorf("storage: reading checkpointed groups: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var g string
		var ms int64
		if err := rows.Scan(&g, &ms); err != nil {
			return nil, err
		}
		out[g] = ms
	}
	return out, rows.Err()
}

// Heartbeats returns the newest heartbeat per alias pair.
func (s *Store) Heartbeats(ctx context.Context, flow string) ([]model.Heartbeat, error) {
	id, err := s.flowID(ctx, flow)
	if err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT source_alias, target_alias, emitted_ms, log_offset, count
		FROM heartbeats WHERE flow_id=?`, id)
	if err != nil {
		return nil, fmt.Errorf("storage: reading heartbeats: %w", err)
	}
	defer rows.Close()
	var out []model.Heartbeat
	for rows.Next() {
		var h model.Heartbeat
		if err := rows.Scan(&h.SourceAlias, &h.TargetAlias, &h.EmittedMs, &h.LogOffset, &h.Count); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// ConnectOffsets returns MirrorSourceConnector's latest position per partition.
func (s *Store) ConnectOffsets(ctx context.Context, flow string) ([]model.ConnectOffset, error) {
	id, err := s.flowID(ctx, flow)
	if err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT topic, partition, last_offset, log_offset, record_ms, incarnation
		FROM connect_offsets WHERE flow_id=?`, id)
	if err != nil {
		return nil, fmt.Errorf("storage: reading connect offsets: %w", err)
	}
	defer rows.Close()
	var out []model.ConnectOffset
	for rows.Next() {
		var c model.ConnectOffset
		if err := rows.Scan(&c.Topic, &c.Partition, &c.LastOffset, &c.LogOffset, &c.RecordMs, &c.Incarnation); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
