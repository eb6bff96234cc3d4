package storage

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/drconsole/drconsole/model"
)

var (
	// ErrNoSession: the token matches no session (never issued, signed out,
	// or deleted with its user's sessions).
	ErrNoSession = errors.New("no such session")
	// ErrSessionExpired: the session passed its idle or absolute timeout; it
	// has been deleted.
	ErrSessionExpired = errors.New("session expired")
)

// tokenHash is what the sessions table stores instead of the token.
func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// CreateSession starts a session for user and returns its token: 256
// random bits, base64url. Only the token's SHA-256 is stored.
func (s *Store) CreateSession(ctx context.Context, user, clientIP, userAgent string) (string, error) {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	token := base64.RawURLEncoding.EncodeToString(b)
	now := clock().UnixMilli()
	_, err := s.w.ExecContext(ctx, `INSERT INTO sessions(token_hash, user, created_ms, last_seen_ms, client_ip, user_agent)
		VALUES (?, ?, ?, ?, ?, ?)`, tokenHash(token), user, now, now, clientIP, truncate(userAgent, 512))
	if err != nil {
		return "", fmt.Errorf("storage: creating session for %q: %w", user, err)
	}
	return token, nil
}

// SessionUser returns the signed-in user of a session token, renewing its
// last-seen time. A session idle longer than idle, older than absolute, or
// whose user is disabled is deleted and refused.
func (s *Store) SessionUser(ctx context.Context, token string, idle, absolute time.Duration) (model.User, error) {
	return s.session(ctx, token, idle, absolute, true)
}

// PeekSession is SessionUser without renewing: for requests the browser
// makes on its own (htmx polling), which must not keep an unattended
// console signed in forever.
func (s *Store) PeekSession(ctx context.Context, token string, idle, absolute time.Duration) (model.User, error) {
	return s.session(ctx, token, idle, absolute, false)
}

func (s *Store) session(ctx context.Context, token string, idle, absolute time.Duration, renew bool) (model.User, error) {
	var u model.User
	if token == "" {
		return u, ErrNoSession
	}
	h := tokenHash(token)
	now := clock()
	// Renewing on every request would make every click (and there are
	// many) a write; a session touched within the last 1/32 of its idle
	// timeout (at most a minute) is fresh enough.
	stale := func(lastSeenMs int64) bool {
		return renew && now.Sub(time.UnixMilli(lastSeenMs)) >= min(idle/32, time.Minute)
	}
	// A cached session answers only while it is live and needs no renewal;
	// anything else (expiry, renewal) goes to the database below.
	if e, ok := s.sessions.get(h, now); ok && !e.user.Disabled && !expired(now, e.createdMs, e.lastSeenMs, idle, absolute) && !stale(e.lastSeenMs) {
		return e.user, nil
	}
	gen := s.sessions.generation()
	var createdMs, lastSeenMs int64
	err := s.r.QueryRowContext(ctx, `SELECT u.name, u.role, u.password_hash, u.created_ms, u.disabled, s.created_ms, s.last_seen_ms
		FROM sessions s JOIN users u ON u.name = s.user WHERE s.token_hash = ?`, h).
		Scan(&u.Name, &u.Role, &u.PasswordHash, &u.CreatedMs, &u.Disabled, &createdMs, &lastSeenMs)
	if errors.Is(err, sql.ErrNoRows) {
		return model.User{}, ErrNoSession
	}
	if err != nil {
		return model.User{}, fmt.Errorf("storage: reading session: %w", err)
	}
	switch {
	case u.Disabled:
		return model.User{}, errors.Join(ErrNoSession, s.deleteSessionHash(ctx, h))
	case expired(now, createdMs, lastSeenMs, idle, absolute):
		return model.User{}, errors.Join(ErrSessionExpired, s.deleteSessionHash(ctx, h))
	}
	if stale(lastSeenMs) {
		if _, err := s.w.ExecContext(ctx, "UPDATE sessions SET last_seen_ms = ? WHERE token_hash = ?", now.UnixMilli(), h); err != nil {
			return model.User{}, fmt.Errorf("storage: renewing session: %w", err)
		}
		lastSeenMs = now.UnixMilli()
	}
	s.sessions.put(h, gen, cachedSession{user: u, createdMs: createdMs, lastSeenMs: lastSeenMs, readAt: now})
	return u, nil
}

