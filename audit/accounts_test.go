package audit_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// problems is what CheckAccounts says, as "name: why" lines.
func problems(t *testing.T, s *storage.Store) (string, audit.AccountsReport) {
	t.Helper()
	rep, err := audit.CheckAccounts(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range rep.Problems {
		out = append(out, p.String())
	}
	return strings.Join(out, "\n"), rep
}

// legacyCreate adds an account the way a console from before account
// states were recorded did: the row, and a user.create record with only
// the role and whether it has a password.
func legacyCreate(t *testing.T, s *storage.Store, name string, role model.Role, hash string) {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UnixMilli()
	if err := s.CreateUser(ctx, model.User{Name: name, Role: role, PasswordHash: hash, CreatedMs: now, CreatedBy: "cli:root"}); err != nil {
		t.Fatal(err)
	}
	d, _ := json.Marshal(map[string]any{"role": role, "password": hash != ""})
	if _, err := s.AppendAudit(ctx, model.AuditEntry{Actor: "cli:root", Action: "user.create", Subject: "user:" + name, Details: d, AtMs: now}); err != nil {
		t.Fatal(err)
	}
}

// A database from before account states were recorded: its accounts are
// held to their user.* records as far as those go (an inserted or
// backdated account shows), then the baseline, written once, makes every
// field exact (a password hash swapped later shows too).
func TestAccountsLegacyThenBaseline(t *testing.T) {
	s, path := open(t)
	ctx := context.Background()
	legacyCreate(t, s, "alice", model.RoleOperator, "hash-a")
	legacyCreate(t, s, "bob", model.RoleViewer, "")
	d, _ := json.Marshal(map[string]any{"from": "viewer", "to": "operator"})
	s.AppendAudit(ctx, model.AuditEntry{Actor: "cli:root", Action: "user.role", Subject: "user:bob", Details: d})
	if err := s.SetRole(ctx, "bob", model.RoleOperator); err != nil {
		t.Fatal(err)
	}
	if got, rep := problems(t, s); got != "" || rep.Baselined || rep.Accounts != 2 {
		t.Fatalf("legacy accounts as recorded: %q %+v", got, rep)
	}

	// Changes behind the console's back, each named.
	s.CreateUser(ctx, model.User{Name: "mallory", Role: model.RoleAdmin, PasswordHash: "known", CreatedMs: 1})
	if got, _ := problems(t, s); got != "mallory: no record of its creation in the audit log" {
		t.Fatalf("inserted admin: %q", got)
	}
	storageExec(t, path, "DELETE FROM users WHERE name = 'mallory'")
	storageExec(t, path, "UPDATE users SET created_ms = 0 WHERE name = 'bob'")
	if got, _ := problems(t, s); !strings.HasPrefix(got, "bob: created 1970-01-01T00:00:00Z, but its user.create record is of") {
		t.Fatalf("backdated: %q", got)
	}
	if ok, err := audit.BaselineAccounts(ctx, s); err != nil {
		t.Fatal(err)
	} else if !ok {
		t.Fatal("baseline not written")
	}
	if ok, _ := audit.BaselineAccounts(ctx, s); ok {
		t.Fatal("a second baseline was written")
	}
	// The baseline records what the rows say (the start checks first:
	// cli.checkAtStart never writes it over a problem).
	if got, rep := problems(t, s); got != "" || !rep.Baselined {
		t.Fatalf("after the baseline: %q %+v", got, rep)
	}
	if err := s.SetPassword(ctx, "alice", "hash-swapped"); err != nil { // unaudited
		t.Fatal(err)
	}
	if got, _ := problems(t, s); got != "alice: its password is not the one the audit log last recorded" {
		t.Fatalf("password swapped after the baseline: %q", got)
	}
}

// Every audited account change records the state it left, so the rows
// match after any sequence of them, and an unaudited one shows.
func TestAuditedAccountChangesRecordTheirState(t *testing.T) {
	s, _ := open(t)
	ctx := context.Background()
	rec := audit.New(s)
	write := func(action audit.Action, name string, f func(model.AuditEntry) (model.AuditEntry, error)) {
		t.Helper()
		if _, err := rec.With(ctx, "root", action, "user:"+name, map[string]any{"x": 1}, f); err != nil {
			t.Fatal(err)
		}
	}
	write("user.create", "carol", func(e model.AuditEntry) (model.AuditEntry, error) {
		return s.CreateUserAudited(ctx, model.User{Name: "carol", Role: model.RoleViewer, CreatedBy: "root"}, e)
	})
	write("user.role", "carol", func(e model.AuditEntry) (model.AuditEntry, error) {
		return s.SetRoleAudited(ctx, "carol", model.RoleOperator, e)
	})
	write("user.password", "carol", func(e model.AuditEntry) (model.AuditEntry, error) {
		return s.SetPasswordAudited(ctx, "carol", "hash-c", e)
	})
	write("user.disable", "carol", func(e model.AuditEntry) (model.AuditEntry, error) {
		return s.SetDisabledAudited(ctx, "carol", true, e)
	})
	if got, _ := problems(t, s); got != "" {
		t.Fatalf("audited changes: %q", got)
	}
	es, _ := s.AuditEntries(ctx, storage.AuditFilter{Action: "user.disable"})
	if len(es) != 1 || !strings.Contains(string(es[0].Details), `"account":{`) || !strings.Contains(string(es[0].Details), `"disabled":true`) || !strings.Contains(string(es[0].Details), `"x":1`) {
		t.Fatalf("the record's details: %s", es[0].Details)
	}
	if err := s.SetDisabled(ctx, "carol", false); err != nil { // unaudited
		t.Fatal(err)
	}
	if got, _ := problems(t, s); got != "carol: disabled false, the audit log says true" {
		t.Fatalf("re-enabled behind the console's back: %q", got)
	}
}

// storageExec runs q on the database file, as someone with the file can.
func storageExec(t *testing.T, path, q string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(q); err != nil {
		t.Fatal(err)
	}
}
