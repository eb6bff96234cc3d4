package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/drconsole/drconsole/model"
)

// ErrNotFound is returned for a missing record.
var ErrNotFound = errors.New("not found")

// ErrConflict is returned when a record was not in the expected state: some
// other request changed it first.
var ErrConflict = errors.New("changed by someone else")

// CreateFailoverRun creates a pending run and its steps with rec, its
// audit record (the plan requested), in one transaction. The record's
// details gain the new run's id ("run_id"): it is written before anyone
// knows the id, and without it nothing would tie the plan record to its
// run but its flow, author and time.
func (s *Store) CreateFailoverRun(ctx context.Context, r model.Run, kinds []string, rec model.AuditEntry) (int64, model.AuditEntry, error) {
	e, err := prepareAudit(rec)
	if err != nil {
		return 0, model.AuditEntry{}, err
	}
	var id int64
	err = s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO failover_runs (flow, reason, created_by, created_ms, updated_ms, status, plan_json, plan_hash, approvals_required)
			VALUES (?,?,?,?,?,'pending',?,?,?)`, r.Flow, r.Reason, r.CreatedBy, r.CreatedMs, r.CreatedMs, r.PlanJSON, r.PlanHash, r.ApprovalsRequired)
		if err != nil {
			return err
		}
		if id, err = res.LastInsertId(); err != nil {
			return err
		}
		if err := insertSteps(ctx, tx, id, kinds); err != nil {
			return err
		}
		if e.Details, err = withRunID(e.Details, id); err != nil {
			return err
		}
		if err := insertAudit(ctx, tx, &e); err != nil {
			return &auditWriteError{action: e.Action, err: err}
		}
		return nil
	})
	if err != nil {
		return 0, model.AuditEntry{}, fmt.Errorf("storage: creating failover run: %w", err)
	}
	return id, e, nil
}

// withRunID is details, a JSON object, with "run_id": id set.
func withRunID(details json.RawMessage, id int64) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(details, &m); err != nil || m == nil {
		return nil, fmt.Errorf("storage: a plan record's details are not a JSON object: %v", err)
	}
	m["run_id"] = json.RawMessage(strconv.FormatInt(id, 10))
	return json.Marshal(m)
}

func insertSteps(ctx context.Context, tx *sql.Tx, runID int64, kinds []string) error {
	for i, k := range kinds {
		if _, err := tx.ExecContext(ctx, `INSERT INTO failover_steps (run_id, idx, kind, status) VALUES (?,?,?,'pending')`, runID, i, k); err != nil {
			return err
		}
	}
	return nil
}

// ReplaceFailoverPlan swaps a pending run's plan (and steps), with rec, its
// audit record; approvals given for the old plan hash no longer count.
// ErrConflict (and no record) when the run is not pending.
func (s *Store) ReplaceFailoverPlan(ctx context.Context, runID int64, planJSON, planHash, reason string, kinds []string, nowMs int64, rec model.AuditEntry) (model.AuditEntry, error) {
	return s.auditedChange(ctx, rec, func(tx *sql.Tx) error {
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

// execer is a connection or a transaction.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// SetFailoverStatus moves a run from one status to another; ErrConflict
// when it was not in from. It writes no record: it is for status that
// follows from recorded facts (enough recorded approvals make a run
// approved); a change of its own goes with its record (CancelFailoverRun).
func (s *Store) SetFailoverStatus(ctx context.Context, runID int64, from []model.RunStatus, to model.RunStatus, nowMs int64) error {
	return setFailoverStatus(ctx, s.w, runID, from, to, nowMs)
}

func setFailoverStatus(ctx context.Context, db execer, runID int64, from []model.RunStatus, to model.RunStatus, nowMs int64) error {
	q := `UPDATE failover_runs SET status=?, updated_ms=? WHERE id=? AND status IN (` + placeholders(len(from)) + `)`
	args := []any{to, nowMs, runID}
	for _, f := range from {
		args = append(args, f)
	}
	res, err := db.ExecContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("storage: run %d status: %w", runID, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("storage: run %d is not %v: %w", runID, from, ErrConflict)
	}
	return nil
}

// CancelFailoverRun ends a run that is in one of from, with rec, the
// cancellation's audit record. ErrConflict (and no record) otherwise.
func (s *Store) CancelFailoverRun(ctx context.Context, runID int64, from []model.RunStatus, nowMs int64, rec model.AuditEntry) (model.AuditEntry, error) {
	return s.auditedChange(ctx, rec, func(tx *sql.Tx) error {
		return setFailoverStatus(ctx, tx, runID, from, model.RunCancelled, nowMs)
	})
}

// SetBreakGlass records a single-operator override of the approval gate,
// with rec, its audit record. ErrConflict (and no record) when the run is
// not pending.
func (s *Store) SetBreakGlass(ctx context.Context, runID int64, reason string, nowMs int64, rec model.AuditEntry) (model.AuditEntry, error) {
	return s.auditedChange(ctx, rec, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE failover_runs SET break_glass=?, status='approved', updated_ms=? WHERE id=? AND status='pending'`,
			reason, nowMs, runID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("storage: run %d is not pending: %w", runID, ErrConflict)
		}
		return nil
	})
}

