package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// FailoverRun is a stored failover run.
type FailoverRun struct {
	ID                int64
	Flow              string
	Reason            string
	CreatedBy         string
	CreatedMs         int64
	UpdatedMs         int64
	Status            string
	PlanJSON          string
	PlanHash          string
	ApprovalsRequired int
	BreakGlass        string
	Approvals         []FailoverApproval
	Steps             []FailoverStep
}

// FailoverApproval is an approval or rejection of a run's plan.
type FailoverApproval struct {
	ID        int64
	Approver  string
	Decision  string // approve, reject
	Reason    string
	PlanHash  string
	AtMs      int64
	ExpiresMs int64
}

// FailoverStep is a step's execution record.
type FailoverStep struct {
	Idx        int
	Kind       string
	Status     string // pending, running, done, failed
	Attempts   int
	StartedMs  int64
	FinishedMs int64
	StartedBy  string
	Result     string
	Error      string
}

// ErrNotFound is returned for a missing record.
var ErrNotFound = errors.New("not found")

// ErrConflict is returned when a record was not in the expected state: some
// other request changed it first.
var ErrConflict = errors.New("changed by someone else")

// CreateFailoverRun stores a new run with its steps, all pending.
func (s *Store) CreateFailoverRun(ctx context.Context, r FailoverRun, kinds []string) (int64, error) {
	var id int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO failover_runs (flow, reason, created_by, created_ms, updated_ms, status, plan_json, plan_hash, approvals_required)
			VALUES (?,?,?,?,?,'pending',?,?,?)`, r.Flow, r.Reason, r.CreatedBy, r.CreatedMs, r.CreatedMs, r.PlanJSON, r.PlanHash, r.ApprovalsRequired)
		if err != nil {
			return err
		}
		if id, err = res.LastInsertId(); err != nil {
			return err
		}
		return insertSteps(ctx, tx, id, kinds)
	})
	if err != nil {
		return 0, fmt.Errorf("storage: creating failover run: %w", err)
	}
	return id, nil
}

func insertSteps(ctx context.Context, tx *sql.Tx, runID int64, kinds []string) error {
	for i, k := range kinds {
		if _, err := tx.ExecContext(ctx, `INSERT INTO failover_steps (run_id, idx, kind, status) VALUES (?,?,?,'pending')`, runID, i, k); err != nil {
			return err
		}
	}
	return nil
}

// ReplaceFailoverPlan swaps a pending run's plan (and steps); approvals
// given for the old plan hash no longer count.
func (s *Store) ReplaceFailoverPlan(ctx context.Context, runID int64, planJSON, planHash, reason string, kinds []string, nowMs int64) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE failover_runs SET plan_json=?, plan_hash=?, reason=?, updated_ms=?
			WHERE id=? AND status='pending'`, planJSON, planHash, reason, nowMs, runID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("storage: run %d is not pending: %w", runID, ErrConflict)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM failover_steps WHERE run_id=?`, runID); err != nil {
			return err
		}
		return insertSteps(ctx, tx, runID, kinds)
	})
}

// SetFailoverStatus moves a run from one status to another; ErrConflict
// when it was not in from.
func (s *Store) SetFailoverStatus(ctx context.Context, runID int64, from []string, to string, nowMs int64) error {
	q := `UPDATE failover_runs SET status=?, updated_ms=? WHERE id=? AND status IN (` + placeholders(len(from)) + `)`
	args := []any{to, nowMs, runID}
	for _, f := range from {
		args = append(args, f)
	}
	res, err := s.w.ExecContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("storage: run %d status: %w", runID, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("storage: run %d is not %v: %w", runID, from, ErrConflict)
	}
	return nil
}

// SetBreakGlass records a single-operator override of the approval gate.
func (s *Store) SetBreakGlass(ctx context.Context, runID int64, reason string, nowMs int64) error {
	res, err := s.w.ExecContext(ctx, `UPDATE failover_runs SET break_glass=?, status='approved', updated_ms=? WHERE id=? AND status='pending'`,
		reason, nowMs, runID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("storage: run %d is not pending: %w", runID, ErrConflict)
	}
	return nil
}

// AddFailoverApproval records an approval or a rejection.
func (s *Store) AddFailoverApproval(ctx context.Context, runID int64, a FailoverApproval) (int64, error) {
	res, err := s.w.ExecContext(ctx, `INSERT INTO failover_approvals (run_id, approver, decision, reason, plan_hash, at_ms, expires_ms)
		VALUES (?,?,?,?,?,?,?)`, runID, a.Approver, a.Decision, a.Reason, a.PlanHash, a.AtMs, a.ExpiresMs)
	if err != nil {
		return 0, fmt.Errorf("storage: recording approval: %w", err)
	}
	return res.LastInsertId()
}

// StartFailoverStep marks a step running if it is pending, failed (a retry)
// or running (resuming after a crash); done steps are never restarted.
func (s *Store) StartFailoverStep(ctx context.Context, runID int64, idx int, actor string, nowMs int64) error {
	res, err := s.w.ExecContext(ctx, `UPDATE failover_steps SET status='running', attempts=attempts+1, started_ms=?, started_by=?, error=''
		WHERE run_id=? AND idx=? AND status IN ('pending','failed','running')`, nowMs, actor, runID, idx)
	if err != nil {
		return fmt.Errorf("storage: starting step %d of run %d: %w", idx, runID, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("storage: step %d of run %d is done already: %w", idx, runID, ErrConflict)
	}
	return nil
}

// FinishFailoverStep records a step's outcome.
func (s *Store) FinishFailoverStep(ctx context.Context, runID int64, idx int, result string, failure error, nowMs int64) error {
	status, msg := "done", ""
	if failure != nil {
		status, msg = "failed", failure.Error()
	}
	res, err := s.w.ExecContext(ctx, `UPDATE failover_steps SET status=?, result=?, error=?, finished_ms=? WHERE run_id=? AND idx=? AND status='running'`,
		status, result, msg, nowMs, runID, idx)
	if err != nil {
		return fmt.Errorf("storage: finishing step %d of run %d: %w", idx, runID, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("storage: step %d of run %d was not running: %w", idx, runID, ErrConflict)
	}
	return nil
}

// FailoverRun loads a run with its approvals and steps.
func (s *Store) FailoverRun(ctx context.Context, id int64) (*FailoverRun, error) {
	r := &FailoverRun{}
	err := s.r.QueryRowContext(ctx, `SELECT id, flow, reason, created_by, created_ms, updated_ms, status, plan_json, plan_hash, approvals_required, break_glass
		FROM failover_runs WHERE id=?`, id).Scan(&r.ID, &r.Flow, &r.Reason, &r.CreatedBy, &r.CreatedMs, &r.UpdatedMs, &r.Status,
		&r.PlanJSON, &r.PlanHash, &r.ApprovalsRequired, &r.BreakGlass)
	if err == sql.ErrNoRows {
		return nil, fmt.Errorf("storage: failover run %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("storage: failover run %d: %w", id, err)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT id, approver, decision, reason, plan_hash, at_ms, expires_ms FROM failover_approvals WHERE run_id=? ORDER BY id`, id)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var a FailoverApproval
		if err := rows.Scan(&a.ID, &a.Approver, &a.Decision, &a.Reason, &a.PlanHash, &a.AtMs, &a.ExpiresMs); err != nil {
			rows.Close()
			return nil, err
		}
		r.Approvals = append(r.Approvals, a)
	}
	rows.Close()
	rows, err = s.r.QueryContext(ctx, `SELECT idx, kind, status, attempts, started_ms, finished_ms, started_by, result, error FROM failover_steps WHERE run_id=? ORDER BY idx`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var st FailoverStep
		if err := rows.Scan(&st.Idx, &st.Kind, &st.Status, &st.Attempts, &st.StartedMs, &st.FinishedMs, &st.StartedBy, &st.Result, &st.Error); err != nil {
			return nil, err
		}
		r.Steps = append(r.Steps, st)
	}
	return r, rows.Err()
}

// FailoverRuns lists runs, newest first (without approvals and steps).
func (s *Store) FailoverRuns(ctx context.Context, limit int) ([]FailoverRun, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, flow, reason, created_by, created_ms, updated_ms, status, plan_hash, approvals_required, break_glass
		FROM failover_runs ORDER BY id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("storage: listing failover runs: %w", err)
	}
	defer rows.Close()
	var out []FailoverRun
	for rows.Next() {
		var r FailoverRun
		if err := rows.Scan(&r.ID, &r.Flow, &r.Reason, &r.CreatedBy, &r.CreatedMs, &r.UpdatedMs, &r.Status, &r.PlanHash, &r.ApprovalsRequired, &r.BreakGlass); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func placeholders(n int) string {
	if n == 0 {
		return "NULL"
	}
	b := make([]byte, 0, 2*n)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '?')
	}
	return string(b)
}
