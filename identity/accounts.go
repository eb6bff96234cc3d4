package identity

// Accounts: the console's users are changed the one way both
// `drconsole users` (cli) and the admin page (handlers/admin.go) do it:
// check the input, then apply the change and write its audit record in
// one transaction (a change the audit log cannot record does not happen,
// and a change refused, say for a user that no longer exists, leaves no
// record claiming it). Callers hash passwords (HashPassword) and say
// who is acting through their Auditor; clear-text passwords never reach
// these functions, so they cannot reach the log.

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// Auditor builds the audit record of the acting person (the CLI's OS
// user, the admin page's signed-in admin) doing action to subject
// ("user:<name>") and hands it to write, which stores it in the change's
// transaction (audit.Recorder.With).
type Auditor func(ctx context.Context, action audit.Action, subject string, details any, write func(model.AuditEntry) (model.AuditEntry, error)) error

// AuditAs is the Auditor that records through rec as actor, naming the
// client ctx carries (audit.WithClient).
func AuditAs(rec *audit.Recorder, actor string) Auditor {
	return func(ctx context.Context, action audit.Action, subject string, details any, write func(model.AuditEntry) (model.AuditEntry, error)) error {
		_, err := rec.With(ctx, actor, action, subject, details, write)
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

// ReservedNames are the actors the console writes into the audit log
// itself: "anonymous" (failed sign-ins, unsigned-in exports), "system",
// "config-file" (settings.changed), "demo" and "scale-rig" (the creators
// of sandbox and scale-rig accounts). An account of one of these names
// would make its records indistinguishable from the console's own and
// could claim the console's records as its own (an approval, a creator).
// (Actors with a colon, "cli:<os user>", "sso:oidc", "drconsole:...",
// cannot be account names at all.)
var ReservedNames = []string{"anonymous", "system", "config-file", "demo", "scale-rig"}

// CheckNewName is CheckName for a name an account is created with (the
// command line, the admin page, a first OIDC sign-in): it refuses
// ReservedNames too. Existing accounts of such a name can still be
// disabled or changed.
func CheckNewName(name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if reserved(name) {
		return fmt.Errorf("%q is reserved: the console writes it as the actor of its own audit records", model.CanonicalName(name))
	}
	return nil
}

// reserved reports whether name (any case) is one of ReservedNames.
func reserved(name string) bool { return slices.Contains(ReservedNames, model.CanonicalName(name)) }

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
// storage.ErrUserExists, and nothing is audited. createdBy is who
// creates it (an approval from an account its requester created does not
// count).
func CreateUser(ctx context.Context, st *storage.Store, record Auditor, name string, role model.Role, hash, createdBy string) error {
	name = model.CanonicalName(name)
	if err := CheckNewName(name); err != nil {
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
	err := record(ctx, audit.UserCreate, "user:"+name, map[string]any{"role": role, "password": hash != ""}, func(rec model.AuditEntry) (model.AuditEntry, error) {
		return st.CreateUserAudited(ctx, model.User{Name: name, Role: role, PasswordHash: hash, CreatedBy: createdBy}, rec)
	})
	if errors.Is(err, storage.ErrUserExists) {
		return existsError(name) // taken since the check above
	}
	return err
}

// SetRole changes name's role and returns the one it had. Asking for the
// role it already has changes (and audits) nothing.
func SetRole(ctx context.Context, st *storage.Store, record Auditor, name string, to model.Role) (from model.Role, err error) {
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
	return u.Role, record(ctx, audit.UserRole, "user:"+name, map[string]any{"from": u.Role, "to": to}, func(rec model.AuditEntry) (model.AuditEntry, error) {
		return st.SetRoleAudited(ctx, name, to, rec)
	})
}

// SetPassword replaces name's password hash, which signs them out
// everywhere.
func SetPassword(ctx context.Context, st *storage.Store, record Auditor, name, hash string) error {
	name = model.CanonicalName(name)
	if _, err := st.UserByName(ctx, name); err != nil {
		return err
	}
	return record(ctx, audit.UserPassword, "user:"+name, map[string]any{"sessions_ended": true}, func(rec model.AuditEntry) (model.AuditEntry, error) {
		return st.SetPasswordAudited(ctx, name, hash, rec)
	})
}

// SetDisabled disables name, ending every session they have, or enables
// them again.
func SetDisabled(ctx context.Context, st *storage.Store, record Auditor, name string, disabled bool) error {
	name = model.CanonicalName(name)
	if _, err := st.UserByName(ctx, name); err != nil {
		return err
	}
	action, details := audit.UserEnable, any(nil)
	if disabled {
		action, details = audit.UserDisable, map[string]any{"sessions_ended": true}
	}
	return record(ctx, action, "user:"+name, details, func(rec model.AuditEntry) (model.AuditEntry, error) {
		return st.SetDisabledAudited(ctx, name, disabled, rec)
	})
}
