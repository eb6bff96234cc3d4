package cli

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// cliConfigWithFourUsers is cliConfig with viewers a to d added through
// the CLI: four audit records.
func cliConfigWithFourUsers(t *testing.T) (cfgPath, dbPath string) {
	t.Helper()
	cfgPath, dbPath = cliConfig(t)
	for _, name := range []string{"a", "b", "c", "d"} {
		if r := runCLI(t, "", "users", "add", name, "--role", "viewer", "--no-password", "--config", cfgPath); r.code != 0 {
			t.Fatal(r.stderr)
		}
	}
	return cfgPath, dbPath
}

// Records removed from the end leave a consistent chain that verify alone
// passes; an anchor kept outside the database catches them, and a
// rewritten chain too.
func TestAuditAnchorDetectsTruncation(t *testing.T) {
	_, db := cliConfigWithFourUsers(t)
	head := runCLI(t, "", "audit", "head", "--db", db)
	if head.code != 0 || !strings.Contains(head.stdout, " record 4 hash ") {
		t.Fatalf("audit head: %d %q %q", head.code, head.stdout, head.stderr)
	}
	anchors := writeFile(t, t.TempDir(), "anchors.txt", "# kept off the console's disk\n"+head.stdout)
	if r := runCLI(t, "", "audit", "verify", "--db", db, "--anchor", anchors); r.code != 0 || !strings.Contains(r.stdout, "1 anchor(s)") {
		t.Fatalf("intact with anchor: %d %q %q", r.code, r.stdout, r.stderr)
	}

	// Someone with the file drops the newest record.
	sqldb, err := sql.Open("sqlite3", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	defer sqldb.Close()
	// (and the account record 4 created, which would not match its
	// history without it).
	if _, err := sqldb.Exec("DROP TRIGGER audit_no_delete; DELETE FROM audit WHERE id = 4; DELETE FROM users WHERE name = 'd'"); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, "", "audit", "verify", "--db", db); r.code != 0 || !strings.Contains(r.stdout, "3 records, chain intact") {
		t.Fatalf("the chain alone should not see the truncation: %d %q %q", r.code, r.stdout, r.stderr)
	}
	r := runCLI(t, "", "audit", "verify", "--db", db, "--anchor", anchors)
	if r.code != 1 || !strings.Contains(r.stderr, "names record 4, but the log ends at record 3") || !strings.Contains(r.stderr, "truncated") {
		t.Fatalf("truncated with anchor: %d %q", r.code, r.stderr)
	}

	rewritten := writeFile(t, t.TempDir(), "a.txt", "2026-01-01T00:00:00Z record 2 hash "+strings.Repeat("ab", 32)+"\n")
	if r := runCLI(t, "", "audit", "verify", "--db", db, "--anchor", rewritten); r.code != 1 || !strings.Contains(r.stderr, "the chain was rewritten") {
		t.Fatalf("rewritten: %d %q", r.code, r.stderr)
	}
	bad := writeFile(t, t.TempDir(), "b.txt", "\nrecord 2\n")
	if r := runCLI(t, "", "audit", "verify", "--db", db, "--anchor", bad); r.code != 2 || !strings.Contains(r.stderr, "b.txt:2: want") {
		t.Fatalf("malformed anchor: %d %q", r.code, r.stderr)
	}
}

// The running console appends the head to the anchor file and POSTs it,
// at start and whenever it moved; the lines it writes pass verify --anchor.
func TestAuditAnchorSchedule(t *testing.T) {
	_, db := cliConfig(t)
	store, err := storage.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var posts []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &m)
		mu.Lock()
		posts = append(posts, m)
		mu.Unlock()
	}))
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "anchors.txt")
	append1 := func() {
		if _, err := store.AppendAudit(ctx, model.AuditEntry{Actor: "t", Action: "test", ClientIP: "local"}); err != nil {
			t.Fatal(err)
		}
	}
	append1()
	wait := startAuditAnchor(ctx, store, config.AuditAnchor{File: file, URL: srv.URL, Interval: config.Duration(20 * time.Millisecond)},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	lines := func() []string {
		b, _ := os.ReadFile(file)
		return strings.Fields(strings.ReplaceAll(string(b), " ", "_"))
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(lines()) < 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	append1()
	for len(lines()) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // a few more ticks: an unmoved head writes nothing
	cancel()
	wait()
	got := lines()
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || !strings.Contains(got[0], "_record_1_hash_") || !strings.Contains(got[1], "_record_2_hash_") {
		t.Fatalf("anchor file lines = %q, want records 1 and 2 once each", got)
	}
	if len(posts) != 2 || posts[1]["record"] != float64(2) || len(posts[1]["hash"].(string)) != 64 {
		t.Fatalf("POSTs = %v", posts)
	}
	head, _, err := store.AuditHead(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := checkAnchors(context.Background(), store, file, head); err != nil {
		t.Fatalf("the console's own anchors do not verify: %v", err)
	}
}
