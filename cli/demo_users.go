package cli

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// demoUsers are the sandbox's accounts: two operators, so a visitor can
// walk a four-eyes failover in two browser windows, and a viewer.
var demoUsers = []struct {
	name string
	role model.Role
}{
	{"alice", model.RoleOperator},
	{"bob", model.RoleOperator},
	{"viewer", model.RoleViewer},
}

// createDemoUsers adds the sandbox accounts with fresh random passwords
// (the sandbox listens on 127.0.0.1 only, but a fixed password would still
// be a habit worth not teaching) and prints them.
func createDemoUsers(ctx context.Context, dbPath string, stdout io.Writer) error {
	store, err := storage.Open(dbPath)
	if err != nil {
		return err
	}
	defer store.Close()
	fmt.Fprintln(stdout, "drconsole sandbox accounts (new passwords every run):")
	// Created the one way every account is: with its audit record in one
	// transaction, so an account the audit log cannot record does not exist.
	ctx = audit.WithClient(ctx, audit.Client{IP: "local", UserAgent: "drconsole-demo/" + version})
	auditor := identity.AuditAs(audit.New(store), "demo")
	for _, u := range demoUsers {
		pw := rand.Text() // 26 base32 characters, 130 bits
		hash, err := identity.HashPassword(pw)
		if err != nil {
			return err
		}
		if err := identity.CreateUser(ctx, store, auditor, u.name, u.role, hash, "demo"); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "  %-8s %-9s password %s\n", u.name, u.role, pw)
	}
	return nil
}

// sandboxMarker marks a data directory whose database belongs to the
// sandbox: `demo --data DIR` deletes that database at every start (its
// clusters are new each run, so earlier history would describe topics that
// no longer exist), and deletes nothing it did not create.
const sandboxMarker = "drconsole-sandbox"

var dbFiles = []string{"drconsole.db", "drconsole.db-wal", "drconsole.db-shm"}

// prepareSandboxDir makes dir ready for a sandbox run: an empty or new
// directory is marked; an earlier sandbox's database is removed; a
// database the sandbox did not create (a real console's audit log) is
// refused and left alone.
func prepareSandboxDir(dir string) error {
	if err := os.MkdirAll(dir, storage.PrivateDir); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	marker := filepath.Join(dir, sandboxMarker)
	_, err := os.Lstat(marker)
	marked := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("demo --data %s: %w", dir, err)
	}
	if !marked {
		for _, f := range dbFiles {
			if _, err := os.Lstat(filepath.Join(dir, f)); !errors.Is(err, fs.ErrNotExist) {
				return inputError{fmt.Errorf("demo --data %s: the directory holds %s, which the sandbox did not create "+
					"(no %s marker): it may be a real console's database and audit log, and the sandbox deletes its "+
					"database at every start; nothing was deleted. Use an empty or new directory", dir, f, sandboxMarker)}
			}
		}
		// The marker comes before the database: a run stopped in between
		// leaves a directory the next run may clean, never an unmarked
		// sandbox database it would refuse.
		if err := os.WriteFile(marker, []byte("drconsole sandbox data: `drconsole demo --data` deletes the database here at every start.\n"), 0o600); err != nil {
			return fmt.Errorf("demo --data %s: marking the directory: %w", dir, err)
		}
		return nil
	}
	for _, f := range dbFiles {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("demo --data %s: removing the previous sandbox database: %w", dir, err)
		}
	}
	return nil
}

// refuseSandboxDir keeps serve off a sandbox directory: the next
// `demo --data` there would delete what the real console recorded.
func refuseSandboxDir(dir string) error {
	if _, err := os.Lstat(filepath.Join(dir, sandboxMarker)); err == nil {
		return fmt.Errorf("data_dir %s is a sandbox directory (%s marker): `drconsole demo --data` deletes its database "+
			"at every start; give serve another data_dir", dir, sandboxMarker)
	}
	return nil
}
