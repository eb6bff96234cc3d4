// Package storagetest holds helpers for tests of code that uses the
// database.
package storagetest

import (
	"database/sql"
	"testing"

	_ "github.com/mattn/go-sqlite3" // registers "sqlite3"
)

// FailAuditWrites makes every audit insert into the database file at path
// fail (as a full disk or a locked-down file would), through a second
// connection, or (fail false) work again.
func FailAuditWrites(t testing.TB, path string, fail bool) {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := `DROP TRIGGER audit_fails`
	if fail {
		q = `CREATE TRIGGER audit_fails BEFORE INSERT ON audit BEGIN SELECT RAISE(ABORT, 'audit writes fail in this test'); END`
	}
	if _, err := db.Exec(q); err != nil {
		t.Fatal(err)
	}
}

// FailLagSampleWrites makes every insert of a flow lag sample into the
// database file at path fail (as a locked or full database would), or
// (fail false) work again.
func FailLagSampleWrites(t testing.TB, path string, fail bool) {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := `DROP TRIGGER lag_samples_fail`
	if fail {
		q = `CREATE TRIGGER lag_samples_fail BEFORE INSERT ON flow_lag_samples BEGIN SELECT RAISE(ABORT, 'lag sample writes fail in this test'); END`
	}
	if _, err := db.Exec(q); err != nil {
		t.Fatal(err)
	}
}
