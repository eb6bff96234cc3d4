package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// AuditHashOf is the stored hash of record id; ok is false when there is
// no such record. With an anchor kept outside the database (`drconsole
// audit head`), it shows records removed from the end, which the chain
// alone cannot.
func (s *Store) AuditHashOf(ctx context.Context, id int64) (hash string, ok bool, err error) {
	err = s.r.QueryRowContext(ctx, "SELECT hash FROM audit WHERE id = ?", id).Scan(&hash)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("storage: reading audit record %d: %w", id, err)
	}
	return hash, true, nil
}
