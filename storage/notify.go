package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
)

// NotifyEvent is one event for the outbox: its kind, a key that is the
// same however often the event is seen (a restart re-reading the audit
// log), its JSON payload and the receivers that want it.
type NotifyEvent struct {
	Kind, SourceKey string
	Payload         []byte
	CreatedMs       int64
	Receivers       []string
}

// NotifyDelivery is a pending delivery of one event to one receiver.
type NotifyDelivery struct {
	EventID   int64
	Kind      string
	Payload   []byte
	Attempts  int
	NextMs    int64
	CreatedMs int64
}

// EnqueueNotifications stores events with their deliveries and moves the
// feeder's state keys, in one transaction: either all of it happened or
// none, so the feeder can simply start again from its state. An event
// already stored (same source key) is skipped.
func (s *Store) EnqueueNotifications(ctx context.Context, events []NotifyEvent, state map[string]string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		for _, e := range events {
			res, err := tx.ExecContext(ctx, "INSERT INTO notify_events (kind, source_key, payload, created_ms) VALUES (?,?,?,?) ON CONFLICT (source_key) DO NOTHING",
				e.Kind, e.SourceKey, string(e.Payload), e.CreatedMs)
			if err != nil {
				return fmt.Errorf("storage: storing notification %s: %w", e.SourceKey, err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				continue
			}
			id, err := res.LastInsertId()
			if err != nil {
				return err
			}
			for _, r := range e.Receivers {
				if _, err := tx.ExecContext(ctx, "INSERT INTO notify_deliveries (event_id, receiver, next_ms) VALUES (?,?,?)", id, r, e.CreatedMs); err != nil {
					return fmt.Errorf("storage: storing a delivery to %s: %w", r, err)
				}
			}
		}
		for k, v := range state {
			if _, err := tx.ExecContext(ctx, "INSERT INTO notify_state (key, value) VALUES (?,?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", k, v); err != nil {
				return fmt.Errorf("storage: notification state %s: %w", k, err)
			}
		}
		return nil
	})
}

// NotifyState reads the feeder's state key ("" and false when unset).
func (s *Store) NotifyState(ctx context.Context, key string) (string, bool, error) {
	var v string
	err := s.r.QueryRowContext(ctx, "SELECT value FROM notify_state WHERE key = ?", key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("storage: notification state %s: %w", key, err)
	}
	return v, true, nil
}

// NotifyStatesWithPrefix reads every feeder state key starting with
// prefix, with its value.
func (s *Store) NotifyStatesWithPrefix(ctx context.Context, prefix string) (map[string]string, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT key, value FROM notify_state WHERE substr(key, 1, ?) = ?", len(prefix), prefix)
	if err != nil {
		return nil, fmt.Errorf("storage: notification states %s*: %w", prefix, err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, rows.Err()
}

// NextDelivery is the receiver's oldest undelivered event: deliveries go
// out in order, so "approved" never arrives after "completed".
func (s *Store) NextDelivery(ctx context.Context, receiver string) (*NotifyDelivery, error) {
	var d NotifyDelivery
	var payload string
	err := s.r.QueryRowContext(ctx, `SELECT d.event_id, e.kind, e.payload, d.attempts, d.next_ms, e.created_ms
		FROM notify_deliveries d JOIN notify_events e ON e.id = d.event_id
		WHERE d.receiver = ? AND d.delivered_ms IS NULL ORDER BY d.event_id LIMIT 1`, receiver).
		Scan(&d.EventID, &d.Kind, &payload, &d.Attempts, &d.NextMs, &d.CreatedMs)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("storage: next delivery to %s: %w", receiver, err)
	}
	d.Payload = []byte(payload)
	return &d, nil
}

// DeliveryDone marks a delivery taken by its receiver.
func (s *Store) DeliveryDone(ctx context.Context, receiver string, eventID, atMs int64) error {
	_, err := s.w.ExecContext(ctx, "UPDATE notify_deliveries SET delivered_ms = ?, attempts = attempts + 1, last_error = '' WHERE receiver = ? AND event_id = ?", atMs, receiver, eventID)
	if err != nil {
		return fmt.Errorf("storage: delivery %d to %s: %w", eventID, receiver, err)
	}
	return nil
}

// DeliveryFailed records a failed attempt and when to try again.
func (s *Store) DeliveryFailed(ctx context.Context, receiver string, eventID, nextMs int64, why string) error {
	_, err := s.w.ExecContext(ctx, "UPDATE notify_deliveries SET attempts = attempts + 1, next_ms = ?, last_error = ? WHERE receiver = ? AND event_id = ?", nextMs, why, receiver, eventID)
	if err != nil {
		return fmt.Errorf("storage: delivery %d to %s: %w", eventID, receiver, err)
	}
	return nil
}

// PendingNotifications counts undelivered events per receiver and the
// creation time of each receiver's oldest one.
func (s *Store) PendingNotifications(ctx context.Context) (map[string][2]int64, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT d.receiver, COUNT(*), MIN(e.created_ms) FROM notify_deliveries d JOIN notify_events e ON e.id = d.event_id
		WHERE d.delivered_ms IS NULL GROUP BY d.receiver`)
	if err != nil {
		return nil, fmt.Errorf("storage: pending notifications: %w", err)
	}
	defer rows.Close()
	out := map[string][2]int64{}
	for rows.Next() {
		var r string
		var n, oldest int64
		if err := rows.Scan(&r, &n, &oldest); err != nil {
			return nil, err
		}
		out[r] = [2]int64{n, oldest}
	}
	return out, rows.Err()
}

// DropDeliveriesNotTo deletes the pending deliveries to receivers not
// named in keep (removed or renamed in the config): nobody will take them,
// and left pending they would hold the backlog alert up for ever. The
// events stay, and so does the audit log they came from. It returns how
// many were dropped per receiver.
func (s *Store) DropDeliveriesNotTo(ctx context.Context, keep []string) (map[string]int64, error) {
	dropped := map[string]int64{}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, "SELECT receiver, COUNT(*) FROM notify_deliveries WHERE delivered_ms IS NULL GROUP BY receiver")
		if err != nil {
			return err
		}
		for rows.Next() {
			var r string
			var n int64
			if err := rows.Scan(&r, &n); err != nil {
				rows.Close()
				return err
			}
			if !slices.Contains(keep, r) {
				dropped[r] = n
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for r := range dropped {
			if _, err := tx.ExecContext(ctx, "DELETE FROM notify_deliveries WHERE receiver = ? AND delivered_ms IS NULL", r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("storage: dropping deliveries to receivers no longer configured: %w", err)
	}
	return dropped, nil
}
