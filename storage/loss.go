package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/drconsole/drconsole/model"
)

// ErrNoIncident is returned when acknowledging an unknown or already
// acknowledged incident.
var ErrNoIncident = errors.New("no such unacknowledged loss incident")

// AddLossIncident stores a confirmed loss and returns its id.
func (s *Store) AddLossIncident(ctx context.Context, x model.LossIncident) (int64, error) {
	id, err := s.flowID(ctx, x.Flow)
	if err != nil {
		return 0, err
	}
	res, err := s.w.ExecContext(ctx, `INSERT INTO loss_incidents
		(flow_id, topic, partition, first_offset, last_offset, lost, detected_ms, confirmed_ms, how) VALUES (?,?,?,?,?,?,?,?,?)`,
		id, x.Topic, x.Partition, x.FirstOffset, x.LastOffset, x.Lost, x.DetectedMs, x.ConfirmedMs, x.How)
	if err != nil {
		return 0, fmt.Errorf("storage: recording the loss of %s-%d %d..%d in flow %s: %w", x.Topic, x.Partition, x.FirstOffset, x.LastOffset, x.Flow, err)
	}
	return res.LastInsertId()
}

// LossIncidents returns a flow's incidents, newest first; unacked limits
// them to the ones not acknowledged yet. flow "" means every flow.
func (s *Store) LossIncidents(ctx context.Context, flow string, unacked bool, limit int) ([]model.LossIncident, error) {
	return s.lossIncidents(ctx, flow, 0, unacked, limit)
}

// OpenLossIncident returns incident id of flow if it is not acknowledged
// yet, else ErrNoIncident.
func (s *Store) OpenLossIncident(ctx context.Context, flow string, id int64) (model.LossIncident, error) {
	xs, err := s.lossIncidents(ctx, flow, id, true, 1)
	if err != nil {
		return model.LossIncident{}, err
	}
	if len(xs) == 0 || id == 0 {
		return model.LossIncident{}, ErrNoIncident
	}
	return xs[0], nil
}

// lossIncidents: id 0 means any incident.
func (s *Store) lossIncidents(ctx context.Context, flow string, id int64, unacked bool, limit int) ([]model.LossIncident, error) {
	q := `SELECT i.id, f.name, i.topic, i.partition, i.first_offset, i.last_offset, i.lost, i.detected_ms, i.confirmed_ms,
		i.how, i.acked_ms, coalesce(i.acked_by, '') FROM loss_incidents i JOIN flows f ON f.id = i.flow_id
		WHERE (? = '' OR f.name = ?) AND (? = 0 OR i.id = ?) AND (NOT ? OR i.acked_ms IS NULL)
		ORDER BY i.confirmed_ms DESC, i.id DESC LIMIT ?`
	rows, err := s.r.QueryContext(ctx, q, flow, flow, id, id, unacked, limit)
	if err != nil {
		return nil, fmt.Errorf("storage: reading loss incidents: %w", err)
	}
	defer rows.Close()
	var out []model.LossIncident
	for rows.Next() {
		var x model.LossIncident
		var acked sql.NullInt64
		if err := rows.Scan(&x.ID, &x.Flow, &x.Topic, &x.Partition, &x.FirstOffset, &x.LastOffset, &x.Lost, &x.DetectedMs,
			&x.ConfirmedMs, &x.How, &acked, &x.AckedBy); err != nil {
			return nil, err
		}
		x.AckedMs = ptr(acked)
		out = append(out, x)
	}
	return out, rows.Err()
}

// LossTotals returns how many incidents flow has recorded and how many
// offsets they lost in all: the counters exported as metrics.
func (s *Store) LossTotals(ctx context.Context, flow string) (incidents, lost int64, err error) {
	err = s.r.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(i.lost), 0) FROM loss_incidents i
		JOIN flows f ON f.id = i.flow_id WHERE f.name = ?`, flow).Scan(&incidents, &lost)
	if err != nil {
		return 0, 0, fmt.Errorf("storage: loss totals of %s: %w", flow, err)
	}
	return incidents, lost, nil
}

// AckLossIncident marks an incident of flow acknowledged by an operator.
func (s *Store) AckLossIncident(ctx context.Context, flow string, id int64, by string, atMs int64) error {
	fid, err := s.flowID(ctx, flow)
	if err != nil {
		return err
	}
	res, err := s.w.ExecContext(ctx, `UPDATE loss_incidents SET acked_ms=?, acked_by=? WHERE id=? AND flow_id=? AND acked_ms IS NULL`,
		atMs, by, id, fid)
	if err != nil {
		return fmt.Errorf("storage: acknowledging loss incident %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNoIncident
	}
	return nil
}
