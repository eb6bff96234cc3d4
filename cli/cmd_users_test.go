package cli

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/storage"
)

func cliConfig(t *testing.T) (cfgPath, dbPath string) {
	t.Helper()
	return cliConfigWith(t, "")
}

// cliConfigWith writes a minimal config file (two clusters, one flow) with
// extra YAML appended.
func cliConfigWith(t *testing.T, extra string) (cfgPath, dbPath string) {
	t.Helper()
	identity.HashCost = bcrypt.MinCost
	dir := t.TempDir()
	cfgPath = writeFile(t, dir, "drconsole.yaml", `
data_dir: `+dir+`
clusters:
  primary: {bootstrap: ["127.0.0.1:9092"]}
  dr: {bootstrap: ["127.0.0.1:9093"]}
flows:
  - {source: primary, target: dr}
`+extra)
	return cfgPath, filepath.Join(dir, "drconsole.db")
}

func TestUsersCLI(t *testing.T) {
	cfg, db := cliConfig(t)
	r := runCLI(t, "a long enough password\n", "users", "add", "alice", "--role", "operator", "--password-stdin", "--config", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "added alice (operator)") {
		t.Fatalf("users add: %d %q %q", r.code, r.stdout, r.stderr)
	}
	for _, tc := range []struct {
		stdin string
		args  []string
		code  int
		want  string
	}{
		{"short\n", []string{"users", "add", "bob", "--role", "viewer", "--password-stdin", "--config", cfg}, 2, "password too short: at least 12"},
		{"", []string{"users", "add", "bob", "--role", "viewer", "--config", cfg}, 2, "no terminal to ask for the password"},
		{"x\n", []string{"users", "add", "bob", "--role", "root", "--password-stdin", "--config", cfg}, 2, `--role "root"`},
		{"a long enough password\n", []string{"users", "add", "alice", "--role", "viewer", "--password-stdin", "--config", cfg}, 1, "already exists"},
		{"a long enough password\n", []string{"users", "add", "Alice", "--role", "admin", "--password-stdin", "--config", cfg}, 1, `"alice" already exists`},
		{"", []string{"users", "add", " ALICE ", "--role", "admin", "--no-password", "--config", cfg}, 1, `"alice" already exists`},
		{"", []string{"users", "add", "cli:root", "--role", "admin", "--config", cfg}, 2, "not a valid user name"},
		{"", []string{"users", "add", "bob", "--role", "viewer", "--no-password"}, 2, "exactly one of --config FILE or --db FILE"},
		{"", []string{"users", "frobnicate", "--config", cfg}, 2, "unknown subcommand"},
		{"", []string{"users", "role", "alice", "--config", cfg}, 2, "want 2 argument(s)"},
		{"", []string{"users", "disable", "nobody", "--config", cfg}, 1, "no such user"},
		{"", []string{"users", "add", "x", "--role", "viewer", "--no-password", "--db", db + ".typo"}, 2, "does not exist: check the path, or add --create"},
		{"", []string{"users", "list", "--db", db + ".typo"}, 2, "does not exist"},
		{"", []string{"users", "list", "--db", "/dev/null", "--create"}, 2, "/dev/null is not a regular file"},
	} {
		r := runCLI(t, tc.stdin, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d %q, want %d %q", tc.args, r.code, r.stderr, tc.code, tc.want)
		}
	}
	steps := [][]string{
		{"users", "add", "bob", "--role", "viewer", "--no-password", "--db", db},
		{"users", "role", "bob", "admin", "--db", db},
		{"users", "disable", "alice", "--config", cfg},
		{"users", "enable", "alice", "--config", cfg},
	}
	for _, args := range steps {
		if r := runCLI(t, "", args...); r.code != 0 {
			t.Fatalf("%v: %d %q", args, r.code, r.stderr)
		}
	}
	if r := runCLI(t, "another long password\r\n", "users", "passwd", "alice", "--password-stdin", "--config", cfg); r.code != 0 {
		t.Fatalf("passwd: %d %q", r.code, r.stderr)
	}
	r = runCLI(t, "", "users", "list", "--config", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "alice  operator  active") || !strings.Contains(r.stdout, "bob    admin     active  none (proxy only)") {
		t.Fatalf("users list:\n%s%s", r.stdout, r.stderr)
	}

	s, err := storage.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	alice, _ := s.UserByName(ctx, "alice")
	if !identity.CheckPassword(alice.PasswordHash, "another long password") {
		t.Fatal("passwd did not set the password read from stdin (CRLF trimmed)")
	}
	es, _ := s.AuditEntries(ctx, storage.AuditFilter{Oldest: true})
	var got []string
	for _, e := range es {
		if !strings.HasPrefix(e.Actor, "cli:") || e.ClientIP != "local" {
			t.Errorf("record %d actor %q ip %q, want cli:<user> local", e.ID, e.Actor, e.ClientIP)
		}
		got = append(got, e.Action+" "+e.Subject)
	}
	want := "user.create user:alice,user.create user:bob,user.role user:bob,user.disable user:alice,user.enable user:alice,user.password user:alice"
	if strings.Join(got, ",") != want {
		t.Fatalf("audit:\n%s\nwant\n%s", strings.Join(got, ","), want)
	}
	// The change, and the state it left (held to the users table at start).
	if d := string(es[2].Details); !json.Valid(es[2].Details) || !strings.HasSuffix(d, `,"from":"viewer","to":"admin"}`) ||
		!strings.HasPrefix(d, `{"account":{"role":"admin","created_ms":`) {
		t.Fatalf("role change details %s", es[2].Details)
	}
}

