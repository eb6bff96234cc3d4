package cli

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/storage/storagetest"
)

// An account whose audit record cannot be written does not come to be:
// neither from `drconsole users add` nor from the sandbox's demo accounts.
func TestNoUserWithoutAuditRecord(t *testing.T) {
	ctx := context.Background()
	cfg, db := cliConfig(t)
	s, err := storage.Open(db) // the schema, so the trigger has a table
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	storagetest.FailAuditWrites(t, db, true)

	if r := runCLI(t, "", "users", "add", "carol", "--role", "viewer", "--no-password", "--config", cfg); r.code == 0 {
		t.Fatalf("users add with a failing audit log: exit 0 %q", r.stdout)
	}
	if err := createDemoUsers(ctx, db, io.Discard); err == nil {
		t.Fatal("demo accounts created with a failing audit log")
	}

	if s, err = storage.Open(db); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	users, err := s.Users(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 0 {
		t.Fatalf("accounts exist without their audit records: %+v", users)
	}
	if _, err := s.UserByName(ctx, "alice"); !errors.Is(err, storage.ErrUnknownUser) {
		t.Fatalf("demo user alice: %v, want no such user", err)
	}
}