// ApproveFailoverRun stores an approval of the run's plan with rec, its
// audit record, only while the run is one of from and its plan hash is
// still a.PlanHash; ErrConflict (and no record) otherwise. Whether the
// approvals now suffice is the runbook's judgement (it checks who the
// approvers are), so the move to approved is its SetFailoverStatus.
func (s *Store) ApproveFailoverRun(ctx context.Context, runID int64, from []model.RunStatus, a model.Approval, rec model.AuditEntry) (model.AuditEntry, error) {
	return s.auditedChange(ctx, rec, func(tx *sql.Tx) error {
		args := []any{runID, a.Approver, a.Decision, a.Reason, a.PlanHash, a.AtMs, a.ExpiresMs, runID, a.PlanHash}
		for _, f := range from {
			args = append(args, f)
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO failover_approvals (run_id, approver, decision, reason, plan_hash, at_ms, expires_ms)
			SELECT ?,?,?,?,?,?,? WHERE EXISTS (SELECT 1 FROM failover_runs WHERE id=? AND plan_hash=? AND status IN (`+placeholders(len(from))+`))`, args...)
		if err != nil {
			return fmt.Errorf("storage: recording approval: %w", err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("storage: run %d is not %v or its plan changed: %w", runID, from, ErrConflict)
		}
		return nil
	})
}

// RejectFailoverRun stores a rejection and moves the run from one of from
// to rejected, with rec, its audit record; ErrConflict (and nothing
// stored) when the run is not in from.
func (s *Store) RejectFailoverRun(ctx context.Context, runID int64, from []model.RunStatus, a model.Approval, rec model.AuditEntry) (model.AuditEntry, error) {
	return s.auditedChange(ctx, rec, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO failover_approvals (run_id, approver, decision, reason, plan_hash, at_ms, expires_ms)
			VALUES (?,?,?,?,?,?,?)`, runID, a.Approver, a.Decision, a.Reason, a.PlanHash, a.AtMs, a.ExpiresMs); err != nil {
			return fmt.Errorf("storage: recording rejection: %w", err)
		}
		return setFailoverStatus(ctx, tx, runID, from, model.RunRejected, a.AtMs)
	})
}

// StepStart is a claim on a failover step.
type StepStart struct {
	RunID int64
	Idx   int
	// Runner identifies the claiming console process. A step found
	// running under another runner (or none) was interrupted: its process
	// died, or released it after failing to record the outcome.
	Runner string
	Actor  string
	AtMs   int64
	// Record is the step's start audit record, written with the claim.
	Record model.AuditEntry
}