// audit verify: 0 and the record count on an intact chain; 1 naming the
// first bad record after an edit, a deletion or a reordering by SQL.
func TestAuditVerifyCLI(t *testing.T) {
	for _, tc := range []struct {
		name, sql, want string
	}{
		{"edit", `UPDATE audit SET actor = 'mallory' WHERE id = 2`, "audit: record 2: contents do not match"},
		{"delete", `DELETE FROM audit WHERE id = 2`, "audit: record 3: record 2 is missing (deleted)"},
		{"reorder", `UPDATE audit SET id = 100 WHERE id = 2; UPDATE audit SET id = 2 WHERE id = 3; UPDATE audit SET id = 3 WHERE id = 100`,
			"audit: record 2: prev_hash does not match the hash of record 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, db := cliConfigWithFourUsers(t)
			r := runCLI(t, "", "audit", "verify", "--db", db)
			if r.code != 0 || !strings.HasPrefix(r.stdout, "audit: 4 records, chain intact\naudit: head record 4 hash ") {
				t.Fatalf("intact: %d %q %q", r.code, r.stdout, r.stderr)
			}
			r = runCLI(t, "", "audit", "export", "--config", cfg, "--format", "csv")
			if r.code != 0 || strings.Count(r.stdout, "\n") != 5 {
				t.Fatalf("export csv: %d %q", r.code, r.stdout)
			}

			sqldb, err := sql.Open("sqlite3", "file:"+db)
			if err != nil {
				t.Fatal(err)
			}
			defer sqldb.Close()
			if _, err := sqldb.Exec(tc.sql); err == nil {
				t.Fatal("the append-only triggers let the change through")
			}
			if _, err := sqldb.Exec("DROP TRIGGER audit_no_update; DROP TRIGGER audit_no_delete; " + tc.sql); err != nil {
				t.Fatal(err)
			}
			r = runCLI(t, "", "audit", "verify", "--config", cfg)
			if r.code != 1 || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("after %s: exit %d %q, want 1 and %q", tc.name, r.code, r.stderr, tc.want)
			}
		})
	}
	if r := runCLI(t, "", "audit", "verify", "--db", filepath.Join(t.TempDir(), "none.db")); r.code != 1 || !strings.Contains(r.stderr, "no such file") {
		t.Fatalf("missing db: %d %q", r.code, r.stderr)
	}
	if r := runCLI(t, "", "audit", "verify"); r.code != 2 {
		t.Fatalf("no --db: %d %q", r.code, r.stderr)
	}
}

// --db names an existing database; a new one takes --create.
func TestUsersCLICreateFlag(t *testing.T) {
	db := filepath.Join(t.TempDir(), "new.db")
	if r := runCLI(t, "", "users", "add", "root", "--role", "admin", "--no-password", "--db", db); r.code != 2 {
		t.Fatalf("without --create: exit %d %q", r.code, r.stderr)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Fatalf("a database was created without --create: %v", err)
	}
	if r := runCLI(t, "", "users", "add", "root", "--role", "admin", "--no-password", "--db", db, "--create"); r.code != 0 {
		t.Fatalf("with --create: exit %d %q", r.code, r.stderr)
	}
	if r := runCLI(t, "", "users", "list", "--db", db); r.code != 0 || !strings.Contains(r.stdout, "root") {
		t.Fatalf("existing --db: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
}
