package storage

import (
	"context"
	"database/sql"
	"fmt"
)

// FlowSample is a flow's recovery point at one refresh. A nil figure was
// unknown at that moment and is stored as NULL, never as 0.
type FlowSample struct {
	AtMs           int64
	RPOMs          *int64
	LagMessages    *int64
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
}

// AddFlowSample records a flow's figures.
func (s *Store) AddFlowSample(ctx context.Context, flow string, x FlowSample) error {
	id, err := s.flowID(ctx, flow)
	if err != nil {
		return err
	}
	_, err = s.w.ExecContext(ctx, `INSERT OR REPLACE INTO flow_lag_samples
		(flow_id, at_ms, rpo_ms, lag_messages, heartbeat_age_ms, status) VALUES (?,?,?,?,?,?)`,
		id, x.AtMs, x.RPOMs, x.LagMessages, x.HeartbeatAgeMs, x.Status)
	if err != nil {
		return fmt.Errorf("storage: flow sample: %w", err)
	}
	return nil
}

// FlowSamples returns a flow's samples since sinceMs, oldest first.
func (s *Store) FlowSamples(ctx context.Context, flow string, sinceMs int64) ([]FlowSample, error) {
	id, err := s.flowID(ctx, flow)
	if err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT at_ms, rpo_ms, lag_messages, heartbeat_age_ms, status
		FROM flow_lag_samples WHERE flow_id=? AND at_ms >= ? ORDER BY at_ms`, id, sinceMs)
	if err != nil {
		return nil, fmt.Errorf("storage: flow samples: %w", err)
	}
	defer rows.Close()
	var out []FlowSample
	for rows.Next() {
		var x FlowSample
		var rpo, lag, hb sql.NullInt64
		if err := rows.Scan(&x.AtMs, &rpo, &lag, &hb, &x.Status); err != nil {
			return nil, err
		}
		x.RPOMs, x.LagMessages, x.HeartbeatAgeMs = ptr(rpo), ptr(lag), ptr(hb)
		out = append(out, x)
	}
	return out, rows.Err()
}

// AddPartitionSamples records many partitions' figures in one transaction.
func (s *Store) AddPartitionSamples(ctx context.Context, flow string, xs []PartitionSample) error {
	id, err := s.flowID(ctx, flow)
	if err != nil {
		return err
	}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO partition_lag_samples
			(flow_id, topic, partition, at_ms, source_end, replicated, lag_messages, lag_ms) VALUES (?,?,?,?,?,?,?,?)`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, x := range xs {
			if _, err := st.ExecContext(ctx, id, x.Topic, x.Partition, x.AtMs, x.SourceEnd, x.Replicated, x.LagMessages, x.LagMs); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("storage: partition samples: %w", err)
	}
	return nil
}

// PartitionSamples returns one partition's samples since sinceMs, oldest first.
func (s *Store) PartitionSamples(ctx context.Context, flow, topic string, partition int32, sinceMs int64) ([]PartitionSample, error) {
	id, err := s.flowID(ctx, flow)
	if err != nil {
		return nil, err
	}
	return s.queryPartitionSamples(ctx, `SELECT topic, partition, at_ms, source_end, replicated, lag_messages, lag_ms
		FROM partition_lag_samples WHERE flow_id=? AND topic=? AND partition=? AND at_ms >= ? ORDER BY at_ms`,
		id, topic, partition, sinceMs)
}

// LatestPartitionSamples returns the newest sample of every partition of a
// flow: the last known values after a restart.
func (s *Store) LatestPartitionSamples(ctx context.Context, flow string) ([]PartitionSample, error) {
	id, err := s.flowID(ctx, flow)
	if err != nil {
		return nil, err
	}
	return s.queryPartitionSamples(ctx, `SELECT topic, partition, max(at_ms), source_end, replicated, lag_messages, lag_ms
		FROM partition_lag_samples WHERE flow_id=? GROUP BY topic, partition`, id)
}

func (s *Store) queryPartitionSamples(ctx context.Context, q string, args ...any) ([]PartitionSample, error) {
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("storage: partition samples: %w", err)
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

// PruneLagSamples deletes samples older than beforeMs.
func (s *Store) PruneLagSamples(ctx context.Context, beforeMs int64) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM flow_lag_samples WHERE at_ms < ?`, beforeMs); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM partition_lag_samples WHERE at_ms < ?`, beforeMs)
		return err
	})
}

func ptr(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	return &n.Int64
}
