package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/storage"
)

// apiToken makes a token of scope for user, as if made at made.
func apiToken(t *testing.T, c *console, user, scope string, made time.Time) string {
	t.Helper()
	tok, _, err := identity.CreateToken(context.Background(), c.Store, audit.New(c.Store), user,
		identity.TokenRequest{Name: "test " + scope, Scope: scope, TTL: identity.DefaultTokenTTL}, made)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// apiCall sends method path with token ("" for none) and body (nil: none)
// and decodes the JSON answer.
func apiCall(t *testing.T, c *console, token, method, path string, body any, cookies ...*http.Cookie) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, c.URL+path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, text := send(t, req, nil, cookies...)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s %s: %d answered %q, not JSON: %.300s", method, path, resp.StatusCode, ct, text)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatalf("%s %s: %d %v: %.300s", method, path, resp.StatusCode, err, text)
	}
	return resp.StatusCode, out
}

// apiAudits counts action's records by actor since ms.
func apiAudits(t *testing.T, c *console, actor string, action audit.Action, since int64) int {
	t.Helper()
	es, err := c.Store.AuditEntries(context.Background(), storage.AuditFilter{Actor: actor, Action: string(action), SinceMs: since})
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// Only a live token of a live account gets in; a session cookie does not;
// every refusal is a JSON 401 and on record.
func TestAPIRefusesWhatIsNotALiveToken(t *testing.T) {
	t.Parallel()
	c := startConsole(t)
	ctx := context.Background()
	since := time.Now().UnixMilli()
	const who = "api-lifecycle"
	if err := c.Store.CreateUser(ctx, model.User{Name: who, Role: model.RoleOperator}); err != nil {
		t.Fatal(err)
	}
	live := apiToken(t, c, who, identity.ScopeRead, time.Now())
	if code, _ := apiCall(t, c, live, "GET", "/api/v1/flows", nil); code != http.StatusOK {
		t.Fatalf("a live token: %d", code)
	}
	expired := apiToken(t, c, who, identity.ScopeRead, time.Now().Add(-identity.DefaultTokenTTL-time.Minute))
	revoked := apiToken(t, c, who, identity.ScopeRead, time.Now())
	mine, _ := c.Store.APITokens(ctx, who, 10)
	if err := identity.RevokeToken(ctx, c.Store, audit.New(c.Store), model.Principal{Name: who, Role: model.RoleOperator}, mine[0].ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, token, want string
		cookie            bool
	}{
		{"no token", "", "Authorization: Bearer", false},
		{"a session cookie only", "", "Authorization: Bearer", true},
		{"an unknown token", identity.TokenPrefix + "nosuchtoken", "no such API token", false},
		{"an expired token", expired, "expired", false},
		{"a revoked token", revoked, "revoked", false},
	} {
		var cookies []*http.Cookie
		if tc.cookie {
			cookies = append(cookies, sessionCookie(t, c, "admin"))
		}
		code, body := apiCall(t, c, tc.token, "GET", "/api/v1/flows", nil, cookies...)
		if code != http.StatusUnauthorized || !strings.Contains(fmt.Sprint(body["error"]), tc.want) {
			t.Errorf("%s: %d %v, want 401 saying %q", tc.name, code, body, tc.want)
		}
	}
	// The owner's token records: the expired and the revoked use.
	if n := apiAudits(t, c, who, audit.TokenDenied, since); n != 2 {
		t.Errorf("%d token.denied records for %s, want 2 (expired, revoked)", n, who)
	}
	if n := apiAudits(t, c, "anonymous", audit.TokenDenied, since); n < 1 {
		t.Error("the unknown token's use is not on record")
	}

	// Disabling the account stops its live token at once.
	if err := identity.SetDisabled(ctx, c.Store, identity.AuditAs(audit.New(c.Store), "test-admin"), who, true); err != nil {
		t.Fatal(err)
	}
	if code, body := apiCall(t, c, live, "GET", "/api/v1/flows", nil); code != http.StatusUnauthorized || !strings.Contains(fmt.Sprint(body["error"]), "disabled") {
		t.Fatalf("a disabled account's token: %d %v", code, body)
	}
}

// The scope caps the role and never raises it: a read token of an
// operator cannot act, an operate token of a viewer is still a viewer;
// both refusals are 403 and on record.
func TestAPIScopeCapsTheRole(t *testing.T) {
	t.Parallel()
	c := startConsole(t)
	since := time.Now().UnixMilli()
	// Accounts of its own: other tests' refusals are on record too.
	for name, role := range map[string]model.Role{"api-scope-operator": model.RoleOperator, "api-scope-viewer": model.RoleViewer} {
		if err := c.Store.CreateUser(context.Background(), model.User{Name: name, Role: role}); err != nil {
			t.Fatal(err)
		}
	}
	read := apiToken(t, c, "api-scope-operator", identity.ScopeRead, time.Now())
	viewerOperate := apiToken(t, c, "api-scope-viewer", identity.ScopeOperate, time.Now())
	plan := map[string]any{"flow": "primary->dr", "preflight": true, "reason": "scope test"}
	code, body := apiCall(t, c, read, "POST", "/api/v1/runs", plan)
	if code != http.StatusForbidden || !strings.Contains(fmt.Sprint(body["error"]), "scope is read") {
		t.Errorf("an operator's read token requesting a run: %d %v, want 403 naming the scope", code, body)
	}
	code, body = apiCall(t, c, viewerOperate, "POST", "/api/v1/runs", plan)
	if code != http.StatusForbidden || !strings.Contains(fmt.Sprint(body["error"]), "is a viewer") {
		t.Errorf("a viewer's operate token requesting a run: %d %v, want 403 naming the role", code, body)
	}
	if code, _ := apiCall(t, c, viewerOperate, "GET", "/api/v1/runs", nil); code != http.StatusOK {
		t.Errorf("a viewer's operate token reading runs: %d", code)
	}
	if n := apiAudits(t, c, "api-scope-operator", audit.TokenDenied, since) + apiAudits(t, c, "api-scope-viewer", audit.TokenDenied, since); n != 2 {
		t.Errorf("%d token.denied records, want 2", n)
	}
}

// A run requested through the API needs a second person's approval, as
// on the pages: the requester's own approval is refused (403, on record),
// another operator's approves it; then its step runs. The records are the
// page's: same actions, actor, subject and client.
func TestAPIRunNeedsASecondPerson(t *testing.T) {
	t.Parallel()
	// A console of its own: tests on the shared one fail its flow over.
	c := ownConsole(t)
	waitHealthy(t, c)
	requester := apiToken(t, c, "test-operator", identity.ScopeOperate, time.Now())
	second := apiToken(t, c, "test-admin", identity.ScopeOperate, time.Now())

	code, run := apiCall(t, c, requester, "POST", "/api/v1/runs", map[string]any{"flow": "primary->dr", "reason": ""})
	if code != http.StatusUnprocessableEntity {
		t.Fatalf("a plan without a reason: %d %v, want 422 as on the page", code, run)
	}
	code, run = apiCall(t, c, requester, "POST", "/api/v1/runs", map[string]any{"flow": "primary->dr", "preflight": true, "reason": "api two-person"})
	if code != http.StatusCreated {
		t.Fatalf("request: %d %v", code, run)
	}
	id := int64(run["id"].(float64))
	path := fmt.Sprintf("/api/v1/runs/%d", id)
	hash := run["plan_hash"].(string)

	code, body := apiCall(t, c, requester, "POST", path+"/approve", map[string]any{"plan_hash": hash, "comment": "me"})
	if code != http.StatusForbidden || !strings.Contains(fmt.Sprint(body["error"]), runbook.ErrSelfApproval.Error()) {
		t.Fatalf("the requester's approval: %d %v, want 403 %q", code, body, runbook.ErrSelfApproval)
	}
	if n := len(runRecords(t, c, audit.FailoverSelfApprovalRefused, id)); n != 1 {
		t.Errorf("%d self-approval refusals of run %d on record, want 1", n, id)
	}
	code, body = apiCall(t, c, requester, "POST", path+"/steps/1/execute", map[string]any{})
	if code == http.StatusAccepted {
		t.Fatal("a step of an unapproved run started")
	}
	code, body = apiCall(t, c, second, "POST", path+"/approve", map[string]any{"plan_hash": hash, "comment": "looks right"})
	if code != http.StatusOK || body["approved"] != true || body["status"] != string(model.RunApproved) {
		t.Fatalf("the second person's approval: %d %v", code, body)
	}
	if code, body = apiCall(t, c, requester, "POST", path+"/steps/1/execute", map[string]any{}); code != http.StatusAccepted {
		t.Fatalf("execute: %d %v", code, body)
	}
	waitStepDone(t, c, id, 0)

	// The page's records of the same actions, for comparison.
	pageID, page := preflightRun(t, c, "page two-person")
	pageRun, _ := c.Runbook.Get(context.Background(), pageID)
	if resp, _ := postThenGet(t, c, "admin", page+"/approve", url.Values{"plan_hash": {pageRun.PlanHash}, "comment": {"ok"}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("page approve: %d", resp.StatusCode)
	}
	apiRec := approvalRecord(t, c, id)
	pageRec := approvalRecord(t, c, pageID)
	if apiRec.Actor != pageRec.Actor || apiRec.ClientIP != pageRec.ClientIP || apiRec.Subject != runbook.RunSubject(id) {
		t.Errorf("the API's approval record %+v differs from the page's %+v", apiRec, pageRec)
	}
}

// waitHealthy waits for the sandbox flow to be OK with an exact RPO and
// its heartbeat: what the pre-flight step's rules want.
func waitHealthy(t *testing.T, c *console) {
	t.Helper()
	waitReady(t, c)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		s := c.Monitor.Snapshot("primary->dr")
		if s.Status == model.FlowStatusOK && s.RPOMs != nil && !s.RPOAtLeast && s.HeartbeatAge != nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("primary->dr not healthy in 60 s: %s %s", s.Status, s.Reason)
		}
	}
}

