package storage

import (
	"context"
	"database/sql"
	"fmt"
)

// GroupOffset is a group's committed offset on the primary, as last read.
type GroupOffset struct {
	Group     string
	Topic     string
	Partition int32
	Offset    int64
	AtMs      int64
}

// RecordPrimaryGroupOffsets stores the offsets read from the primary in one
// transaction, replacing older readings of the same partitions.
func (s *Store) RecordPrimaryGroupOffsets(ctx context.Context, flow string, offs []GroupOffset) error {
	id, err := s.flowID(ctx, flow)
	if err != nil {
		return err
	}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `INSERT INTO primary_group_offsets (flow_id, group_id, topic, partition, offset, at_ms)
			VALUES (?,?,?,?,?,?) ON CONFLICT DO UPDATE SET offset=excluded.offset, at_ms=excluded.at_ms WHERE excluded.at_ms >= at_ms`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, o := range offs {
			if _, err := st.ExecContext(ctx, id, o.Group, o.Topic, o.Partition, o.Offset, o.AtMs); err != nil {
				return err
			}
		}
		return nil
	})
	s.groupRows.Add(1)
	if err != nil {
		return fmt.Errorf("storage: recording primary group offsets: %w", err)
	}
	return nil
}

// PrimaryGroupOffsets returns the last recorded primary offsets of a group.
func (s *Store) PrimaryGroupOffsets(ctx context.Context, flow, group string) ([]GroupOffset, error) {
	id, err := s.flowID(ctx, flow)
	if err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT group_id, topic, partition, offset, at_ms FROM primary_group_offsets
		WHERE flow_id=? AND group_id=? ORDER BY topic, partition`, id, group)
	if err != nil {
		return nil, fmt.Errorf("storage: reading primary group offsets: %w", err)
	}
	defer rows.Close()
	var out []GroupOffset
	for rows.Next() {
		var o GroupOffset
		if err := rows.Scan(&o.Group, &o.Topic, &o.Partition, &o.Offset, &o.AtMs); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, rows.Err()
}
