package cli

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/storage"
)

// startCheck is checkAtStart on the database at db with anchor file.
func startCheck(t *testing.T, db, anchor string) error {
	t.Helper()
	store, err := storage.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	return checkAtStart(context.Background(), store, config.AuditAnchor{File: anchor}, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// Issue 29, finding 12: a database rolled back to an older copy started
// unnoticed although audit_anchor.file named a later head. The start now
// holds the log to the anchor file and refuses; a deliberate restore,
// marked in the file (restore --config does it, or audit head
// --restore), starts.
func TestStartRefusesARolledBackDatabase(t *testing.T) {
	anchor := filepath.Join(t.TempDir(), "anchors.txt")
	cfg, db := cliConfigWith(t, "audit_anchor:\n  file: "+anchor+"\n")
	if r := runCLI(t, "", "users", "add", "a", "--role", "viewer", "--no-password", "--config", cfg); r.code != 0 {
		t.Fatal(r.stderr)
	}
	backups := filepath.Join(t.TempDir(), "backups")
	if r := runCLI(t, "", "backup", "--key-file", backupKeyFile(t), "--config", cfg, "--to", backups); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if err := startCheck(t, db, anchor); err != nil { // no anchor file yet: the first start
		t.Fatalf("first start: %v", err)
	}
	if r := runCLI(t, "", "users", "add", "b", "--role", "viewer", "--no-password", "--config", cfg); r.code != 0 {
		t.Fatal(r.stderr)
	}
	head := runCLI(t, "", "audit", "head", "--config", cfg) // what the running console writes
	os.WriteFile(anchor, []byte(head.stdout), 0o600)
	if err := startCheck(t, db, anchor); err != nil {
		t.Fatalf("start on the anchored database: %v", err)
	}

	// Rolled back: the older copy put in place behind the console's back.
	b, err := os.ReadFile(onlyBackup(t, backups))
	if err != nil {
		t.Fatal(err)
	}
	for _, side := range []string{db + "-wal", db + "-shm"} {
		os.Remove(side)
	}
	if err := os.WriteFile(db, b, 0o600); err != nil {
		t.Fatal(err)
	}
	err = startCheck(t, db, anchor)
	if err == nil || !strings.Contains(err.Error(), "records were removed from the end") || !strings.Contains(err.Error(), "nothing was started") {
		t.Fatalf("start on the rolled-back database: %v", err)
	}

	// A deliberate restore, through restore --config, is marked in the
	// anchor file and starts.
	r := runCLI(t, "", "restore", "--key-file", backupKeyFile(t), "--config", cfg, "--from", backups, "--db", db, "--force")
	if r.code != 0 || !strings.Contains(r.stdout, "marked in the anchor file") {
		t.Fatalf("restore: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if err := startCheck(t, db, anchor); err != nil {
		t.Fatalf("start after a marked restore: %v", err)
	}
	if r := runCLI(t, "", "audit", "verify", "--config", cfg, "--anchor", anchor); r.code != 0 {
		t.Fatalf("verify after a marked restore: %d %q", r.code, r.stderr)
	}
}

// serve itself refuses a data directory whose users table was edited,
// naming the account, before it listens.
func TestServeRefusesAnEditedAccount(t *testing.T) {
	cfg, db := cliConfig(t)
	if r := runCLI(t, "", "users", "add", "alice", "--role", "viewer", "--no-password", "--config", cfg); r.code != 0 {
		t.Fatal(r.stderr)
	}
	raw, err := sql.Open("sqlite3", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("INSERT INTO users(name, role, password_hash, created_ms, created_by) VALUES ('mallory', 'admin', 'x', 0, 'cli:root')"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	r := runCLI(t, "", "serve", "--config", cfg)
	if r.code != 1 || !strings.Contains(r.stderr, "mallory: no record of its creation in the audit log") || !strings.Contains(r.stderr, "nothing was started") {
		t.Fatalf("serve on an edited users table: %d %q", r.code, r.stderr)
	}
}
