package storage

import (
	"context"
	"fmt"
)

// AbortedBatch is a batch of an aborted transaction that MM2 copied to DR.
type AbortedBatch struct {
	Topic       string
	TopicID     string
	Partition   int32
	First, Last int64
	Records     int64
	AtMs        int64
}

// AddAbortedBatch records b for flow; recording it again changes nothing.
func (s *Store) AddAbortedBatch(ctx context.Context, flow string, b AbortedBatch) error {
	id, err := s.flowID(ctx, flow)
	if err != nil {
		return err
	}
	if _, err := s.w.ExecContext(ctx, `INSERT OR IGNORE INTO aborted_in_dr
		(flow_id, topic, topic_id, partition, first_offset, last_offset, records, at_ms) VALUES (?,?,?,?,?,?,?,?)`,
		id, b.Topic, b.TopicID, b.Partition, b.First, b.Last, b.Records, b.AtMs); err != nil {
		return fmt.Errorf("storage: aborted batch of %s-%d: %w", b.Topic, b.Partition, err)
	}
	return nil
}

// AbortedBatches lists what is recorded for flow, oldest first.
func (s *Store) AbortedBatches(ctx context.Context, flow string) ([]AbortedBatch, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT a.topic, a.topic_id, a.partition, a.first_offset, a.last_offset, a.records, a.at_ms
		FROM aborted_in_dr a JOIN flows f ON f.id = a.flow_id WHERE f.name = ? ORDER BY a.at_ms, a.last_offset`, flow)
	if err != nil {
		return nil, fmt.Errorf("storage: aborted batches of %s: %w", flow, err)
	}
	defer rows.Close()
	var out []AbortedBatch
	for rows.Next() {
		var b AbortedBatch
		if err := rows.Scan(&b.Topic, &b.TopicID, &b.Partition, &b.First, &b.Last, &b.Records, &b.AtMs); err != nil {
			return nil, fmt.Errorf("storage: aborted batches of %s: %w", flow, err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("storage: aborted batches of %s: %w", flow, err)
	}
	return out, nil
}
