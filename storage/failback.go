package storage

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/drconsole/drconsole/model"
)

// CompletedFailovers lists flow's completed runs that are not drills
// (plans with "drill": true), the last completed first, with their plans: what decides
// which side of the flow is active.
func (s *Store) CompletedFailovers(ctx context.Context, flow string, limit int) ([]model.Run, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, flow, reason, created_by, created_ms, updated_ms, status, plan_json, plan_hash, approvals_required, break_glass
		FROM failover_runs WHERE flow=? AND status='completed' AND COALESCE(json_extract(plan_json, '$.drill'), 0) = 0
		ORDER BY updated_ms DESC, id DESC LIMIT ?`, flow, limit)
	if err != nil {
		return nil, fmt.Errorf("storage: completed failovers of %s: %w", flow, err)
	}
	defer rows.Close()
	var out []model.Run
	for rows.Next() {
		var r model.Run
		if err := rows.Scan(&r.ID, &r.Flow, &r.Reason, &r.CreatedBy, &r.CreatedMs, &r.UpdatedMs, &r.Status, &r.PlanJSON, &r.PlanHash,
			&r.ApprovalsRequired, &r.BreakGlass); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// FailedOverSpans are the times flow was failed over, oldest first: each
// completed failover (drills excluded) opens one, the next completed
// failback closes it. A failover completed while one is open (a second
// failover without a failback) leaves the first open span as it was.
func (s *Store) FailedOverSpans(ctx context.Context, flow string) ([]model.FailedOverSpan, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, updated_ms, COALESCE(json_extract(plan_json, '$.failback'), 0)
		FROM failover_runs WHERE flow=? AND status='completed' AND COALESCE(json_extract(plan_json, '$.drill'), 0) = 0
		ORDER BY updated_ms, id`, flow)
	if err != nil {
		return nil, fmt.Errorf("storage: failed-over spans of %s: %w", flow, err)
	}
	defer rows.Close()
	var out []model.FailedOverSpan
	open := false
	for rows.Next() {
		var id, at int64
		var failback bool
		if err := rows.Scan(&id, &at, &failback); err != nil {
			return nil, err
		}
		switch {
		case failback && open:
			out[len(out)-1].UntilMs, out[len(out)-1].UntilRun, open = at, id, false
		case !failback && !open:
			out, open = append(out, model.FailedOverSpan{Run: id, FromMs: at}), true
		}
	}
	return out, rows.Err()
}

// SaveFailoverCut stores the positions a run recorded when it stopped the
// mirror. The first record of a run stands: a step resumed after a crash
// reads DR again, perhaps after new writes there, which are not the cut.
func (s *Store) SaveFailoverCut(ctx context.Context, runID int64, cut []model.CutPosition) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM failover_cuts WHERE run_id=?`, runID).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO failover_cuts (run_id, topic, partition, remote_topic, dr_end, sync_up, sync_down, connect_last, at_ms, dr_stable_end)
			VALUES (?,?,?,?,?,?,?,?,?,?)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, c := range cut {
			if _, err := stmt.ExecContext(ctx, runID, c.Topic, c.Partition, c.RemoteTopic, c.DREnd, c.SyncUp, c.SyncDown, c.ConnectLast, c.AtMs, c.DRStableEnd); err != nil {
				return fmt.Errorf("storage: recording the cut of run %d: %w", runID, err)
			}
		}
		return nil
	})
}

// FailoverCut returns what run recorded at its cut, by topic and
// partition; none when it recorded nothing (runs from before 0017, runs
// that never stopped a mirror).
func (s *Store) FailoverCut(ctx context.Context, runID int64) ([]model.CutPosition, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT topic, partition, remote_topic, dr_end, sync_up, sync_down, connect_last, at_ms, dr_stable_end
		FROM failover_cuts WHERE run_id=? ORDER BY topic, partition`, runID)
	if err != nil {
		return nil, fmt.Errorf("storage: the cut of run %d: %w", runID, err)
	}
	defer rows.Close()
	var out []model.CutPosition
	for rows.Next() {
		var c model.CutPosition
		if err := rows.Scan(&c.Topic, &c.Partition, &c.RemoteTopic, &c.DREnd, &c.SyncUp, &c.SyncDown, &c.ConnectLast, &c.AtMs, &c.DRStableEnd); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
