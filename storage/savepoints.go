package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/drconsole/drconsole/model"
)

// SavepointFilter selects catalog entries; zero fields match everything.
type SavepointFilter struct {
	FlinkTarget string
	JobID       string
	JobName     string
	// Unread selects entries whose offsets were never read: no offsets and
	// no read error.
	Unread bool
	// Failed selects entries whose offsets could not be read (a read error,
	// no offsets).
	Failed bool
	// PathPrefixes, when set, keeps entries whose path starts with one of them.
	PathPrefixes []string
	// Limit caps the number of entries (0: no limit).
	Limit int
}

func validSavepoint(sp *model.Savepoint) error {
	if sp.Path == "" {
		return errors.New("storage: savepoint without a path")
	}
	if sp.Kind != model.KindSavepoint && sp.Kind != model.KindCheckpoint {
		return fmt.Errorf("storage: savepoint %s: kind %q (want savepoint or checkpoint)", sp.Path, sp.Kind)
	}
	switch sp.Origin {
	case model.OriginREST, model.OriginScan, model.OriginManual, model.OriginTriggered, model.OriginRewritten:
	default:
		return fmt.Errorf("storage: savepoint %s: origin %q (want rest, scan, manual, triggered or rewritten)", sp.Path, sp.Origin)
	}
	switch sp.Status {
	case "":
		sp.Status = model.SavepointUnknown
	case model.SavepointCompleted, model.SavepointFailed, model.SavepointInProgress, model.SavepointUnknown:
	default:
		return fmt.Errorf("storage: savepoint %s: status %q", sp.Path, sp.Status)
	}
	return nil
}

// upsertSavepointSQL inserts an entry or refreshes the one with its path.
// On a path already known: first_seen, origin (except that "triggered"
// wins: the console took it), offsets and read error stay; what the new
// sighting knows fills in or corrects the rest, and the kind comes from
// Flink (rest, triggered) rather than from a directory name. "rewritten"
// wins like "triggered", with where it was rewritten from: a scan may
// have seen the new directory before the rewrite step registered it.
const upsertSavepointSQL = `INSERT INTO savepoints (flink_target, job_id, job_name, path, kind, origin,
	trigger_ms, completed_ms, size_bytes, status, checkpoint_id, first_seen_ms, last_seen_ms, rewritten_from, rewritten_flow)
VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
ON CONFLICT(path) DO UPDATE SET
	flink_target  = CASE WHEN excluded.flink_target <> '' THEN excluded.flink_target ELSE flink_target END,
	job_id        = CASE WHEN excluded.job_id <> '' THEN excluded.job_id ELSE job_id END,
	job_name      = CASE WHEN excluded.job_name <> '' THEN excluded.job_name ELSE job_name END,
	kind          = CASE WHEN excluded.origin IN ('rest', 'triggered') THEN excluded.kind ELSE kind END,
	origin        = CASE WHEN excluded.origin IN ('triggered', 'rewritten') THEN excluded.origin ELSE origin END,
	rewritten_from = CASE WHEN excluded.origin = 'rewritten' THEN excluded.rewritten_from ELSE rewritten_from END,
	rewritten_flow = CASE WHEN excluded.origin = 'rewritten' THEN excluded.rewritten_flow ELSE rewritten_flow END,
	trigger_ms    = COALESCE(excluded.trigger_ms, trigger_ms),
	completed_ms  = COALESCE(excluded.completed_ms, completed_ms),
	size_bytes    = COALESCE(excluded.size_bytes, size_bytes),
	status        = CASE WHEN excluded.status <> 'unknown' THEN excluded.status ELSE status END,
	checkpoint_id = COALESCE(excluded.checkpoint_id, checkpoint_id),
	last_seen_ms  = MAX(last_seen_ms, excluded.last_seen_ms)
RETURNING id`

