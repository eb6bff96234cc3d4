package identity_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	_ "github.com/mattn/go-sqlite3" // registers "sqlite3"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/storage/storagetest"
)

func openStore(t *testing.T) (*storage.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "db")
	st, err := storage.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, path
}

// count is how many records of action the chain holds.
func count(t *testing.T, st *storage.Store, action string) int {
	t.Helper()
	es, err := st.AuditEntries(context.Background(), storage.AuditFilter{Action: action})
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// With the audit log unwritable no account changes.
func TestAccountChangesNeedTheirAuditRecord(t *testing.T) {
	st, path := openStore(t)
	ctx := context.Background()
	as := identity.AuditAs(audit.New(st), "root-admin")
	if err := identity.CreateUser(ctx, st, as, "dave", model.RoleOperator, "hash-1", "root-admin"); err != nil {
		t.Fatal(err)
	}
	storagetest.FailAuditWrites(t, path, true)
	_, roleErr := identity.SetRole(ctx, st, as, "dave", model.RoleAdmin)
	for what, err := range map[string]error{
		"create":   identity.CreateUser(ctx, st, as, "erin", model.RoleViewer, "", "root-admin"),
		"role":     roleErr,
		"password": identity.SetPassword(ctx, st, as, "dave", "hash-2"),
		"disable":  identity.SetDisabled(ctx, st, as, "dave", true),
	} {
		if !errors.Is(err, storage.ErrAuditWrite) {
			t.Errorf("%s without its audit record: %v", what, err)
		}
	}
	if _, err := st.UserByName(ctx, "erin"); !errors.Is(err, storage.ErrUnknownUser) {
		t.Errorf("erin was created without a record: %v", err)
	}
	if u, _ := st.UserByName(ctx, "dave"); u.Role != model.RoleOperator || u.PasswordHash != "hash-1" || u.Disabled {
		t.Errorf("dave changed without a record: %+v", u)
	}
}

// A change the store refuses (the account went away, or the name was
// taken, after identity's checks) leaves no record claiming it.
func TestRefusedAccountChangeLeavesNoRecord(t *testing.T) {
	st, path := openStore(t)
	ctx := context.Background()
	as := identity.AuditAs(audit.New(st), "root-admin")
	raw, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	// meanwhile runs q on a second connection just before the change is
	// written, as another admin's request would.
	meanwhile := func(q string, args ...any) identity.Auditor {
		return func(ctx context.Context, action audit.Action, subject string, details any, write func(model.AuditEntry) (model.AuditEntry, error)) error {
			if _, err := raw.Exec(q, args...); err != nil {
				t.Fatal(err)
			}
			return as(ctx, action, subject, details, write)
		}
	}
	gone := meanwhile(`DELETE FROM users WHERE name = 'dave'`)
	for action, change := range map[string]func() error{
		"user.role":     func() error { _, err := identity.SetRole(ctx, st, gone, "dave", model.RoleAdmin); return err },
		"user.password": func() error { return identity.SetPassword(ctx, st, gone, "dave", "hash-2") },
		"user.disable":  func() error { return identity.SetDisabled(ctx, st, gone, "dave", true) },
	} {
		if err := st.CreateUser(ctx, model.User{Name: "dave", Role: model.RoleOperator, PasswordHash: "hash-1"}); err != nil {
			t.Fatal(err)
		}
		if err := change(); !errors.Is(err, storage.ErrUnknownUser) {
			t.Errorf("%s of a user deleted meanwhile: %v", action, err)
		}
		if n := count(t, st, action); n != 0 {
			t.Errorf("%s was refused, but %d records claim it", action, n)
		}
	}
	taken := meanwhile(`INSERT INTO users(name, role, password_hash, created_ms, disabled, created_by) VALUES ('erin', 'viewer', '', 1, 0, 'other')`)
	if err := identity.CreateUser(ctx, st, taken, "erin", model.RoleAdmin, "hash", "root-admin"); !errors.Is(err, storage.ErrUserExists) {
		t.Errorf("creating a name taken meanwhile: %v", err)
	}
	if n := count(t, st, "user.create"); n != 0 {
		t.Errorf("a refused creation left %d user.create records", n)
	}
	if u, _ := st.UserByName(ctx, "erin"); u.Role != model.RoleViewer {
		t.Errorf("erin is %s, want the viewer created meanwhile", u.Role)
	}
}

// The names the console writes as actors of its own records cannot be
// taken by an account, in any case, from any door (issue 29, 13).
func TestReservedNamesAreRefused(t *testing.T) {
	st, _ := openStore(t)
	ctx := context.Background()
	as := identity.AuditAs(audit.New(st), "root-admin")
	for _, name := range []string{"anonymous", "Anonymous", "system", "config-file", "demo", "scale-rig"} {
		if err := identity.CreateUser(ctx, st, as, name, model.RoleAdmin, "hash", "root-admin"); err == nil {
			t.Errorf("account %q was created", name)
		}
		if err := identity.CheckNewName(name); err == nil {
			t.Errorf("CheckNewName(%q) = nil", name)
		}
		l := identity.Login{Name: model.CanonicalName(name), Role: model.RoleOperator, Issuer: "https://idp", Subject: "s-" + name}
		if err := identity.Admit(ctx, st, audit.New(st), l); err == nil {
			t.Errorf("OIDC sign-in as %q admitted", name)
		}
	}
	if n := count(t, st, "user.create"); n != 0 {
		t.Errorf("%d user.create records, want 0", n)
	}
	if err := identity.CreateUser(ctx, st, as, "anonymous2", model.RoleViewer, "hash", "root-admin"); err != nil {
		t.Errorf("a name merely starting with a reserved one: %v", err)
	}
}
