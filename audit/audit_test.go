package audit_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/storage/storagetest"
)

func open(t testing.TB) (*storage.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "drconsole.db")
	s, err := storage.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

// A record names the client its context carries, or "local" without one,
// and comes back as a Written that says where it is in the chain.
func TestRecordNamesTheClient(t *testing.T) {
	s, _ := open(t)
	rec := audit.New(s)
	ctx := audit.WithClient(context.Background(), audit.Client{IP: "203.0.113.9", UserAgent: "test-agent"})
	w, err := rec.Record(ctx, "alice", "test.web", "thing:1", map[string]int{"n": 1})
	if err != nil || !w.Valid() || w.ID() != 1 || w.Action() != "test.web" {
		t.Fatalf("Record = %+v, %v", w, err)
	}
	if _, err := rec.Record(context.Background(), "cli:root", "test.local", "thing:2", nil); err != nil {
		t.Fatal(err)
	}
	es, err := s.AuditEntries(context.Background(), storage.AuditFilter{Oldest: true})
	if err != nil || len(es) != 2 {
		t.Fatalf("entries %+v, %v", es, err)
	}
	if e := es[0]; e.ClientIP != "203.0.113.9" || e.UserAgent != "test-agent" || string(e.Details) != `{"n":1}` {
		t.Errorf("web record %+v", e)
	}
	if e := es[1]; e.ClientIP != "local" || e.UserAgent != "" || string(e.Details) != "{}" {
		t.Errorf("local record %+v", e)
	}
}

// When the chain cannot be written, Record and With fail and give no
// Written: nothing may act on a record that is not there.
func TestNoWrittenWhenTheChainFails(t *testing.T) {
	s, path := open(t)
	rec := audit.New(s)
	ctx := context.Background()
	storagetest.FailAuditWrites(t, path, true)
	if w, err := rec.Record(ctx, "alice", "test.fail", "thing:1", nil); err == nil || w.Valid() {
		t.Fatalf("Record with a failing chain = %+v, %v", w, err)
	}
	storagetest.FailAuditWrites(t, path, false)
	refused := errors.New("refused")
	w, err := rec.With(ctx, "alice", "test.with", "thing:1", nil, func(e model.AuditEntry) (model.AuditEntry, error) {
		if e.Actor != "alice" || e.Action != "test.with" || e.ClientIP != "local" {
			t.Errorf("entry handed to write: %+v", e)
		}
		return e, refused
	})
	if !errors.Is(err, refused) || w.Valid() {
		t.Fatalf("With whose write fails = %+v, %v", w, err)
	}
	if n, _, err := s.VerifyAudit(ctx); err != nil || n != 0 {
		t.Fatalf("%d records after failed writes (%v), want none", n, err)
	}
}
