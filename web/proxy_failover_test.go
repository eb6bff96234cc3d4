package web_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/handlers"
	"github.com/drconsole/drconsole/runbook/failback"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/web"
)

// Four eyes hold when a reverse proxy signs people in: the identity the
// proxy asserts is the one compared, so the requester cannot approve their
// own plan, and another operator can.
func TestProxyModeFourEyes(t *testing.T) {
	c := startConsole(t)
	waitReady(t, c)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	h := &handlers.Handlers{Monitor: c.Monitor, Store: c.Store, Log: log, Version: "test", Runbook: c.Runbook, Catalog: c.Catalog,
		Auth: config.Auth{Mode: config.AuthProxy, TrustedProxies: []string{"10.0.0.0/8"}, GroupRoles: map[string]string{"sre": "operator"}, PublicURL: testPublicURL}, Worker: &failover.Worker{Runbook: c.Runbook, Catalog: c.Catalog, Log: log}, Failovers: failback.BookOf(c.Runbook)}
	router := web.Router(h, log)
	as := func(user, method, path string, form url.Values) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.RemoteAddr = "10.1.2.3:4444"
		req.Header.Set("X-Forwarded-User", user)
		req.Header.Set("X-Forwarded-Groups", "sre")
		rec := httptest.NewRecorder()
		router.ServeHTTP(rec, req)
		return rec
	}
	rec := as("erin@example.com", http.MethodPost, "/failover", url.Values{"flow": {"primary->dr"}, "preflight": {"on"}, "reason": {"proxy drill"}})
	if rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), "/failover/") {
		t.Fatalf("erin creates a plan: %d %q\n%.500s", rec.Code, rec.Header().Get("Location"), rec.Body.String())
	}
	runPath := rec.Header().Get("Location")
	id, err := strconv.ParseInt(strings.TrimPrefix(runPath, "/failover/"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	run, err := c.Runbook.Get(t.Context(), id)
	if err != nil || run.CreatedBy != "erin@example.com" {
		t.Fatalf("run %d created by %q: %v", id, run.CreatedBy, err)
	}
	approve := url.Values{"plan_hash": {run.PlanHash}, "comment": {"looks fine"}}
	if rec := as("erin@example.com", http.MethodPost, runPath+"/approve", approve); rec.Code != http.StatusForbidden {
		t.Fatalf("erin approves her own plan through the proxy: %d, want 403", rec.Code)
	}
	if rec := as("Erin@Example.com", http.MethodPost, runPath+"/approve", approve); rec.Code == http.StatusOK || rec.Code == http.StatusSeeOther {
		t.Fatalf("erin, in other letter case, approves her own plan: %d", rec.Code)
	}
	if rec := as("bob@example.com", http.MethodPost, runPath+"/approve", approve); rec.Code != http.StatusOK && rec.Code != http.StatusSeeOther {
		t.Fatalf("bob approves: %d\n%.500s", rec.Code, rec.Body.String())
	}
	run, _ = c.Runbook.Get(t.Context(), id)
	if len(run.ValidApprovers) != 1 || run.ValidApprovers[0] != "bob@example.com" || !run.Approved {
		t.Fatalf("valid approvers %v (approved %v), approvals %+v", run.ValidApprovers, run.Approved, run.Approvals)
	}
}

// "Translate from this savepoint" without a savepoint path is refused,
// not silently turned into a translation of the groups' own offsets.
func TestTranslateFromSavepointNeedsAPath(t *testing.T) {
	c := startConsole(t)
	resp, body := postAs(t, c, "operator", "/failover", url.Values{"flow": {"primary->dr"}, "groups": {"billing"},
		"translate_from_savepoint": {"1"}, "reason": {"drill"}})
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, "needs its path") {
		t.Fatalf("POST /failover = %d\n%.400s", resp.StatusCode, body)
	}
}
