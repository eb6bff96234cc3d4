package cli

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/storage"
)

// tamperedBackup makes a database with accounts through the CLI, backs it
// up with the test key, and returns the copy and its manifest's path.
func tamperedBackup(t *testing.T) (dir, copyPath string) {
	t.Helper()
	cfg, db := cliConfig(t)
	if r := runCLI(t, "correct horse battery\n", "users", "add", "alice", "--role", "operator", "--password-stdin", "--config", cfg); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := runCLI(t, "", "users", "add", "bob", "--role", "viewer", "--no-password", "--config", cfg); r.code != 0 {
		t.Fatal(r.stderr)
	}
	dir = t.TempDir()
	if r := runCLI(t, "", "backup", "--key-file", backupKeyFile(t), "--db", db, "--to", filepath.Join(dir, "backups")); r.code != 0 {
		t.Fatal(r.stderr)
	}
	return dir, onlyBackup(t, filepath.Join(dir, "backups"))
}

// editCopy runs SQL on the copy, then recomputes its manifest's size and
// SHA-256, as someone with write access to the backup store can; without
// the key the MAC cannot be, so it goes.
func editCopy(t *testing.T, copyPath, q string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+copyPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(q); err != nil {
		t.Fatal(err)
	}
	db.Close()
	b, err := os.ReadFile(copyPath)
	if err != nil {
		t.Fatal(err)
	}
	m := readManifest(t, copyPath)
	sum := sha256.Sum256(b)
	m.SHA256, m.Bytes, m.MAC = hex.EncodeToString(sum[:]), int64(len(b)), ""
	out, _ := json.Marshal(m)
	if err := os.WriteFile(copyPath+".json", out, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Issue 29, finding 2: an admin inserted into a backup (with a known
// password and a creation time of 1970) and the manifest's hash
// recomputed restored with "chain intact", passed audit verify, and
// could approve. Now the accounts are held to the audit chain and the
// manifest to the backup key: the restore is refused naming the account,
// audit verify fails naming it, and the console does not start on it.
func TestTamperedBackupIsRefused(t *testing.T) {
	hash, err := identity.HashPassword("mallory-knows-this")
	if err != nil {
		t.Fatal(err)
	}
	inserted := "INSERT INTO users(name, role, password_hash, created_ms, disabled, created_by) VALUES ('mallory', 'admin', '" + hash + "', 0, 0, 'cli:root')"
	edits := map[string]struct{ sql, want string }{
		"admin inserted": {inserted, "mallory: no record of its creation"},
		"backdated":      {"UPDATE users SET created_ms = 0 WHERE name = 'bob'", "bob: created 1970-01-01"},
		"raised":         {"UPDATE users SET role = 'admin' WHERE name = 'bob'", "bob: role admin, the audit log says viewer"},
		"password set":   {"UPDATE users SET password_hash = '" + hash + "' WHERE name = 'bob'", "bob: has a password the audit log never set"},
		"password swapped": {"UPDATE users SET password_hash = '" + hash + "' WHERE name = 'alice'",
			"alice: its password is not the one"},
		"creator changed": {"UPDATE users SET created_by = 'sso:oidc' WHERE name = 'bob'", `bob: created by "sso:oidc"`},
		"re-enabled":      {"UPDATE users SET disabled = 1 WHERE name = 'alice'", "alice: disabled true"},
	}
	for what, e := range edits {
		t.Run(what, func(t *testing.T) {
			dir, copyPath := tamperedBackup(t)
			editCopy(t, copyPath, e.sql)
			target := filepath.Join(dir, "standby", "drconsole.db")
			os.MkdirAll(filepath.Dir(target), 0o700)
			// Even with a manifest that needs no key, the accounts give it away.
			r := runCLI(t, "", "restore", "--unauthenticated", "--from", copyPath, "--db", target)
			if r.code != 1 || !strings.Contains(r.stderr, e.want) || !strings.Contains(r.stderr, "nothing was restored") {
				t.Fatalf("restore of the edited copy: %d %q %q", r.code, r.stdout, r.stderr)
			}
			if exists(target) {
				t.Fatal("the refused copy was put in place")
			}
			r = runCLI(t, "", "audit", "verify", "--db", copyPath)
			if r.code != 1 || !strings.Contains(r.stderr, e.want) {
				t.Fatalf("audit verify of the edited copy: %d %q %q", r.code, r.stdout, r.stderr)
			}
			// The console refuses to start on it, naming the account.
			store, err := storage.Open(copyPath)
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			err = checkAtStart(context.Background(), store, config.AuditAnchor{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err == nil || !strings.Contains(err.Error(), e.want) || !strings.Contains(err.Error(), "nothing was started") {
				t.Fatalf("start on the edited copy: %v", err)
			}
		})
	}
}

// The manifest is authenticated with the backup key: a copy whose
// manifest was recomputed does not restore with the key, nor without a
// key, and a manifest without a MAC needs --unauthenticated.
func TestBackupManifestIsAuthenticated(t *testing.T) {
	dir, copyPath := tamperedBackup(t)
	target := filepath.Join(dir, "standby", "drconsole.db")
	os.MkdirAll(filepath.Dir(target), 0o700)
	mac := readManifest(t, copyPath).MAC
	// An edit that leaves the accounts alone: only the MAC shows it.
	editCopy(t, copyPath, "INSERT INTO flows(name) VALUES ('smuggled')")
	m := readManifest(t, copyPath)
	m.MAC = mac
	m.AuditRecords++ // the old MAC kept, any field changed
	out, _ := json.Marshal(m)
	os.WriteFile(copyPath+".json", out, 0o600)
	r := runCLI(t, "", "restore", "--key-file", backupKeyFile(t), "--from", copyPath, "--db", target)
	if r.code != 1 || !strings.Contains(r.stderr, "MAC does not match") {
		t.Fatalf("recomputed manifest with the key: %d %q", r.code, r.stderr)
	}
	r = runCLI(t, "", "restore", "--from", copyPath, "--db", target)
	if r.code != 1 || !strings.Contains(r.stderr, "give the backup key") {
		t.Fatalf("authenticated manifest without the key: %d %q", r.code, r.stderr)
	}
	wrong := writeFile(t, t.TempDir(), "other.key", strings.Repeat("k", 40))
	_, good := tamperedBackup(t)
	if r = runCLI(t, "", "restore", "--key-file", wrong, "--from", good, "--db", target); r.code != 1 || !strings.Contains(r.stderr, "MAC does not match") {
		t.Fatalf("another key: %d %q", r.code, r.stderr)
	}
	short := writeFile(t, t.TempDir(), "short.key", "too short")
	if r = runCLI(t, "", "restore", "--key-file", short, "--from", good, "--db", target); r.code == 0 || !strings.Contains(r.stderr, "want at least 32") {
		t.Fatalf("a short key: %d %q", r.code, r.stderr)
	}
	if exists(target) {
		t.Fatal("a refused copy was put in place")
	}
	// The untouched backup restores with its key, and says so in its log.
	if r = runCLI(t, "", "restore", "--key-file", backupKeyFile(t), "--from", good, "--db", target); r.code != 0 {
		t.Fatalf("restore: %d %q", r.code, r.stderr)
	}
	r = runCLI(t, "", "audit", "export", "--db", target, "--action", "backup.restore")
	if !strings.Contains(r.stdout, `"authenticated":true`) {
		t.Fatalf("restore record: %q %q", r.stdout, r.stderr)
	}
}
