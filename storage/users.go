package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/drconsole/drconsole/model"
)

var (
	// ErrUnknownUser: no account with that name.
	ErrUnknownUser = errors.New("no such user")
	// ErrUserExists: CreateUser with a name already taken.
	ErrUserExists = errors.New("user already exists")
)

// clock is the time source of users and sessions; tests replace it
// (export_test.go) to cross idle and absolute timeouts without sleeping.
var clock = time.Now

func validRole(role model.Role) error {
	if !role.Valid() {
		return fmt.Errorf("role %q: want viewer, operator or admin", role)
	}
	return nil
}

// Names are stored and looked up in model.CanonicalName form.

// CreateUser adds an account. CreatedMs is set to now when zero.
func (s *Store) CreateUser(ctx context.Context, u model.User) error {
	return s.createUser(ctx, u, nil)
}

// CreateUserAudited is CreateUser with rec, the creation's audit record,
// written in the same transaction and returned as written; an existing
// name (ErrUserExists) writes no record.
func (s *Store) CreateUserAudited(ctx context.Context, u model.User, rec model.AuditEntry) (model.AuditEntry, error) {
	return written(rec, func(records []model.AuditEntry) error { return s.createUser(ctx, u, records) })
}

func (s *Store) createUser(ctx context.Context, u model.User, records []model.AuditEntry) error {
	u.Name = model.CanonicalName(u.Name)
	if u.Name == "" {
		return errors.New("storage: user name is empty")
	}
	if err := validRole(u.Role); err != nil {
		return fmt.Errorf("storage: user %q: %w", u.Name, err)
	}
	if u.CreatedMs == 0 {
		u.CreatedMs = clock().UnixMilli()
	}
	return s.auditedTx(ctx, records, func(tx *sql.Tx) error {
		// ON CONFLICT DO NOTHING and RowsAffected keep "exists" a typed error
		// instead of a driver-specific constraint message.
		res, err := tx.ExecContext(ctx, `INSERT INTO users(name, role, password_hash, created_ms, disabled, created_by)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(name) DO NOTHING`, u.Name, u.Role, u.PasswordHash, u.CreatedMs, u.Disabled, u.CreatedBy)
		if err != nil {
			return fmt.Errorf("storage: creating user %q: %w", u.Name, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return fmt.Errorf("storage: user %q: %w", u.Name, ErrUserExists)
		}
		return stampAccount(ctx, tx, u.Name, records)
	})
}

// SetPassword replaces a user's password hash and signs them out
// everywhere: whoever knew the old password must not keep a session.
func (s *Store) SetPassword(ctx context.Context, name, hash string) error {
	return s.updateUser(ctx, name, true, nil, "UPDATE users SET password_hash = ? WHERE name = ?", hash, name)
}

// SetRole changes a user's role. Sessions stay: the role is read on every
// request, so the change takes effect at the next click.
func (s *Store) SetRole(ctx context.Context, name string, role model.Role) error {
	return s.setRole(ctx, name, role, nil)
}

func (s *Store) setRole(ctx context.Context, name string, role model.Role, records []model.AuditEntry) error {
	if err := validRole(role); err != nil {
		return fmt.Errorf("storage: user %q: %w", name, err)
	}
	return s.updateUser(ctx, name, false, records, "UPDATE users SET role = ? WHERE name = ?", role, name)
}

// SetDisabled disables (deleting every session) or re-enables a user.
func (s *Store) SetDisabled(ctx context.Context, name string, disabled bool) error {
	return s.updateUser(ctx, name, disabled, nil, "UPDATE users SET disabled = ? WHERE name = ?", disabled, name)
}

// SetPasswordAudited, SetRoleAudited and SetDisabledAudited make their
// change with rec, its audit record, in one transaction and return the
// record as written. A name with no account (ErrUnknownUser) writes no
// record.
func (s *Store) SetPasswordAudited(ctx context.Context, name, hash string, rec model.AuditEntry) (model.AuditEntry, error) {
	return written(rec, func(records []model.AuditEntry) error {
		return s.updateUser(ctx, name, true, records, "UPDATE users SET password_hash = ? WHERE name = ?", hash, name)
	})
}

// SetRoleAudited: see SetPasswordAudited.
func (s *Store) SetRoleAudited(ctx context.Context, name string, role model.Role, rec model.AuditEntry) (model.AuditEntry, error) {
	return written(rec, func(records []model.AuditEntry) error { return s.setRole(ctx, name, role, records) })
}

// SetDisabledAudited: see SetPasswordAudited.
func (s *Store) SetDisabledAudited(ctx context.Context, name string, disabled bool, rec model.AuditEntry) (model.AuditEntry, error) {
	return written(rec, func(records []model.AuditEntry) error {
		return s.updateUser(ctx, name, disabled, records, "UPDATE users SET disabled = ? WHERE name = ?", disabled, name)
	})
}

// LinkIdentityAudited records, with rec (the sso.identity record) in one
// transaction, that name's provider identity was linked at atMs.
func (s *Store) LinkIdentityAudited(ctx context.Context, name string, atMs int64, rec model.AuditEntry) (model.AuditEntry, error) {
	return written(rec, func(records []model.AuditEntry) error {
		return s.updateUser(ctx, name, false, records, "UPDATE users SET linked_ms = ? WHERE name = ?", atMs, name)
	})
}

// RaiseRoleAudited is SetRoleAudited for a role the provider's groups
// raised at atMs, which it records on the account too.
func (s *Store) RaiseRoleAudited(ctx context.Context, name string, role model.Role, atMs int64, rec model.AuditEntry) (model.AuditEntry, error) {
	if err := validRole(role); err != nil {
		return model.AuditEntry{}, fmt.Errorf("storage: user %q: %w", name, err)
	}
	return written(rec, func(records []model.AuditEntry) error {
		return s.updateUser(ctx, name, false, records, "UPDATE users SET role = ?, raised_ms = ? WHERE name = ?", role, atMs, name)
	})
}

// updateUser runs q and writes records (nil: none) in one transaction.
func (s *Store) updateUser(ctx context.Context, name string, dropSessions bool, records []model.AuditEntry, q string, args ...any) error {
	defer s.sessions.invalidate() // a role, a password or disabled: sessions read before are stale
	name = model.CanonicalName(name)
	args[len(args)-1] = name // every update ends "WHERE name = ?"
	return s.auditedTx(ctx, records, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("storage: updating user %q: %w", name, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("storage: user %q: %w", name, ErrUnknownUser)
		}
		if dropSessions {
			if _, err = tx.ExecContext(ctx, "DELETE FROM sessions WHERE user = ?", name); err != nil {
				return err
			}
		}
		return stampAccount(ctx, tx, name, records)
	})
}

