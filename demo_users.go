package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"

	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/web/identity"
)

// demoUsers are the sandbox's accounts: two operators, so a visitor can
// walk a four-eyes failover in two browser windows, and a viewer.
var demoUsers = []struct{ name, role string }{
	{"alice", identity.RoleOperator},
	{"bob", identity.RoleOperator},
	{"viewer", identity.RoleViewer},
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
	for _, u := range demoUsers {
		pw := rand.Text() // 26 base32 characters, 130 bits
		hash, err := identity.HashPassword(pw)
		if err != nil {
			return err
		}
		if err := store.CreateUser(ctx, storage.User{Name: u.name, Role: u.role, PasswordHash: hash, CreatedBy: "demo"}); err != nil {
			return err
		}
		if _, err := store.AppendAudit(ctx, storage.AuditEntry{Actor: "demo", Action: "user.create", ClientIP: "local",
			UserAgent: "drconsole-demo/" + version, Subject: "user:" + u.name,
			Details: []byte(fmt.Sprintf(`{"role":%q,"password":true}`, u.role))}); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "  %-8s %-9s password %s\n", u.name, u.role, pw)
	}
	return nil
}