// StartFailoverStep claims a step in one conditional update: it must be
// pending, failed (a retry) or interrupted (running under another runner);
// every earlier step must be done, no other step of the run may be
// running, and the run must be approved or running. The claim and its
// audit record are one transaction. ErrConflict when the step is not
// startable: another request claimed it first. It returns the record as
// written (with its ID), the proof audit.Recorder.With hands on.
func (s *Store) StartFailoverStep(ctx context.Context, st StepStart) (model.AuditEntry, error) {
	records := []model.AuditEntry{st.Record}
	err := s.auditedTx(ctx, records, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE failover_steps SET status='running', attempts=attempts+1, started_ms=?, started_by=?, runner=?, error=''
			WHERE run_id=? AND idx=?
			  AND (status IN ('pending','failed') OR (status='running' AND runner<>?))
			  AND NOT EXISTS (SELECT 1 FROM failover_steps o WHERE o.run_id=? AND o.idx<>?
			                  AND (o.status='running' OR (o.idx<? AND o.status<>'done')))
			  AND EXISTS (SELECT 1 FROM failover_runs WHERE id=? AND status IN ('approved','running'))`,
			st.AtMs, st.Actor, st.Runner, st.RunID, st.Idx, st.Runner, st.RunID, st.Idx, st.Idx, st.RunID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("step %d of run %d is running, done, out of order, or its run is not approved: %w", st.Idx+1, st.RunID, ErrConflict)
		}
		_, err = tx.ExecContext(ctx, `UPDATE failover_runs SET status='running', updated_ms=? WHERE id=? AND status='approved'`, st.AtMs, st.RunID)
		return err
	})
	if err != nil {
		return model.AuditEntry{}, fmt.Errorf("storage: starting step %d of run %d: %w", st.Idx+1, st.RunID, err)
	}
	return records[0], nil
}

// StepOutcome is how a claimed step ended.
type StepOutcome struct {
	RunID   int64
	Idx     int
	Runner  string
	Result  string // JSON
	Failure error
	AtMs    int64
	// Record is the step's outcome audit record; Completed, when set, is
	// the run's completion record, and the run becomes completed with it.
	Record    model.AuditEntry
	Completed *model.AuditEntry
}

// FinishFailoverStep records a step's outcome, only for the runner that
// claimed it, in one transaction with its audit record.
func (s *Store) FinishFailoverStep(ctx context.Context, o StepOutcome) error {
	status, msg := model.StepDone, ""
	if o.Failure != nil {
		status, msg = model.StepFailed, o.Failure.Error()
	}
	records := []model.AuditEntry{o.Record}
	if o.Completed != nil {
		records = append(records, *o.Completed)
	}
	err := s.auditedTx(ctx, records, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE failover_steps SET status=?, result=?, error=?, finished_ms=?
			WHERE run_id=? AND idx=? AND status='running' AND runner=?`, status, o.Result, msg, o.AtMs, o.RunID, o.Idx, o.Runner)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("step %d of run %d was not running under this runner: %w", o.Idx+1, o.RunID, ErrConflict)
		}
		if o.Completed == nil {
			return nil
		}
		res, err = tx.ExecContext(ctx, `UPDATE failover_runs SET status='completed', updated_ms=? WHERE id=? AND status='running'`, o.AtMs, o.RunID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("run %d is no longer running: %w", o.RunID, ErrConflict)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("storage: finishing step %d of run %d: %w", o.Idx+1, o.RunID, err)
	}
	return nil
}

// ReleaseFailoverStep gives up a runner's claim on a running step whose
// outcome could not be recorded: it stays running, as interrupted, and the
// next start resumes it (step effects are idempotent).
func (s *Store) ReleaseFailoverStep(ctx context.Context, runID int64, idx int, runner string) error {
	_, err := s.w.ExecContext(ctx, `UPDATE failover_steps SET runner='' WHERE run_id=? AND idx=? AND status='running' AND runner=?`, runID, idx, runner)
	if err != nil {
		return fmt.Errorf("storage: releasing step %d of run %d: %w", idx+1, runID, err)
	}
	return nil
}

// model.Run loads a run with its approvals and steps.
func (s *Store) FailoverRun(ctx context.Context, id int64) (*model.Run, error) {
	r := &model.Run{}
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
		var a model.Approval
		if err := rows.Scan(&a.ID, &a.Approver, &a.Decision, &a.Reason, &a.PlanHash, &a.AtMs, &a.ExpiresMs); err != nil {
			rows.Close()
			return nil, err
		}
		r.Approvals = append(r.Approvals, a)
	}
	rows.Close()
	rows, err = s.r.QueryContext(ctx, `SELECT idx, kind, status, attempts, started_ms, finished_ms, started_by, result, error, runner FROM failover_steps WHERE run_id=? ORDER BY idx`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var st model.Step
		if err := rows.Scan(&st.Idx, &st.Kind, &st.Status, &st.Attempts, &st.StartedMs, &st.FinishedMs, &st.StartedBy, &st.Result, &st.Error, &st.Runner); err != nil {
			return nil, err
		}
		r.Steps = append(r.Steps, st)
	}
	return r, rows.Err()
}

// FailoverRuns lists runs, newest first (without approvals and steps).
func (s *Store) FailoverRuns(ctx context.Context, limit int) ([]model.Run, error) {
	return s.listRuns(ctx, "ORDER BY id DESC LIMIT ?", limit)
}

// PendingFailoverRuns lists every run waiting for its approvals, newest
// first: what the navigation's waiting count and its live mark read, so
// it lists only those, however old, not the newest N of all.
func (s *Store) PendingFailoverRuns(ctx context.Context) ([]model.Run, error) {
	return s.listRuns(ctx, "WHERE status = ? ORDER BY id DESC", model.RunPending)
}

