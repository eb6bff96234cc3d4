package identity

// Accounts: the console's users are changed the one way both
// `drconsole users` (cli) and the admin page (handlers/admin.go) do it:
// check the input, audit first (a change the audit log cannot record does
// not happen), then apply. Callers hash passwords (HashPassword) and say
// who is acting through their Auditor; clear-text passwords never reach
// these functions, so they cannot reach the log.

import (
	"context"
	"errors"
	"fmt"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// Auditor appends one audit record for the acting person (the CLI's OS
// user, the admin page's signed-in admin). subject is "user:<name>".
type Auditor func(ctx context.Context, action, subject string, details any) error

// AuditAs is the Auditor that records through rec as actor, naming the
// client ctx carries (audit.WithClient).
func AuditAs(rec *audit.Recorder, actor string) Auditor {
	return func(ctx context.Context, action, subject string, details any) error {
		_, err := rec.Record(ctx, actor, action, subject, details)
		return err
	}
}

// CheckName says what is wrong with a user name, or nil. Names are
// compared in model.CanonicalName form: every function here takes any
// case and acts on (and audits) the canonical name.
func CheckName(name string) error {
	if !model.ValidName(name) {
		return fmt.Errorf("%q is not a valid user name (letters, digits, . _ @ -; at most 64)", name)
	}
	return nil
}

// CheckRole says what is wrong with a role, or nil.
func CheckRole(role model.Role) error {
	if !role.Valid() {
		return fmt.Errorf("%q: want viewer, operator or admin", role)
	}
	return nil
}

// existsError: CreateUser with a name already taken.
type existsError string

func (e existsError) Error() string { return fmt.Sprintf("%q already exists", string(e)) }
func (e existsError) Unwrap() error { return storage.ErrUserExists }

// CreateUser adds an account; hash "" makes one that can sign in only through
// the reverse proxy. An existing name gives an error wrapping
// storage.ErrUserExists, before anything is audited. createdBy is who
// creates it (an approval from an account its requester created does not
// count).
func CreateUser(ctx context.Context, st *storage.Store, audit Auditor, name string, role model.Role, hash, createdBy string) error {
	name = model.CanonicalName(name)
	if err := CheckName(name); err != nil {
		return err
	}
	if err := CheckRole(role); err != nil {
		return fmt.Errorf("role %w", err)
	}
	if _, err := st.UserByName(ctx, name); err == nil {
		return existsError(name)
	} else if !errors.Is(err, storage.ErrUnknownUser) {
		return err
	}
	if err := audit(ctx, "user.create", "user:"+name, map[string]any{"role": role, "password": hash != ""}); err != nil {
		return err
	}
	return st.CreateUser(ctx, model.User{Name: name, Role: role, PasswordHash: hash, CreatedBy: createdBy})
}

// SetRole changes name's role and returns the one it had. Asking for the
// role it already has changes (and audits) nothing.
func SetRole(ctx context.Context, st *storage.Store, audit Auditor, name string, to model.Role) (from model.Role, err error) {
	name = model.CanonicalName(name)
	if err := CheckRole(to); err != nil {
		return "", err
	}
	u, err := st.UserByName(ctx, name)
	if err != nil {
		return "", err
	}
	if u.Role == to {
		return u.Role, nil
	}
	if err := audit(ctx, "user.role", "user:"+name, map[string]any{"from": u.Role, "to": to}); err != nil {
		return u.Role, err
	}
	return u.Role, st.SetRole(ctx, name, to)
}

// SetPassword replaces name's password hash, which signs them out
// everywhere.
func SetPassword(ctx context.Context, st *storage.Store, audit Auditor, name, hash string) error {
	name = model.CanonicalName(name)
	if _, err := st.UserByName(ctx, name); err != nil {
		return err
	}
	if err := audit(ctx, "user.password", "user:"+name, map[string]any{"sessions_ended": true}); err != nil {
		return err
	}
	return st.SetPassword(ctx, name, hash)
}

// SetDisabled disables name, ending every session they have, or enables
// them again.
func SetDisabled(ctx context.Context, st *storage.Store, audit Auditor, name string, disabled bool) error {
	name = model.CanonicalName(name)
	if _, err := st.UserByName(ctx, name); err != nil {
		return err
	}
	action, details := "user.enable", any(nil)
	if disabled {
		action, details = "user.disable", map[string]any{"sessions_ended": true}
	}
	if err := audit(ctx, action, "user:"+name, details); err != nil {
		return err
	}
	return st.SetDisabled(ctx, name, disabled)
}