// UpsertSavepoint records a sighting of a savepoint at atMs (first and last
// seen for a new entry, last seen otherwise) and returns its id. Entries
// are never deleted.
func (s *Store) UpsertSavepoint(ctx context.Context, sp model.Savepoint, atMs int64) (int64, error) {
	ids, err := s.UpsertSavepoints(ctx, []model.Savepoint{sp}, atMs)
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// UpsertSavepoints is UpsertSavepoint for many entries in one transaction;
// the ids are in the order of sps.
func (s *Store) UpsertSavepoints(ctx context.Context, sps []model.Savepoint, atMs int64) ([]int64, error) {
	for i := range sps {
		if err := validSavepoint(&sps[i]); err != nil {
			return nil, err
		}
	}
	ids := make([]int64, len(sps))
	err := s.tx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, upsertSavepointSQL)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for i, sp := range sps {
			if err := stmt.QueryRowContext(ctx, sp.FlinkTarget, sp.JobID, sp.JobName, sp.Path, sp.Kind, sp.Origin,
				nullable(sp.TriggerMs), nullable(sp.CompletedMs), nullable(sp.SizeBytes), sp.Status, nullable(sp.CheckpointID),
				atMs, atMs, sp.RewrittenFrom, sp.RewrittenFlow).Scan(&ids[i]); err != nil {
				return fmt.Errorf("savepoint %s: %w", sp.Path, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("storage: recording savepoints: %w", err)
	}
	return ids, nil
}

func nullable(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// SetSavepointOffsets stores what reading a savepoint gave: its offsets
// JSON ("" when unreadable), the source operator's uid, its checkpoint id
// (0: leave as is) and the read error ("" clears an earlier one).
func (s *Store) SetSavepointOffsets(ctx context.Context, id int64, offsetsJSON, uid string, checkpointID int64, readErr string) error {
	var offs any
	if offsetsJSON != "" {
		var check map[string]int64
		if err := json.Unmarshal([]byte(offsetsJSON), &check); err != nil {
			return fmt.Errorf("storage: savepoint %d: offsets are not a {\"topic-partition\": offset} object: %w", id, err)
		}
		offs = offsetsJSON
	}
	var cp any
	if checkpointID > 0 {
		cp = checkpointID
	}
	res, err := s.w.ExecContext(ctx, `UPDATE savepoints SET offsets_json = ?, source_uid = ?, read_error = ?,
		checkpoint_id = COALESCE(?, checkpoint_id) WHERE id = ?`, offs, uid, readErr, cp, id)
	if err != nil {
		return fmt.Errorf("storage: savepoint %d: storing offsets: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("storage: savepoint %d: %w", id, ErrNotFound)
	}
	return nil
}

const savepointColumns = `id, flink_target, job_id, job_name, path, kind, origin, trigger_ms, completed_ms, size_bytes,
	status, checkpoint_id, COALESCE(offsets_json, ''), source_uid, read_error, first_seen_ms, last_seen_ms, rewritten_from, rewritten_flow`

func scanSavepoint(row interface{ Scan(...any) error }) (model.Savepoint, error) {
	var sp model.Savepoint
	var trig, done, size, cp sql.NullInt64
	err := row.Scan(&sp.ID, &sp.FlinkTarget, &sp.JobID, &sp.JobName, &sp.Path, &sp.Kind, &sp.Origin, &trig, &done, &size,
		&sp.Status, &cp, &sp.OffsetsJSON, &sp.SourceUID, &sp.ReadError, &sp.FirstSeenMs, &sp.LastSeenMs, &sp.RewrittenFrom, &sp.RewrittenFlow)
	sp.TriggerMs, sp.CompletedMs, sp.SizeBytes, sp.CheckpointID = ptr(trig), ptr(done), ptr(size), ptr(cp)
	return sp, err
}

// Savepoints lists catalog entries, newest first (by trigger time, else
// completion time, else when first seen).
func (s *Store) Savepoints(ctx context.Context, f SavepointFilter) ([]model.Savepoint, error) {
	var where []string
	var args []any
	for col, v := range map[string]string{"flink_target": f.FlinkTarget, "job_id": f.JobID, "job_name": f.JobName} {
		if v != "" {
			where = append(where, col+" = ?")
			args = append(args, v)
		}
	}
	if f.Unread {
		where = append(where, "offsets_json IS NULL AND read_error = ''")
	}
	if f.Failed {
		where = append(where, "offsets_json IS NULL AND read_error <> ''")
	}
	if len(f.PathPrefixes) > 0 {
		var or []string
		for _, p := range f.PathPrefixes {
			or = append(or, "substr(path, 1, ?) = ?")
			args = append(args, len(p), p)
		}
		where = append(where, "("+strings.Join(or, " OR ")+")")
	}
	q := "SELECT " + savepointColumns + " FROM savepoints"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY COALESCE(trigger_ms, completed_ms, first_seen_ms) DESC, id DESC"
	if f.Limit > 0 {
		q += " LIMIT ?"
		args = append(args, f.Limit)
	}
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("storage: reading savepoints: %w", err)
	}
	defer rows.Close()
	var out []model.Savepoint
	for rows.Next() {
		sp, err := scanSavepoint(rows)
		if err != nil {
			return nil, fmt.Errorf("storage: reading savepoints: %w", err)
		}
		out = append(out, sp)
	}
	return out, rows.Err()
}

// SavepointByID returns one entry; ErrNotFound when there is none.
func (s *Store) SavepointByID(ctx context.Context, id int64) (model.Savepoint, error) {
	sp, err := scanSavepoint(s.r.QueryRowContext(ctx, "SELECT "+savepointColumns+" FROM savepoints WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return sp, fmt.Errorf("storage: savepoint %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return sp, fmt.Errorf("storage: savepoint %d: %w", id, err)
	}
	return sp, nil
}

// SavepointByPath returns the entry with that path; ErrNotFound when none.
func (s *Store) SavepointByPath(ctx context.Context, path string) (model.Savepoint, error) {
	sp, err := scanSavepoint(s.r.QueryRowContext(ctx, "SELECT "+savepointColumns+" FROM savepoints WHERE path = ?", path))
	if errors.Is(err, sql.ErrNoRows) {
		return sp, fmt.Errorf("storage: savepoint %s: %w", path, ErrNotFound)
	}
	if err != nil {
		return sp, fmt.Errorf("storage: savepoint %s: %w", path, err)
	}
	return sp, nil
}

// DeleteSavepoint removes catalog entry id (a drill's rewritten copy, once
// its directory is gone); a missing entry is no error.
func (s *Store) DeleteSavepoint(ctx context.Context, id int64) error {
	if _, err := s.w.ExecContext(ctx, "DELETE FROM savepoints WHERE id = ?", id); err != nil {
		return fmt.Errorf("storage: deleting savepoint %d: %w", id, err)
	}
	return nil
}
