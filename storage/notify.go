package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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
