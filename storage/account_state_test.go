package storage_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// A copy an older version made (schema 17, before linked_ms and
// raised_ms) is checked read-only, unmigrated, before it is restored: its
// accounts read with the newer fields empty.
func TestAccountStatesOfAnOlderSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	old, err := storage.OpenAtVersion(path, 17)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := old.CreateUser(ctx, model.User{Name: "alice", Role: model.RoleOperator, PasswordHash: "h", CreatedMs: 5, CreatedBy: "cli:root"}); err != nil {
		t.Fatal(err)
	}
	old.Close()
	ro, err := storage.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	got, err := ro.AccountStates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a, ok := got["alice"]
	if !ok || a.Role != model.RoleOperator || a.CreatedMs != 5 || a.CreatedBy != "cli:root" || a.PasswordFP == "" || a.LinkedMs != 0 || a.RaisedMs != 0 {
		t.Fatalf("accounts of the schema-17 copy: %+v", got)
	}
}
