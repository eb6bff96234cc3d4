package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/drconsole/drconsole/model"
)

// StartDrill records a drill's start (its run id, flow, start time, Flink
// target, job id, temporary groups, how many steps owe a re-read bound and
// the safety rules a failover would have failed) in one transaction with
// rec, its audit record. A drill starts once: ErrConflict when it started
// already (a drill interrupted by a crash is cleaned up, not resumed).
func (s *Store) StartDrill(ctx context.Context, d model.Drill, rec model.AuditEntry) (model.AuditEntry, error) {
	groups, _ := json.Marshal(nonNil(d.Groups))
	rules, _ := json.Marshal(nonNil(d.RulesFailed))
	return s.auditedChange(ctx, rec, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO drill_results(run_id, flow, started_ms, flink_target, job_id, groups, reread_expected, rules_failed)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(run_id) DO NOTHING`,
			d.RunID, d.Flow, d.StartedMs, d.FlinkTarget, d.JobID, string(groups), d.RereadExpected, string(rules))
		if err != nil {
			return fmt.Errorf("storage: starting drill of run %d: %w", d.RunID, err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("storage: the drill of run %d started already: %w", d.RunID, ErrConflict)
		}
		return nil
	})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// DrillMoment names a time a drill records once: the first one stays.
type DrillMoment string

// The moments.
const (
	MomentSubmitted DrillMoment = "submitted_ms"
	MomentRunning   DrillMoment = "running_ms"
)

// DrillMoment records when moment happened, unless it is on record already.
func (s *Store) DrillMoment(ctx context.Context, runID int64, moment DrillMoment, atMs int64) error {
	if moment != MomentSubmitted && moment != MomentRunning {
		return fmt.Errorf("storage: no drill moment %q", moment)
	}
	// moment is one of the two constants above: safe to name in the SQL.
	_, err := s.w.ExecContext(ctx, `UPDATE drill_results SET `+string(moment)+`=COALESCE(`+string(moment)+`, ?) WHERE run_id=?`, atMs, runID)
	if err != nil {
		return fmt.Errorf("storage: drill of run %d: %w", runID, err)
	}
	return nil
}

// DrillFirstRecord records the first record processed and the flow's RPO
// then (nil: unknown; atLeast: a lower bound), unless on record already.
func (s *Store) DrillFirstRecord(ctx context.Context, runID, atMs int64, rpoMs *int64, atLeast bool) error {
	_, err := s.w.ExecContext(ctx, `UPDATE drill_results SET first_record_ms=?, rpo_ms=?, rpo_at_least=? WHERE run_id=? AND first_record_ms IS NULL`,
		atMs, rpoMs, atLeast, runID)
	if err != nil {
		return fmt.Errorf("storage: drill of run %d: %w", runID, err)
	}
	return nil
}

// DrillReread records step idx's re-read bound.
func (s *Store) DrillReread(ctx context.Context, runID int64, idx int, n int64) error {
	_, err := s.w.ExecContext(ctx, `UPDATE drill_results SET reread=json_set(reread, '$."'||?||'"', ?) WHERE run_id=?`, fmt.Sprint(idx), n, runID)
	if err != nil {
		return fmt.Errorf("storage: drill of run %d: %w", runID, err)
	}
	return nil
}

// DrillCleanupClaim starts a drill's cleanup: the drill's outcome is
// settled (measured when its run completed, failed otherwise, with why),
// a run not completed is ended as cancelled (no step of it may start
// again; "failed" would say an operator may retry it),
// and the cleanup is marked running, all in one transaction with rec, the
// cleanup's audit record. ErrConflict when the cleanup is done already.
func (s *Store) DrillCleanupClaim(ctx context.Context, runID int64, why string, nowMs int64, rec model.AuditEntry) (model.AuditEntry, error) {
	return s.auditedChange(ctx, rec, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE drill_results SET cleanup_status='running', cleanup_attempts=cleanup_attempts+1,
			outcome=CASE WHEN outcome<>'' THEN outcome
			             WHEN (SELECT status FROM failover_runs WHERE id=?)='completed' THEN 'measured' ELSE 'failed' END,
			error=CASE WHEN outcome='' AND (SELECT status FROM failover_runs WHERE id=?)<>'completed' THEN ? ELSE error END
			WHERE run_id=? AND cleanup_status<>'done'`, runID, runID, why, runID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("storage: the cleanup of drill %d is done or the drill is unknown: %w", runID, ErrConflict)
		}
		_, err = tx.ExecContext(ctx, `UPDATE failover_runs SET status='cancelled', updated_ms=? WHERE id=? AND status IN ('approved','running','failed')`, nowMs, runID)
		return err
	})
}

