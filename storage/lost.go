package storage

import (
	"context"
	"database/sql"
	"fmt"
)

// LostFigure is the last lost-to-DR figures read from the old primary for
// one partition of a failover run (lost_last): Figures as the runbook
// encodes them, AsOfMs when they were read.
type LostFigure struct {
	Topic     string
	Partition int32
	AsOfMs    int64
	Figures   string
}

// SaveLostLast keeps fs as run's last known lost-to-DR figures, replacing
// a partition's older ones; a figure older than the one kept is ignored.
func (s *Store) SaveLostLast(ctx context.Context, runID int64, fs []LostFigure) error {
	if len(fs) == 0 {
		return nil
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO lost_last (run_id, topic, partition, as_of_ms, figures) VALUES (?,?,?,?,?)
			ON CONFLICT (run_id, topic, partition) DO UPDATE SET as_of_ms=excluded.as_of_ms, figures=excluded.figures
			WHERE excluded.as_of_ms >= lost_last.as_of_ms`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, f := range fs {
			if _, err := stmt.ExecContext(ctx, runID, f.Topic, f.Partition, f.AsOfMs, f.Figures); err != nil {
				return fmt.Errorf("storage: keeping the lost-to-DR figures of run %d: %w", runID, err)
			}
		}
		return nil
	})
}

// LostLast returns run's last known lost-to-DR figures, by topic and
// partition; none when none were ever read.
func (s *Store) LostLast(ctx context.Context, runID int64) ([]LostFigure, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT topic, partition, as_of_ms, figures FROM lost_last WHERE run_id=? ORDER BY topic, partition`, runID)
	if err != nil {
		return nil, fmt.Errorf("storage: the lost-to-DR figures of run %d: %w", runID, err)
	}
	defer rows.Close()
	var out []LostFigure
	for rows.Next() {
		var f LostFigure
		if err := rows.Scan(&f.Topic, &f.Partition, &f.AsOfMs, &f.Figures); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}
