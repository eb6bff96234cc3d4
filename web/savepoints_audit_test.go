package web_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/handlers"
	"github.com/drconsole/drconsole/runbook/failback"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/storage/storagetest"
	"github.com/drconsole/drconsole/web"
)

// Registering a savepoint is audited first: when the audit record cannot
// be written the savepoint is not registered (not in the catalog), and
// the operator is told why.
func TestSavepointRegisterNeedsItsAuditRecord(t *testing.T) {
	c := startConsole(t)
	dir := copyFixture(t, c, "register-audit-fails")
	path := filepath.Join(t.TempDir(), "db")
	st, err := storage.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := createTestUsers(st); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cat := &catalog.Catalog{Store: st, Config: c.Catalog.Config, Monitor: c.Monitor, Log: log}
	h := &handlers.Handlers{Monitor: c.Monitor, Store: st, Log: log, Version: "test", Runbook: c.Runbook, Catalog: cat,
		Auth: config.Auth{InsecureCookie: true, PublicURL: testPublicURL}, Worker: &failover.Worker{Runbook: c.Runbook, Catalog: cat, Log: log}, Failovers: failback.BookOf(c.Runbook)}
	router := web.Router(h, log)
	cookie := sessionCookie(t, &console{Store: st}, "operator")
	storagetest.FailAuditWrites(t, path, true)
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/savepoints/register", strings.NewReader(url.Values{"path": {"file:" + dir}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(cookie)
	rec := httptest.NewRecorder()
	router.ServeHTTP(rec, req)
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "nothing was registered") {
		t.Fatalf("register with the audit log unwritable = %d %.300s", rec.Code, rec.Body.String())
	}
	if sp, err := st.SavepointByPath(context.Background(), flink.CanonicalPath("file:"+dir)); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("registered without an audit record: %+v %v", sp, err)
	}
}
