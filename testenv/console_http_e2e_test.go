//go:build e2e

package testenv_test

// The console served over HTTP as cli/serve.go wires it, and people signed
// in to it with real sessions: each operator has a cookie jar of their own
// and posts the forms the pages post.

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/handlers"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failback"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/web"
)

// httpConsole serves the real router over TLS on 127.0.0.1 (so the
// session cookie keeps its Secure flag and __Host- prefix), with the
// runbook, catalog and worker wired as cli/serve.go wires them.
func httpConsole(t *testing.T, cfg *config.Config, store *storage.Store, mon *monitor.Monitor, log *slog.Logger, rb *runbook.Runbook, cat *catalog.Catalog) *httptest.Server {
	t.Helper()
	worker := &failover.Worker{Runbook: rb, Catalog: cat, Log: log}
	h := &handlers.Handlers{Monitor: mon, Store: store, Log: log, Version: "e2e", Runbook: rb,
		Auth: cfg.Auth, Catalog: cat, Worker: worker, Failovers: failback.BookOf(rb), Metrics: cfg.Metrics}
	if err := failover.BookOf(rb).MarkFailedOver(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(web.Router(h, log))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := worker.Shutdown(ctx); err != nil {
			t.Errorf("worker shutdown: %v", err)
		}
	})
	t.Cleanup(srv.Close)
	return srv
}

// operator is one person signed in to an httpConsole.
type operator struct {
	t    *testing.T
	name string
	base string
	c    *http.Client
	// lastURL is the path the last request ended on (after redirects).
	lastURL string
}

// signedIn creates the account through identity.CreateUser (audited, as
// the admin page does) and signs in with its password through POST /login.
func signedIn(t *testing.T, srv *httptest.Server, store *storage.Store, name string, role model.Role) *operator {
	t.Helper()
	ctx := context.Background()
	pw := "e2e-" + name + "-correct-horse-battery"
	hash, err := identity.HashPassword(pw)
	if err != nil {
		t.Fatal(err)
	}
	if err := identity.CreateUser(ctx, store, identity.AuditAs(audit.New(store), "e2e-admin"), name, role, hash, "e2e-admin"); err != nil {
		t.Fatal(err)
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := srv.Client()
	o := &operator{t: t, name: name, base: srv.URL, c: &http.Client{Transport: c.Transport, Jar: jar, Timeout: 60 * time.Second}}
	if code, body := o.post("/login", url.Values{"username": {name}, "password": {pw}, "next": {"/"}}); code != http.StatusOK || !strings.Contains(body, name) {
		t.Fatalf("%s signing in: %d\n%s", name, code, body)
	}
	return o
}

// get is a GET of path as this operator: status and body.
func (o *operator) get(path string) (int, string) {
	o.t.Helper()
	return o.do(http.MethodGet, path, nil)
}

// post posts form to path as the console's own page does (same origin),
// following the redirect like a browser.
func (o *operator) post(path string, form url.Values) (int, string) {
	o.t.Helper()
	return o.do(http.MethodPost, path, form)
}

func (o *operator) do(method, path string, form url.Values) (int, string) {
	o.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, o.base+path, body)
	if err != nil {
		o.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", o.base)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	resp, err := o.c.Do(req)
	if err != nil {
		o.t.Fatalf("%s %s as %s: %v", method, path, o.name, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		o.t.Fatalf("%s %s as %s: %v", method, path, o.name, err)
	}
	o.lastURL = resp.Request.URL.Path
	return resp.StatusCode, string(b)
}