// Users lists every account by name.
func (s *Store) Users(ctx context.Context) ([]model.User, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT name, role, password_hash, created_ms, disabled FROM users ORDER BY name")
	if err != nil {
		return nil, fmt.Errorf("storage: listing users: %w", err)
	}
	defer rows.Close()
	var out []model.User
	for rows.Next() {
		var u model.User
		if err := rows.Scan(&u.Name, &u.Role, &u.PasswordHash, &u.CreatedMs, &u.Disabled); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// UserByName returns one account, or an error wrapping ErrUnknownUser.
func (s *Store) UserByName(ctx context.Context, name string) (model.User, error) {
	name = model.CanonicalName(name)
	var u model.User
	err := s.r.QueryRowContext(ctx, "SELECT name, role, password_hash, created_ms, disabled, created_by FROM users WHERE name = ?", name).
		Scan(&u.Name, &u.Role, &u.PasswordHash, &u.CreatedMs, &u.Disabled, &u.CreatedBy)
	if errors.Is(err, sql.ErrNoRows) {
		return u, fmt.Errorf("storage: user %q: %w", name, ErrUnknownUser)
	}
	if err != nil {
		return u, fmt.Errorf("storage: user %q: %w", name, err)
	}
	return u, nil
}

// checkUserTwins refuses a database whose users table holds names that
// differ only in case or surrounding space ("bob" and "Bob"): under one
// canonical form they would be one account, and quietly merging or picking
// one could hand a disabled person's name the other's role. Fail closed:
// the console does not start until an admin removes or renames one.
func checkUserTwins(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, "SELECT name FROM users ORDER BY name")
	if err != nil {
		return fmt.Errorf("reading user names: %w", err)
	}
	defer rows.Close()
	byCanon := map[string][]string{}
	var order []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return err
		}
		c := model.CanonicalName(name)
		if byCanon[c] == nil {
			order = append(order, c)
		}
		byCanon[c] = append(byCanon[c], name)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	var twins []string
	for _, c := range order {
		if len(byCanon[c]) > 1 {
			twins = append(twins, fmt.Sprintf("%q", byCanon[c]))
		}
	}
	if len(twins) > 0 {
		return fmt.Errorf("user names now compare without regard to case, and these accounts would become one: %s; "+
			"delete the one of each that should not exist (sqlite3 FILE \"DELETE FROM users WHERE name = '...'\") and start again; nothing was changed",
			strings.Join(twins, ", "))
	}
	return nil
}
