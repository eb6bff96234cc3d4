package storage_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// rawDB writes behind the store's back: rows an older drconsole could
// have written (names in any case), at an older schema version.
func rawDB(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_foreign_keys=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// A database from before canonical names: a lone "Bob" becomes bob (and
// his session ends); "carol" next to "Carol" stops the console with both
// names in the message, and nothing is changed.
func TestCanonicalUserNamesMigration(t *testing.T) {
	ctx := context.Background()
	path := oldSchema(t, 7)
	rawDB(t, path,
		`INSERT INTO users(name, role, created_ms) VALUES ('Bob', 'operator', 1), ('dave', 'viewer', 1)`,
		`INSERT INTO sessions(token_hash, user, created_ms, last_seen_ms, client_ip, user_agent) VALUES ('t1', 'Bob', 1, 1, 'x', 'y')`)
	s, err := storage.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if u, err := s.UserByName(ctx, "BOB"); err != nil || u.Name != "bob" || u.Role != "operator" {
		t.Fatalf("after migration: %+v %v, want bob the operator", u, err)
	}
	if n, err := s.SessionCounts(ctx, 1<<62, 1<<62); err != nil || n["Bob"]+n["bob"] != 0 {
		t.Fatalf("sessions of the renamed account: %v %v, want none", n, err)
	}
	s.Close()

	path = oldSchema(t, 7)
	rawDB(t, path, `INSERT INTO users(name, role, created_ms) VALUES ('Dave', 'admin', 1), ('dave', 'viewer', 1)`)
	_, err = storage.Open(path)
	if err == nil || !strings.Contains(err.Error(), `["Dave" "dave"]`) || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("twins: Open = %v, want a refusal naming Dave and dave", err)
	}
	if v := schemaVersion(t, path); v != 7 {
		t.Fatalf("schema version after the refusal %d, want 7 (nothing changed)", v)
	}
	rawDB(t, path, `DELETE FROM users WHERE name = 'Dave'`)
	if s, err = storage.Open(path); err != nil {
		t.Fatalf("after removing the twin: %v", err)
	}
	s.Close()
}

func schemaVersion(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// Every store function takes a name in any case and acts on the one
// canonical account.
func TestUserNamesCanonical(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	if err := s.CreateUser(ctx, model.User{Name: " Erin ", Role: "viewer"}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateUser(ctx, model.User{Name: "ERIN", Role: "admin"}); err == nil {
		t.Fatal("ERIN created next to erin")
	}
	if err := s.SetRole(ctx, "eRiN", "operator"); err != nil {
		t.Fatal(err)
	}
	if u, err := s.UserByName(ctx, "erin"); err != nil || u.Name != "erin" || u.Role != "operator" {
		t.Fatalf("erin = %+v %v", u, err)
	}
}
