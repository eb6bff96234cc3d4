package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/drconsole/drconsole/model"
)

// API tokens (migration 0021): a user's bearer tokens for /api/v1. The
// token itself is never stored, only its SHA-256 (tokenHash, as for
// sessions); identity makes the tokens and decides what they may do.

var (
	// ErrNoToken: the token matches no API token, or its owner's account
	// is gone or disabled.
	ErrNoToken = errors.New("no such API token")
	// ErrTokenExpired: the token passed its expiry.
	ErrTokenExpired = errors.New("API token expired")
	// ErrTokenRevoked: the token was revoked.
	ErrTokenRevoked = errors.New("API token revoked")
)

// APIToken is a stored API token (never the token itself).
type APIToken struct {
	ID     int64
	Prefix string // the token's first characters, to tell tokens apart
	User   string
	Name   string
	Scope  string // "read" or "operate"
	// Times in epoch ms; LastUsedMs and RevokedMs 0: never.
	CreatedMs, ExpiresMs, LastUsedMs, RevokedMs int64
	RevokedBy                                   string
}

// Live: neither revoked nor expired at now.
func (t APIToken) Live(now time.Time) bool {
	return t.RevokedMs == 0 && now.UnixMilli() < t.ExpiresMs
}

// CreateAPITokenAudited stores t for token (its hash) with rec, the
// creation's audit record, in one transaction; t.User must have an
// account (ErrUnknownUser, and no record, otherwise). It returns the new
// token's id and the record as written.
func (s *Store) CreateAPITokenAudited(ctx context.Context, t APIToken, token string, rec model.AuditEntry) (int64, model.AuditEntry, error) {
	t.User = model.CanonicalName(t.User)
	var id int64
	rec, err := s.auditedChange(ctx, rec, func(tx *sql.Tx) error {
		var disabled bool
		if err := tx.QueryRowContext(ctx, "SELECT disabled FROM users WHERE name = ?", t.User).Scan(&disabled); errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("storage: user %q: %w", t.User, ErrUnknownUser)
		} else if err != nil {
			return fmt.Errorf("storage: user %q: %w", t.User, err)
		}
		if disabled {
			return fmt.Errorf("storage: user %q is disabled: %w", t.User, ErrConflict)
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO api_tokens(token_hash, prefix, user, name, scope, created_ms, expires_ms)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, tokenHash(token), t.Prefix, t.User, t.Name, t.Scope, t.CreatedMs, t.ExpiresMs)
		if err != nil {
			return fmt.Errorf("storage: creating API token: %w", err)
		}
		id, err = res.LastInsertId()
		return err
	})
	return id, rec, err
}

const apiTokenCols = "id, prefix, user, name, scope, created_ms, expires_ms, last_used_ms, revoked_ms, revoked_by"

func scanAPIToken(row interface{ Scan(...any) error }) (APIToken, error) {
	var t APIToken
	err := row.Scan(&t.ID, &t.Prefix, &t.User, &t.Name, &t.Scope, &t.CreatedMs, &t.ExpiresMs, &t.LastUsedMs, &t.RevokedMs, &t.RevokedBy)
	return t, err
}

// APITokens lists user's tokens ("": everyone's), newest first, at most
// limit.
func (s *Store) APITokens(ctx context.Context, user string, limit int) ([]APIToken, error) {
	q := "SELECT " + apiTokenCols + " FROM api_tokens"
	args := []any{}
	if user != "" {
		q += " WHERE user = ?"
		args = append(args, model.CanonicalName(user))
	}
	q += " ORDER BY created_ms DESC, id DESC LIMIT ?"
	rows, err := s.r.QueryContext(ctx, q, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("storage: listing API tokens: %w", err)
	}
	defer rows.Close()
	var out []APIToken
	for rows.Next() {
		t, err := scanAPIToken(rows)
		if err != nil {
			return nil, fmt.Errorf("storage: listing API tokens: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// APIToken is token id; ErrNotFound when there is none.
func (s *Store) APIToken(ctx context.Context, id int64) (APIToken, error) {
	t, err := scanAPIToken(s.r.QueryRowContext(ctx, "SELECT "+apiTokenCols+" FROM api_tokens WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return t, fmt.Errorf("storage: API token %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return t, fmt.Errorf("storage: API token %d: %w", id, err)
	}
	return t, nil
}

// RevokeAPITokenAudited revokes live token id for by at nowMs with rec,
// its audit record, in one transaction. A token already revoked is
// ErrConflict (and no record); an unknown one ErrNotFound.
func (s *Store) RevokeAPITokenAudited(ctx context.Context, id int64, by string, nowMs int64, rec model.AuditEntry) (model.AuditEntry, error) {
	return s.auditedChange(ctx, rec, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE api_tokens SET revoked_ms = ?, revoked_by = ? WHERE id = ? AND revoked_ms = 0", nowMs, by, id)
		if err != nil {
			return fmt.Errorf("storage: revoking API token %d: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return nil
		}
		var one int
		if err := tx.QueryRowContext(ctx, "SELECT 1 FROM api_tokens WHERE id = ?", id).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("storage: API token %d: %w", id, ErrNotFound)
		}
		return fmt.Errorf("storage: API token %d is revoked already: %w", id, ErrConflict)
	})
}

// APITokenUser is the token and its owner's account for a presented
// token: ErrNoToken when it matches none (or the owner is gone or
// disabled), ErrTokenRevoked, ErrTokenExpired, each with the token's row
// when there is one (for the audit record of the refusal). A token used
// at now is marked used (at most once a minute: a write per request would
// make every API call a write).
func (s *Store) APITokenUser(ctx context.Context, token string, now time.Time) (APIToken, model.User, error) {
	var u model.User
	t, err := scanAPIToken(s.r.QueryRowContext(ctx, "SELECT "+apiTokenCols+" FROM api_tokens WHERE token_hash = ?", tokenHash(token)))
	if errors.Is(err, sql.ErrNoRows) {
		return APIToken{}, u, ErrNoToken
	}
	if err != nil {
		return APIToken{}, u, fmt.Errorf("storage: reading API token: %w", err)
	}
	switch {
	case t.RevokedMs != 0:
		return t, u, ErrTokenRevoked
	case now.UnixMilli() >= t.ExpiresMs:
		return t, u, ErrTokenExpired
	}
	u, err = s.UserByName(ctx, t.User)
	switch {
	case errors.Is(err, ErrUnknownUser):
		return t, model.User{}, ErrNoToken
	case err != nil:
		return t, model.User{}, err
	case u.Disabled:
		return t, model.User{}, fmt.Errorf("%w: the account %q is disabled", ErrNoToken, u.Name)
	}
	if now.UnixMilli()-t.LastUsedMs >= time.Minute.Milliseconds() {
		if _, err := s.w.ExecContext(ctx, "UPDATE api_tokens SET last_used_ms = ? WHERE id = ?", now.UnixMilli(), t.ID); err != nil {
			return t, model.User{}, fmt.Errorf("storage: marking API token used: %w", err)
		}
		t.LastUsedMs = now.UnixMilli()
	}
	return t, u, nil
}
