package storage_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// The canonical encoding, worked by hand: a change here breaks every
// existing chain, so it must be deliberate.
func TestAuditHashEncoding(t *testing.T) {
	e := model.AuditEntry{ID: 1, AtMs: 1700000000000, Actor: "alice", Action: "login", ClientIP: "10.0.0.1",
		UserAgent: "ua", Subject: "user:alice", Details: json.RawMessage(`{}`), PrevHash: storage.AuditGenesis}
	// Recompute independently with the raw bytes.
	var raw []byte
	for _, f := range []string{"drconsole-audit-v1", "1", "1700000000000", "alice", "login", "10.0.0.1", "ua", "user:alice", "{}", storage.AuditGenesis} {
		n := len(f)
		raw = append(raw, 0, 0, 0, 0, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
		raw = append(raw, f...)
	}
	if got, want := storage.AuditHash(e), sha256hex(raw); got != want {
		t.Fatalf("AuditHash = %s, want %s", got, want)
	}
	// Moving a byte from one field to the next changes the hash.
	f := e
	f.Actor, f.Action = "alicel", "ogin"
	if storage.AuditHash(f) == storage.AuditHash(e) {
		t.Fatal("field boundaries are not part of the hash")
	}
}

func appendN(t *testing.T, s *storage.Store, n int) []model.AuditEntry {
	t.Helper()
	var out []model.AuditEntry
	for i := 0; i < n; i++ {
		e, err := s.AppendAudit(context.Background(), model.AuditEntry{Actor: fmt.Sprintf("user%d", i%2), Action: "test.step",
			ClientIP: "10.0.0.1", UserAgent: "go-test", Subject: fmt.Sprintf("run:%d", i),
			Details: json.RawMessage(fmt.Sprintf(`{ "i": %d, "html": "<b>" }`, i))})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func TestAuditAppendAndFilter(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	es := appendN(t, s, 5)
	if es[0].ID != 1 || es[0].PrevHash != storage.AuditGenesis || es[1].PrevHash != es[0].Hash || es[4].ID != 5 {
		t.Fatalf("chain links: %+v", es)
	}
	if string(es[0].Details) != `{"i":0,"html":"<b>"}` {
		t.Fatalf("details stored as %s, want compact", es[0].Details)
	}
	if _, err := s.AppendAudit(ctx, model.AuditEntry{Actor: "a", Action: "x", Details: json.RawMessage("{nope")}); err == nil {
		t.Fatal("invalid JSON details accepted")
	}
	if _, err := s.AppendAudit(ctx, model.AuditEntry{Action: "x"}); err == nil {
		t.Fatal("record without actor accepted")
	}
	got, err := s.AuditEntries(ctx, storage.AuditFilter{Actor: "user1"})
	if err != nil || len(got) != 2 || got[0].ID != 4 || got[1].ID != 2 {
		t.Fatalf("actor filter = %+v, %v", got, err)
	}
	got, _ = s.AuditEntries(ctx, storage.AuditFilter{Limit: 2})
	if len(got) != 2 || got[0].ID != 5 {
		t.Fatalf("newest first, limit 2: %+v", got)
	}
	got, _ = s.AuditEntries(ctx, storage.AuditFilter{Limit: 2, AfterID: 4})
	if len(got) != 2 || got[0].ID != 3 || got[1].ID != 2 {
		t.Fatalf("second page: %+v", got)
	}
	got, _ = s.AuditEntries(ctx, storage.AuditFilter{Subject: "run:3"})
	if len(got) != 1 || got[0].ID != 4 || string(got[0].Details) != string(es[3].Details) {
		t.Fatalf("subject filter: %+v", got)
	}
	got, _ = s.AuditEntries(ctx, storage.AuditFilter{Oldest: true, AfterID: 3, SinceMs: es[0].AtMs, UntilMs: es[4].AtMs + 1})
	if len(got) != 2 || got[0].ID != 4 {
		t.Fatalf("oldest first after 3: %+v", got)
	}
	if n, bad, err := s.VerifyAudit(ctx); err != nil || bad != nil || n != 5 {
		t.Fatalf("VerifyAudit = %d, %v, %v", n, bad, err)
	}
}

// Concurrent appends never fork the chain.
func TestAuditConcurrentAppends(t *testing.T) {
	s, _ := openStore(t)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				if _, err := s.AppendAudit(context.Background(), model.AuditEntry{Actor: "a", Action: "x"}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if n, bad, err := s.VerifyAudit(context.Background()); err != nil || bad != nil || n != 160 {
		t.Fatalf("VerifyAudit = %d, %v, %v", n, bad, err)
	}
}

// The triggers refuse UPDATE and DELETE; with the triggers dropped (anyone
// holding the file can), an edit, a deletion or a reordering by SQL is
// found by VerifyAudit, which names the first bad record.
func TestAuditTamperDetection(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sql    []string
		wantID int64
		why    string
		// checked: how many good records precede the bad one.
		checked int
	}{
		{"edit details", []string{`UPDATE audit SET details = '{"i":2,"html":"<i>"}' WHERE id = 3`}, 3, "edited", 2},
		{"edit actor", []string{`UPDATE audit SET actor = 'mallory' WHERE id = 1`}, 1, "edited", 0},
		{"edit time", []string{`UPDATE audit SET at_ms = at_ms - 1 WHERE id = 5`}, 5, "edited", 4},
		{"delete middle", []string{`DELETE FROM audit WHERE id = 3`}, 4, "record 3 is missing", 2},
		{"delete two", []string{`DELETE FROM audit WHERE id IN (2, 3)`}, 4, "records 2 to 3 are missing", 1},
		{"delete first", []string{`DELETE FROM audit WHERE id = 1`}, 2, "record 1 is missing", 0},
		{"delete and renumber", []string{`DELETE FROM audit WHERE id = 3`, `UPDATE audit SET id = id - 1 WHERE id > 3`}, 3, "prev_hash does not match the hash of record 2", 2},
		{"reorder (swap ids)", []string{`UPDATE audit SET id = 100 WHERE id = 2`, `UPDATE audit SET id = 2 WHERE id = 3`, `UPDATE audit SET id = 3 WHERE id = 100`}, 2, "prev_hash does not match the hash of record 1", 1},
		{"reorder (swap times)", []string{`UPDATE audit SET at_ms = (SELECT at_ms FROM audit WHERE id = 4) + 1 WHERE id = 2`}, 2, "edited", 1},
		{"insert", []string{`UPDATE audit SET id = id + 1 WHERE id >= 3`,
			`INSERT INTO audit SELECT 3, at_ms, 'mallory', action, client_ip, user_agent, subject, details, hash, hash FROM audit WHERE id = 2`}, 3, "edited", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, path := openStore(t)
			ctx := context.Background()
			appendN(t, s, 6)
			db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			db.SetMaxOpenConns(1)
			if _, err := db.Exec(tc.sql[0]); err == nil || !strings.Contains(err.Error(), "append-only") {
				t.Fatalf("with the triggers in place %q = %v, want refused", tc.sql[0], err)
			}
			if _, err := db.Exec("DROP TRIGGER audit_no_update; DROP TRIGGER audit_no_delete"); err != nil {
				t.Fatal(err)
			}
			// Renumbering ids one by one collides; do it in descending order.
			for _, q := range tc.sql {
				if strings.Contains(q, "id = id + 1") {
					rows, _ := db.Query("SELECT id FROM audit WHERE id >= 3 ORDER BY id DESC")
					var ids []int64
					for rows.Next() {
						var id int64
						rows.Scan(&id)
						ids = append(ids, id)
					}
					rows.Close()
					for _, id := range ids {
						if _, err := db.Exec("UPDATE audit SET id = ? WHERE id = ?", id+1, id); err != nil {
							t.Fatal(err)
						}
					}
					continue
				}
				if _, err := db.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			n, bad, err := s.VerifyAudit(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if bad == nil {
				t.Fatalf("tampering not detected (%d records checked)", n)
			}
			if bad.ID != tc.wantID || !strings.Contains(bad.Why, tc.why) || n != tc.checked {
				t.Fatalf("VerifyAudit = %d checked, %v; want record %d: %q", n, bad, tc.wantID, tc.why)
			}
		})
	}
}

func TestAuditExportAndReadOnly(t *testing.T) {
	s, path := openStore(t)
	ctx := context.Background()
	es := appendN(t, s, 3)
	s.AppendAudit(ctx, model.AuditEntry{Actor: "=cmd()", Action: "login.failed", UserAgent: "@evil"})
	var b bytes.Buffer
	n, err := s.ExportAudit(ctx, &b, storage.AuditFilter{Action: "test.step"}, "jsonl")
	if err != nil || n != 3 {
		t.Fatalf("export = %d, %v", n, err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	var first struct {
		ID       int64           `json:"id"`
		AtMs     int64           `json:"at_ms"`
		Details  json.RawMessage `json:"details"`
		PrevHash string          `json:"prev_hash"`
		Hash     string          `json:"hash"`
		Actor    string          `json:"actor"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	// The export carries exactly what was hashed.
	if first.ID != 1 || string(first.Details) != string(es[0].Details) || first.Hash != es[0].Hash {
		t.Fatalf("first line %s", lines[0])
	}
	b.Reset()
	if n, err := s.ExportAudit(ctx, &b, storage.AuditFilter{}, "csv"); err != nil || n != 4 {
		t.Fatalf("csv export = %d, %v", n, err)
	}
	if !strings.HasPrefix(b.String(), "id,at,actor,action,") || !strings.Contains(b.String(), `'=cmd()`) || !strings.Contains(b.String(), `'@evil`) {
		t.Fatalf("csv:\n%s", b.String())
	}
	if _, err := s.ExportAudit(ctx, &b, storage.AuditFilter{}, "xml"); err == nil {
		t.Fatal("format xml accepted")
	}

	ro, err := storage.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if n, bad, err := ro.VerifyAudit(ctx); err != nil || bad != nil || n != 4 {
		t.Fatalf("read-only verify = %d, %v, %v", n, bad, err)
	}
	if _, err := ro.AppendAudit(ctx, model.AuditEntry{Actor: "a", Action: "b"}); err == nil {
		t.Fatal("read-only store accepted a write")
	}
	if _, err := storage.OpenReadOnly(path + ".nope"); err == nil {
		t.Fatal("OpenReadOnly of a missing file succeeded")
	}
}

func sha256hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