// FlowsBetweenSteps lists, once each and sorted, the flows of runs in
// which a step of kind started has begun (not pending) and no step of kind
// finished is done: e.g. failbacks whose reverse connectors may copy.
func (s *Store) FlowsBetweenSteps(ctx context.Context, started, finished string) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT DISTINCT r.flow FROM failover_runs r
		JOIN failover_steps a ON a.run_id = r.id AND a.kind = ? AND a.status != 'pending'
		WHERE NOT EXISTS (SELECT 1 FROM failover_steps b WHERE b.run_id = r.id AND b.kind = ? AND b.status = 'done')
		ORDER BY r.flow`, started, finished)
	if err != nil {
		return nil, fmt.Errorf("storage: listing runs between steps %s and %s: %w", started, finished, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var f string
		if err := rows.Scan(&f); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// FailoverRunsAfter lists the runs created after run id, oldest first
// (without approvals and steps).
func (s *Store) FailoverRunsAfter(ctx context.Context, id int64, limit int) ([]model.Run, error) {
	return s.listRuns(ctx, "WHERE id > ? ORDER BY id LIMIT ?", id, limit)
}

func (s *Store) listRuns(ctx context.Context, where string, args ...any) ([]model.Run, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, flow, reason, created_by, created_ms, updated_ms, status, plan_hash, approvals_required, break_glass
		FROM failover_runs `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("storage: listing failover runs: %w", err)
	}
	defer rows.Close()
	var out []model.Run
	for rows.Next() {
		var r model.Run
		if err := rows.Scan(&r.ID, &r.Flow, &r.Reason, &r.CreatedBy, &r.CreatedMs, &r.UpdatedMs, &r.Status, &r.PlanHash, &r.ApprovalsRequired, &r.BreakGlass); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// AccountOrigin is when and by whom an account was created, and its
// role and state now.
type AccountOrigin struct {
	Name      string
	CreatedBy string
	CreatedMs int64
	Role      model.Role
	Disabled  bool
	// LinkedMs is when the account's provider identity was linked, and
	// RaisedMs when the provider's groups last raised its role (0: never).
	LinkedMs, RaisedMs int64
}

// AccountOrigins returns every account whose name equals name without
// regard to letter case (one identity may have been added in two
// spellings); none when the identity has no account (reverse-proxy users).
func (s *Store) AccountOrigins(ctx context.Context, name string) ([]AccountOrigin, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT name, created_by, created_ms, role, disabled, linked_ms, raised_ms FROM users WHERE name = ? COLLATE NOCASE`, name)
	if err != nil {
		return nil, fmt.Errorf("storage: account of %q: %w", name, err)
	}
	defer rows.Close()
	var out []AccountOrigin
	for rows.Next() {
		var o AccountOrigin
		if err := rows.Scan(&o.Name, &o.CreatedBy, &o.CreatedMs, &o.Role, &o.Disabled, &o.LinkedMs, &o.RaisedMs); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// AccountChange is one audited change to an account: who changed it,
// what (user.password, user.role, user.enable) and when.
type AccountChange struct {
	Actor  string
	Action string
	AtMs   int64
}

// AccountChanges returns the audited password, role and enable changes to
// the account name (any letter case), oldest first.
func (s *Store) AccountChanges(ctx context.Context, name string) ([]AccountChange, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT actor, action, at_ms FROM audit
		WHERE action IN ('user.password', 'user.role', 'user.enable') AND subject = ? COLLATE NOCASE ORDER BY id`, "user:"+name)
	if err != nil {
		return nil, fmt.Errorf("storage: changes to account %q: %w", name, err)
	}
	defer rows.Close()
	var out []AccountChange
	for rows.Next() {
		var c AccountChange
		if err := rows.Scan(&c.Actor, &c.Action, &c.AtMs); err != nil {
			return nil, err
		}
		out = append(out, c)
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

// RunCount is how many failover runs of a flow are in one status.
type RunCount struct {
	Flow   string
	Status model.RunStatus
	N      int
}

// FailoverRunCounts counts the runs per flow and status (for /metrics);
// drills (plans with "drill": true) are not failovers and not counted.
func (s *Store) FailoverRunCounts(ctx context.Context) ([]RunCount, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT flow, status, COUNT(*) FROM failover_runs WHERE COALESCE(json_extract(plan_json, '$.drill'), 0) = 0
		GROUP BY flow, status ORDER BY flow, status`)
	if err != nil {
		return nil, fmt.Errorf("storage: counting failover runs: %w", err)
	}
	defer rows.Close()
	var out []RunCount
	for rows.Next() {
		var c RunCount
		if err := rows.Scan(&c.Flow, &c.Status, &c.N); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
