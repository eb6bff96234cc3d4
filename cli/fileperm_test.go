package cli

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// mode is the permission bits of p, from a real stat.
func mode(t *testing.T, p string) os.FileMode {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

// The files the console creates (database, WAL, SHM, backups, their
// manifests, a restored database, the anchor file) are 0600 and the
// directories it creates 0700, whatever the umask (ASVS 2: files with
// accounts, sessions and the audit log are the console's alone).
func TestCreatedFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0o022) // the usual umask: 0644 files unless asked
	t.Cleanup(func() { syscall.Umask(old) })
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, storage.PrivateDir); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(data, "drconsole.db")
	store, err := storage.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.AppendAudit(context.Background(), model.AuditEntry{Actor: "bob", Action: "test.write", Subject: "x"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{db, db + "-wal", db + "-shm"} {
		if m := mode(t, p); m != 0o600 {
			t.Errorf("%s: mode %v, want 0600", filepath.Base(p), m)
		}
	}
	backups := filepath.Join(dir, "backups")
	if r := runCLI(t, "", "backup", "--key-file", backupKeyFile(t), "--db", db, "--to", backups); r.code != 0 {
		t.Fatalf("backup: %s", r.stderr)
	}
	store.Close()
	if m := mode(t, backups); m != 0o700 {
		t.Errorf("backup directory: mode %v, want 0700", m)
	}
	copyPath := onlyBackup(t, backups)
	for _, p := range []string{copyPath, copyPath + ".json"} {
		if m := mode(t, p); m != 0o600 {
			t.Errorf("%s: mode %v, want 0600", filepath.Base(p), m)
		}
	}
	restored := filepath.Join(dir, "standby", "drconsole.db")
	os.MkdirAll(filepath.Dir(restored), 0o700)
	if r := runCLI(t, "", "restore", "--key-file", backupKeyFile(t), "--from", backups, "--db", restored); r.code != 0 {
		t.Fatalf("restore: %s", r.stderr)
	}
	if m := mode(t, restored); m != 0o600 {
		t.Errorf("restored database: mode %v, want 0600", m)
	}

	// A database an older version left 0644 is tightened at open.
	if err := os.Chmod(db, 0o644); err != nil {
		t.Fatal(err)
	}
	store, err = storage.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	store.Close()
	if m := mode(t, db); m != 0o600 {
		t.Errorf("reopened 0644 database: mode %v, want 0600", m)
	}

	anchor := filepath.Join(dir, "anchor")
	if err := writeAnchor(context.Background(), nil, config.AuditAnchor{File: anchor}, time.Now(), 0, ""); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, anchor); m != 0o600 {
		t.Errorf("anchor file: mode %v, want 0600", m)
	}
}
