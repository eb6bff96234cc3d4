package storage

import (
	"context"
	"encoding/json"
	"fmt"
)

// OffsetChange is one partition of a group offset change.
type OffsetChange struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Previous  *int64 `json:"previous"` // nil: the group had no offset here
	Applied   int64  `json:"applied"`
}

// GroupChange is a recorded change to a DR group's offsets.
type GroupChange struct {
	ID      int64
	Flow    string
	Group   string
	AtMs    int64
	Actor   string
	Reason  string
	Status  string // applying, applied, failed
	Error   string
	Changes []OffsetChange
}

// BeginGroupChange records a change about to be committed and returns its id.
func (s *Store) BeginGroupChange(ctx context.Context, c GroupChange) (int64, error) {
	id, err := s.flowID(ctx, c.Flow)
	if err != nil {
		return 0, err
	}
	changes, err := json.Marshal(c.Changes)
	if err != nil {
		return 0, err
	}
	res, err := s.w.ExecContext(ctx, `INSERT INTO group_offset_changes (flow_id, group_id, at_ms, actor, reason, status, changes)
		VALUES (?,?,?,?,?,'applying',?)`, id, c.Group, c.AtMs, c.Actor, c.Reason, string(changes))
	if err != nil {
		return 0, fmt.Errorf("storage: recording group change: %w", err)
	}
	return res.LastInsertId()
}

// FinishGroupChange marks a change applied, or failed with the error.
func (s *Store) FinishGroupChange(ctx context.Context, changeID int64, failure error) error {
	status, msg := "applied", ""
	if failure != nil {
		status, msg = "failed", failure.Error()
	}
	_, err := s.w.ExecContext(ctx, `UPDATE group_offset_changes SET status=?, error=? WHERE id=?`, status, msg, changeID)
	if err != nil {
		return fmt.Errorf("storage: finishing group change %d: %w", changeID, err)
	}
	return nil
}

// GroupChanges lists a group's recorded changes, newest first.
func (s *Store) GroupChanges(ctx context.Context, flow, group string) ([]GroupChange, error) {
	id, err := s.flowID(ctx, flow)
	if err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT id, at_ms, actor, reason, status, error, changes
		FROM group_offset_changes WHERE flow_id=? AND group_id=? ORDER BY id DESC`, id, group)
	if err != nil {
		return nil, fmt.Errorf("storage: reading group changes: %w", err)
	}
	defer rows.Close()
	var out []GroupChange
	for rows.Next() {
		c := GroupChange{Flow: flow, Group: group}
		var changes string
		if err := rows.Scan(&c.ID, &c.AtMs, &c.Actor, &c.Reason, &c.Status, &c.Error, &changes); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(changes), &c.Changes); err != nil {
			return nil, fmt.Errorf("storage: group change %d: %w", c.ID, err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