// expired says whether a session created and last seen at these times has
// passed its idle or absolute timeout at now.
func expired(now time.Time, createdMs, lastSeenMs int64, idle, absolute time.Duration) bool {
	return now.Sub(time.UnixMilli(lastSeenMs)) > idle || now.Sub(time.UnixMilli(createdMs)) > absolute
}

// DeleteSession signs a session out; an unknown token is not an error.
func (s *Store) DeleteSession(ctx context.Context, token string) error {
	return s.deleteSessionHash(ctx, tokenHash(token))
}

func (s *Store) deleteSessionHash(ctx context.Context, h string) error {
	defer s.sessions.invalidate()
	if _, err := s.w.ExecContext(ctx, "DELETE FROM sessions WHERE token_hash = ?", h); err != nil {
		return fmt.Errorf("storage: deleting session: %w", err)
	}
	return nil
}

// DeleteUserSessions signs a user out everywhere and returns how many
// sessions there were.
func (s *Store) DeleteUserSessions(ctx context.Context, user string) (int64, error) {
	defer s.sessions.invalidate()
	res, err := s.w.ExecContext(ctx, "DELETE FROM sessions WHERE user = ?", user)
	if err != nil {
		return 0, fmt.Errorf("storage: deleting sessions of %q: %w", user, err)
	}
	return res.RowsAffected()
}

// DeleteUserSessionsAudited signs user out everywhere with rec, its audit
// record, in one transaction, and returns the record as written (its
// details gain "sessions": how many there were) and that count. A name
// with no account (ErrUnknownUser) writes no record.
func (s *Store) DeleteUserSessionsAudited(ctx context.Context, user string, rec model.AuditEntry) (model.AuditEntry, int64, error) {
	defer s.sessions.invalidate()
	user = model.CanonicalName(user)
	var n int64
	records := []model.AuditEntry{rec}
	err := s.auditedTx(ctx, records, func(tx *sql.Tx) error {
		var one int
		if err := tx.QueryRowContext(ctx, "SELECT 1 FROM users WHERE name = ?", user).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("storage: user %q: %w", user, ErrUnknownUser)
		} else if err != nil {
			return fmt.Errorf("storage: user %q: %w", user, err)
		}
		res, err := tx.ExecContext(ctx, "DELETE FROM sessions WHERE user = ?", user)
		if err != nil {
			return fmt.Errorf("storage: deleting sessions of %q: %w", user, err)
		}
		n, _ = res.RowsAffected()
		// The count is known only now, inside the transaction: the record
		// (prepared, not yet written) says it.
		d := map[string]any{}
		json.Unmarshal(records[0].Details, &d)
		d["sessions"] = n
		records[0].Details, err = json.Marshal(d)
		return err
	})
	if err != nil {
		return model.AuditEntry{}, 0, err
	}
	return records[0], n, nil
}

// SessionCounts returns how many live sessions (within both timeouts)
// each user has; users without one are absent.
func (s *Store) SessionCounts(ctx context.Context, idle, absolute time.Duration) (map[string]int, error) {
	now := clock()
	rows, err := s.r.QueryContext(ctx, "SELECT user, COUNT(*) FROM sessions WHERE last_seen_ms >= ? AND created_ms >= ? GROUP BY user",
		now.Add(-idle).UnixMilli(), now.Add(-absolute).UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("storage: counting sessions: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var user string
		var n int
		if err := rows.Scan(&user, &n); err != nil {
			return nil, fmt.Errorf("storage: counting sessions: %w", err)
		}
		out[user] = n
	}
	return out, rows.Err()
}

// PurgeSessions deletes every session past its idle or absolute timeout:
// those nobody came back to, which SessionUser never sees.
func (s *Store) PurgeSessions(ctx context.Context, idle, absolute time.Duration) (int64, error) {
	defer s.sessions.invalidate()
	now := clock()
	res, err := s.w.ExecContext(ctx, "DELETE FROM sessions WHERE last_seen_ms < ? OR created_ms < ?",
		now.Add(-idle).UnixMilli(), now.Add(-absolute).UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("storage: purging sessions: %w", err)
	}
	return res.RowsAffected()
}

// truncate cuts s to at most n bytes (user agents are attacker-chosen),
// dropping a rune the cut split.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}