// DrillCleanupOutcome records how a cleanup attempt ended (failure nil:
// done; otherwise failed, tried again at nextMs), with rec, its record.
func (s *Store) DrillCleanupOutcome(ctx context.Context, runID int64, failure error, nowMs, nextMs int64, rec model.AuditEntry) error {
	_, err := s.auditedChange(ctx, rec, func(tx *sql.Tx) error {
		var res sql.Result
		var err error
		if failure == nil {
			res, err = tx.ExecContext(ctx, `UPDATE drill_results SET cleanup_status='done', cleanup_error='', cleanup_done_ms=? WHERE run_id=? AND cleanup_status='running'`, nowMs, runID)
		} else {
			res, err = tx.ExecContext(ctx, `UPDATE drill_results SET cleanup_status='failed', cleanup_error=?, cleanup_next_ms=? WHERE run_id=? AND cleanup_status='running'`,
				failure.Error(), nextMs, runID)
		}
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("storage: the cleanup of drill %d is not running: %w", runID, ErrConflict)
		}
		return nil
	})
	return err
}

const drillColumns = `run_id, flow, started_ms, flink_target, job_id, groups, submitted_ms, running_ms, first_record_ms, rpo_ms, rpo_at_least,
	reread, reread_expected, rules_failed, outcome, error, cleanup_status, cleanup_attempts, cleanup_error, cleanup_next_ms, cleanup_done_ms`

func scanDrill(sc interface{ Scan(...any) error }) (model.Drill, error) {
	var d model.Drill
	var groups, reread, rules string
	var sub, run, first, rpo, done sql.NullInt64
	err := sc.Scan(&d.RunID, &d.Flow, &d.StartedMs, &d.FlinkTarget, &d.JobID, &groups, &sub, &run, &first, &rpo, &d.RPOAtLeast,
		&reread, &d.RereadExpected, &rules, &d.Outcome, &d.Error, &d.Cleanup, &d.CleanupAttempts, &d.CleanupError, &d.CleanupNextMs, &done)
	if err != nil {
		return d, err
	}
	d.SubmittedMs, d.RunningMs, d.FirstRecordMs, d.RPOMs, d.CleanupDoneMs = ptr(sub), ptr(run), ptr(first), ptr(rpo), ptr(done)
	if err := json.Unmarshal([]byte(groups), &d.Groups); err != nil {
		return d, fmt.Errorf("drill %d groups: %w", d.RunID, err)
	}
	if err := json.Unmarshal([]byte(reread), &d.Reread); err != nil {
		return d, fmt.Errorf("drill %d re-read bounds: %w", d.RunID, err)
	}
	if err := json.Unmarshal([]byte(rules), &d.RulesFailed); err != nil {
		return d, fmt.Errorf("drill %d rules: %w", d.RunID, err)
	}
	return d, nil
}

// Drill returns the drill of run runID; ErrNotFound when it never started.
func (s *Store) Drill(ctx context.Context, runID int64) (model.Drill, error) {
	d, err := scanDrill(s.r.QueryRowContext(ctx, `SELECT `+drillColumns+` FROM drill_results WHERE run_id=?`, runID))
	if err == sql.ErrNoRows {
		return d, fmt.Errorf("storage: drill of run %d: %w", runID, ErrNotFound)
	}
	return d, err
}

// Drills lists flow's drills ("": every flow's), newest first.
func (s *Store) Drills(ctx context.Context, flow string, limit int) ([]model.Drill, error) {
	return s.drills(ctx, `WHERE (?='' OR flow=?) ORDER BY started_ms DESC, run_id DESC LIMIT ?`, flow, flow, limit)
}

// DrillsToClean lists the drills whose cleanup is not done and is due by
// nowMs (pending and running ones found by a new process were interrupted).
func (s *Store) DrillsToClean(ctx context.Context, nowMs int64) ([]model.Drill, error) {
	return s.drills(ctx, `WHERE cleanup_status<>'done' AND cleanup_next_ms<=? ORDER BY run_id`, nowMs)
}

func (s *Store) drills(ctx context.Context, where string, args ...any) ([]model.Drill, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+drillColumns+` FROM drill_results `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("storage: listing drills: %w", err)
	}
	defer rows.Close()
	var out []model.Drill
	for rows.Next() {
		d, err := scanDrill(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// LastDrillSuccess is, per flow, when its newest successful drill (steps
// measured, first record seen, cleanup done) finished its cleanup.
func (s *Store) LastDrillSuccess(ctx context.Context) (map[string]int64, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT flow, MAX(cleanup_done_ms) FROM drill_results
		WHERE outcome='measured' AND first_record_ms IS NOT NULL AND cleanup_status='done' GROUP BY flow`)
	if err != nil {
		return nil, fmt.Errorf("storage: drill successes: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var f string
		var ms int64
		if err := rows.Scan(&f, &ms); err != nil {
			return nil, err
		}
		out[f] = ms
	}
	return out, rows.Err()
}