// runRecords are run id's records of action.
func runRecords(t *testing.T, c *console, action audit.Action, id int64) []model.AuditEntry {
	t.Helper()
	es, err := c.Store.AuditEntries(context.Background(), storage.AuditFilter{Action: string(action), Subject: runbook.RunSubject(id)})
	if err != nil {
		t.Fatal(err)
	}
	var mine []model.AuditEntry
	for _, e := range es {
		if e.Subject == runbook.RunSubject(id) { // the filter matches "failover-run:12" for run 1 too
			mine = append(mine, e)
		}
	}
	return mine
}

// approvalRecord is the approval record of run id.
func approvalRecord(t *testing.T, c *console, id int64) model.AuditEntry {
	t.Helper()
	mine := runRecords(t, c, audit.FailoverApprove, id)
	if len(mine) != 1 {
		t.Fatalf("approval records of run %d: %d", id, len(mine))
	}
	return mine[0]
}

var (
	gateTokensOnce sync.Once
	gateTokens     map[string]string
)

// apiRouteGates holds an API route (TestEveryRouteEnforcesSessionRoleAndOrigin
// finds them) to its gates: the document is public; everything else
// refuses a session cookie, even an admin's (401); a read goes to any
// token, a change refuses a read token and a viewer's (403 from the
// gate) and lets an operator's operate token through.
func apiRouteGates(t *testing.T, c *console, method, path string) {
	t.Helper()
	gateTokensOnce.Do(func() {
		gateTokens = map[string]string{
			"operator read":    apiToken(t, c, "test-operator", identity.ScopeRead, time.Now()),
			"viewer operate":   apiToken(t, c, "test-viewer", identity.ScopeOperate, time.Now()),
			"operator operate": apiToken(t, c, "test-operator", identity.ScopeOperate, time.Now()),
		}
	})
	do := func(token string, cookie *http.Cookie) (int, string) {
		req := httptest.NewRequest(method, path, strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if cookie != nil {
			req.AddCookie(cookie)
		}
		rec := httptest.NewRecorder()
		c.Handler.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	if path == "/api/v1/openapi.json" {
		if code, _ := do("", nil); code != http.StatusOK {
			t.Errorf("the document without a token = %d", code)
		}
		return
	}
	if code, body := do("", sessionCookie(t, c, "admin")); code != http.StatusUnauthorized || !strings.Contains(body, "Bearer") {
		t.Errorf("an admin's session cookie = %d %.100q, want 401", code, body)
	}
	if method == http.MethodGet {
		for _, who := range []string{"operator read", "viewer operate"} {
			if code, body := do(gateTokens[who], nil); code == http.StatusUnauthorized || code == http.StatusForbidden || code >= 500 {
				t.Errorf("GET with the %s token = %d %.200s", who, code, body)
			}
		}
		return
	}
	for who, want := range map[string]string{"operator read": "scope is read", "viewer operate": roleDenied} {
		if code, body := do(gateTokens[who], nil); code != http.StatusForbidden || !strings.Contains(body, want) {
			t.Errorf("the %s token = %d %.100q, want 403 saying %q", who, code, body, want)
		}
	}
	if code, body := do(gateTokens["operator operate"], nil); code == http.StatusUnauthorized || strings.Contains(body, "forbidden: this") || code >= 500 {
		t.Errorf("the operator's operate token = %d %.200s", code, body)
	}
}

// Every figure the API gives is known or says why not: a null value has
// its reason, a known one none (never 0 standing in for unknown); and a
// Cluster Linking flow has no group translation to list (422).
func TestAPIFiguresAreKnownOrSayWhyNot(t *testing.T) {
	t.Parallel()
	c := startConsole(t)
	waitReady(t, c)
	token := apiToken(t, c, "test-viewer", identity.ScopeRead, time.Now())
	_, list := apiCall(t, c, token, "GET", "/api/v1/flows", nil)
	flows, _ := list["flows"].([]any)
	if len(flows) != 2 {
		t.Fatalf("flows: %v", list)
	}
	var figures, unknown int
	var walk func(at string, v any)
	walk = func(at string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if _, ok := v["unknown_reason"]; ok {
				figures++
				reason, _ := v["unknown_reason"].(string)
				switch {
				case v["value"] == nil && reason == "":
					t.Errorf("%s: unknown without a reason: %v", at, v)
				case v["value"] != nil && v["unknown_reason"] != nil:
					t.Errorf("%s: known and said unknown: %v", at, v)
				case v["value"] == nil:
					unknown++
				}
			}
			for k, e := range v {
				walk(at+"/"+k, e)
			}
		case []any:
			for i, e := range v {
				walk(fmt.Sprintf("%s/%d", at, i), e)
			}
		}
	}
	walk("flows", list)
	for _, f := range flows {
		name := f.(map[string]any)["name"].(string)
		code, one := apiCall(t, c, token, "GET", "/api/v1/flows/"+url.PathEscape(name), nil)
		if code != http.StatusOK {
			t.Fatalf("GET flow %s: %d", name, code)
		}
		walk(name, one)
	}
	if figures < 20 {
		t.Fatalf("only %d figures found: the walk is not seeing them", figures)
	}
	t.Logf("%d figures, %d of them unknown with their reason", figures, unknown)
	if code, _ := apiCall(t, c, token, "GET", "/api/v1/flows/link/groups", nil); code != http.StatusUnprocessableEntity {
		t.Errorf("a Cluster Linking flow's groups: %d, want 422", code)
	}
	mm2 := "/api/v1/flows/" + url.PathEscape("primary->dr") + "/groups"
	code, body := apiCall(t, c, token, "GET", mm2, nil)
	groups, _ := body["groups"].([]any)
	if code != http.StatusOK || len(groups) == 0 {
		t.Fatalf("the MM2 flow's groups: %d %v", code, body)
	}
	// A group's translation: a DR offset where it is translated, none
	// (with the method saying why) where it is not.
	group := groups[0].(map[string]any)["name"].(string)
	code, plan := apiCall(t, c, token, "GET", mm2+"/"+url.PathEscape(group), nil)
	rows, _ := plan["partitions"].([]any)
	if code != http.StatusOK || len(rows) == 0 {
		t.Fatalf("group %s's translation: %d %v", group, code, plan)
	}
	for _, r := range rows {
		row := r.(map[string]any)
		if (row["translated"] == true) != (row["dr_offset"] != nil) || row["method"] == "" {
			t.Errorf("group %s: %v", group, row)
		}
	}
	if code, _ := apiCall(t, c, token, "GET", "/api/v1/flows/link/groups/"+url.PathEscape(group), nil); code != http.StatusUnprocessableEntity {
		t.Errorf("a Cluster Linking flow's group translation: %d, want 422", code)
	}
	// The groups' failover quality: each bound known or unknown with a
	// reason, never both, never neither; the worst likewise.
	known := func(what string, b any) {
		m, _ := b.(map[string]any)
		if (m["at_most"] == nil) == (m["unknown_reason"] == nil) {
			t.Errorf("%s: %v", what, b)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	code, q := apiCall(t, c, token, "GET", strings.TrimSuffix(mm2, "/groups")+"/group-quality", nil)
	for qs, _ := q["groups"].([]any); code == http.StatusOK && len(qs) == 0 && time.Now().Before(deadline); qs, _ = q["groups"].([]any) {
		time.Sleep(200 * time.Millisecond)
		code, q = apiCall(t, c, token, "GET", strings.TrimSuffix(mm2, "/groups")+"/group-quality", nil)
	}
	qs, _ := q["groups"].([]any)
	if code != http.StatusOK || len(qs) == 0 {
		t.Fatalf("group quality: %d %v", code, q)
	}
	known("worst", q["worst"])
	for _, g := range qs {
		g := g.(map[string]any)
		known(fmt.Sprint(g["group"]), g["reprocess"])
		for _, p := range g["partitions"].([]any) {
			known(fmt.Sprint(g["group"], " partition"), p.(map[string]any)["reprocess"])
		}
	}
	if code, _ := apiCall(t, c, token, "GET", "/api/v1/flows/link/group-quality", nil); code != http.StatusUnprocessableEntity {
		t.Errorf("a Cluster Linking flow's group quality: %d, want 422", code)
	}
}

// A source presenting refused tokens gets 401 and a record for each of
// the first 20 in a minute, then 429 and no further record: a guesser
// gets nowhere and cannot grow the audit log at will.
func TestAPIRefusedTokensAreLimited(t *testing.T) {
	t.Parallel()
	c := ownConsole(t)
	since := time.Now().UnixMilli()
	for i := range 25 {
		code, _ := apiCall(t, c, fmt.Sprintf("%sguess%d", identity.TokenPrefix, i), "GET", "/api/v1/flows", nil)
		want := http.StatusUnauthorized
		if i >= 20 {
			want = http.StatusTooManyRequests
		}
		if code != want {
			t.Fatalf("refused token %d: %d, want %d", i+1, code, want)
		}
	}
	if n := apiAudits(t, c, "anonymous", audit.TokenDenied, since); n != 20 {
		t.Errorf("%d token.denied records, want 20", n)
	}
}

// A planned switchover through the API: the page's plan, the kind named
// in the run, its fence first and its verdict last.
func TestAPIPlansASwitchover(t *testing.T) {
	t.Parallel()
	c := switchoverConsole(t, "User:app")
	waitHealthy(t, c)
	tok := apiToken(t, c, "test-operator", identity.ScopeOperate, time.Now())
	code, run := apiCall(t, c, tok, "POST", "/api/v1/runs", map[string]any{"flow": "primary->dr", "switchover": true, "groups": []string{"billing"},
		"reason": "region evacuation"})
	if code != http.StatusCreated {
		t.Fatalf("request: %d %v", code, run)
	}
	code, run = apiCall(t, c, tok, "GET", fmt.Sprintf("/api/v1/runs/%d", int64(run["id"].(float64))), nil)
	steps, _ := run["steps"].([]any)
	if code != http.StatusOK || run["kind"] != "switchover" || len(steps) < 3 {
		t.Fatalf("the run: %d %v", code, run)
	}
	first, last := steps[0].(map[string]any), steps[len(steps)-1].(map[string]any)
	if first["kind"] != "fence" || last["kind"] != "verdict" {
		t.Fatalf("steps from %v to %v, want fence to verdict", first["kind"], last["kind"])
	}
}
