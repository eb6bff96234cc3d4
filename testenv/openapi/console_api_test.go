package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/connect"
	"github.com/drconsole/drconsole/demo"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/handlers"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failback"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/runbook/runbooktest"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/web"
)

// apiConsole is the console on the sandbox (an MM2 flow, the Flink
// stand-in), as `drconsole demo` wires it, served on loopback; its store
// and monitor for the test's own checks.
type apiConsole struct {
	URL   string
	Store *storage.Store
	Mon   *monitor.Monitor
}

func startAPIConsole(t *testing.T) *apiConsole {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	sb, err := demo.Start(ctx, demo.Options{Logger: log, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sb.Close)
	fl, err := demo.StartFlinkStandIn()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fl.Close)
	cfg := &config.Config{
		Clusters: map[string]*config.Cluster{"primary": {Bootstrap: sb.PrimaryBootstrap()}, "dr": {Bootstrap: sb.DRBootstrap()}},
		Flows: []*config.Flow{{Source: "primary", Target: "dr", ReplicationPolicy: "identity", OffsetSyncsLocation: "target",
			ConnectOffsetsTopic: mm2.ConnectOffsetsTopic("primary"), Topics: config.Topics{Include: demo.Topics}}},
		FlinkTargets:    []*config.FlinkTarget{{Name: "sandbox-flink-dr", RestURL: fl.URL, Region: "dr"}},
		SavepointDirs:   []string{fl.SavepointDir},
		RefreshInterval: config.Duration(time.Second),
	}
	if err := cfg.Normalize("openapi"); err != nil {
		t.Fatal(err)
	}
	store, mon := runbooktest.Monitored(ctx, t, cfg, filepath.Join(t.TempDir(), "db"), log)
	rb := failover.Equip(&runbook.Runbook{Store: store, Config: cfg, Audit: runbook.StoreAuditor{Store: store}, Log: log,
		Connect: connect.New, Flink: flink.NewRESTClient, StopVerifyWindow: 2 * time.Second}, failover.Env{Monitor: mon})
	cat := &catalog.Catalog{Store: store, Config: cfg, Monitor: mon, Log: log}
	failover.BookOf(rb).Catalog = cat
	go cat.Run(ctx)
	worker := &failover.Worker{Runbook: rb, Catalog: cat, Log: log}
	t.Cleanup(func() { worker.Shutdown(context.Background()) })
	h := &handlers.Handlers{Monitor: mon, Store: store, Log: log, Version: "openapi", Runbook: rb, Catalog: cat, Worker: worker,
		Failovers: failback.BookOf(rb), Auth: config.Auth{InsecureCookie: true}}
	for _, u := range []model.User{{Name: "rita", Role: model.RoleOperator}, {Name: "sam", Role: model.RoleAdmin}, {Name: "vic", Role: model.RoleViewer}} {
		if err := store.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go web.Serve(ctx, ln, web.Router(h, log), log)
	return &apiConsole{URL: "http://" + ln.Addr().String(), Store: store, Mon: mon}
}

func (c *apiConsole) token(t *testing.T, user, scope string) string {
	t.Helper()
	tok, _, err := identity.CreateToken(context.Background(), c.Store, audit.New(c.Store), user,
		identity.TokenRequest{Name: "openapi", Scope: scope, TTL: time.Hour}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// apiClient calls the API through the proxy that judges every exchange.
type apiClient struct {
	t    *testing.T
	base string
	// refused are the requests sent on purpose against the document (no
	// token, an undeclared field, a run id 0), by their place among the
	// proxy's exchanges.
	proxy   *Proxy
	refused []int
}

func (c *apiClient) call(token, method, path string, body any) (int, map[string]any) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, c.base+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

// bad calls with a request the document refuses too, and wants status.
func (c *apiClient) bad(status int, token, method, path string, body any) {
	c.t.Helper()
	c.refused = append(c.refused, len(c.proxy.Exchanges()))
	c.want(status, token, method, path, body)
}

// want calls and wants status.
func (c *apiClient) want(status int, token, method, path string, body any) map[string]any {
	c.t.Helper()
	code, out := c.call(token, method, path, body)
	if code != status {
		c.t.Fatalf("%s %s: %d %v, want %d", method, path, code, out, status)
	}
	return out
}

// Every operation of the console's API document, driven against a
// console on the sandbox through a proxy that judges each request and
// answer against the document with kin-openapi: an undocumented status,
// a field the schema does not declare, a wrong type, a null where the
// document allows none all fail the test. The run actions are the real
// engine's: a run requested, refused to its requester's approval,
// approved by a second person, its step executed; another rejected, one
// cancelled; a drill refused its start with the wrong confirmation.
func TestConsoleAPIAgainstItsDocument(t *testing.T) {
	spec, err := LoadConsoleSpec()
	if err != nil {
		t.Fatal(err)
	}
	con := startAPIConsole(t)
	proxy, closeProxy, err := spec.NewProxy(con.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer closeProxy()
	c := &apiClient{t: t, base: proxy.URL + "/api/v1", proxy: proxy}
	rita, sam := con.token(t, "rita", identity.ScopeOperate), con.token(t, "sam", identity.ScopeOperate)
	vic := con.token(t, "vic", identity.ScopeRead)

	// The figures once the monitor has them and the flow is healthy (the
	// pre-flight step's rules want it).
	deadline := time.Now().Add(60 * time.Second)
	for s := con.Mon.Snapshot("primary->dr"); s == nil || s.Status != model.FlowStatusOK || s.RPOMs == nil || s.RPOAtLeast || s.HeartbeatAge == nil; s = con.Mon.Snapshot("primary->dr") {
		if time.Now().After(deadline) {
			t.Fatal("primary->dr not healthy (OK, an exact RPO, its heartbeat) within 60 s: the pre-flight step would refuse")
		}
		time.Sleep(100 * time.Millisecond)
	}
	flow := "/flows/" + url.PathEscape("primary->dr")

	c.want(200, "", "GET", "/openapi.json", nil)
	c.bad(401, "", "GET", "/flows", nil)
	c.want(401, identity.TokenPrefix+"unknown", "GET", "/flows", nil)
	flows := c.want(200, vic, "GET", "/flows", nil)
	if fs, _ := flows["flows"].([]any); len(fs) != 1 {
		t.Fatalf("flows: %v", flows)
	}
	c.want(200, vic, "GET", flow, nil)
	c.want(404, vic, "GET", "/flows/nosuch", nil)
	groups := c.want(200, vic, "GET", flow+"/groups", nil)
	gs, _ := groups["groups"].([]any)
	if len(gs) == 0 {
		t.Fatalf("the sandbox flow's groups: %v", groups)
	}
	name := gs[0].(map[string]any)["name"].(string)
	plan := c.want(200, vic, "GET", flow+"/groups/"+url.PathEscape(name), nil)
	if rows, _ := plan["partitions"].([]any); len(rows) == 0 {
		t.Fatalf("group %s's translation: %v", name, plan)
	}
	quality := c.want(200, vic, "GET", flow+"/group-quality", nil)
	for deadline := time.Now().Add(30 * time.Second); ; quality = c.want(200, vic, "GET", flow+"/group-quality", nil) {
		if qs, _ := quality["groups"].([]any); len(qs) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sandbox flow's groups' failover quality: %v", quality)
		}
		time.Sleep(200 * time.Millisecond)
	}
	c.want(200, vic, "GET", "/savepoints", nil)
	c.want(200, vic, "GET", "/savepoints?flow="+url.QueryEscape("primary->dr"), nil)
	c.want(200, vic, "GET", "/drills", nil)
	c.want(200, vic, "GET", "/report", nil)

	// Requests, with the page form's refusals.
	c.want(403, vic, "POST", "/runs", map[string]any{"flow": "primary->dr", "reason": "viewer"})
	c.bad(400, rita, "POST", "/runs", map[string]any{"flow": "primary->dr", "reason": "typo", "preflght": true})
	c.want(422, rita, "POST", "/runs", map[string]any{"flow": "primary->dr", "reason": "", "preflight": true})
	run := c.want(201, rita, "POST", "/runs", map[string]any{"flow": "primary->dr", "preflight": true, "reason": "openapi: the whole way"})
	id := int64(run["id"].(float64))
	path := fmt.Sprintf("/runs/%d", id)
	c.want(403, rita, "POST", path+"/approve", map[string]any{"plan_hash": run["plan_hash"]})
	c.want(422, sam, "POST", path+"/steps/1/execute", map[string]any{})
	c.want(200, sam, "POST", path+"/approve", map[string]any{"plan_hash": run["plan_hash"], "comment": "second pair of eyes"})
	c.want(202, rita, "POST", path+"/steps/1/execute", map[string]any{})
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		got := c.want(200, vic, "GET", path, nil)
		if got["status"] == string(model.RunCompleted) {
			break
		}
		if time.Now().After(deadline) || got["status"] == string(model.RunFailed) {
			t.Fatalf("the run did not complete: %v", got)
		}
	}
	c.want(404, vic, "GET", "/runs/999999", nil)
	c.bad(400, vic, "GET", "/runs/0", nil)

	other := c.want(201, rita, "POST", "/runs", map[string]any{"flow": "primary->dr", "preflight": true, "reason": "openapi: rejected"})
	c.want(200, sam, "POST", fmt.Sprintf("/runs/%v/reject", other["id"]), map[string]any{"reason": "not today"})
	third := c.want(201, rita, "POST", "/runs", map[string]any{"flow": "primary->dr", "preflight": true, "reason": "openapi: cancelled"})
	c.want(200, rita, "POST", fmt.Sprintf("/runs/%v/cancel", third["id"]), map[string]any{"reason": "planned by mistake"})
	c.want(409, rita, "POST", fmt.Sprintf("/runs/%v/cancel", third["id"]), map[string]any{"reason": "again"})
	c.want(422, sam, "POST", fmt.Sprintf("/runs/%v/drill", third["id"]), map[string]any{"confirmation": "primary->dr"})
	c.want(200, vic, "GET", "/runs", nil)

	// Every answer as the document says; every request too, but those
	// sent against it on purpose, which it must refuse.
	var ops []string
	for i, x := range proxy.Exchanges() {
		var request, answer []string
		for _, p := range x.Problems {
			if strings.HasPrefix(p, "request") {
				request = append(request, p)
			} else {
				answer = append(answer, p)
			}
		}
		deliberate := slices.Contains(c.refused, i)
		switch {
		case len(answer) > 0:
			t.Errorf("%s", x)
		case deliberate && len(request) == 0:
			t.Errorf("the document takes a request sent against it: %s", x)
		case !deliberate && len(request) > 0:
			t.Errorf("%s", x)
		}
		ops = append(ops, x.Op)
	}
	for path, item := range spec.Doc.Paths.Map() {
		for method, op := range item.Operations() {
			if !slices.Contains(ops, op.OperationID) {
				t.Errorf("%s %s (%s) was never called", method, path, op.OperationID)
			}
		}
	}
	t.Logf("%d exchanges judged against the console's document", len(proxy.Exchanges()))
}

// The document is the one the console serves, byte for byte, and the
// checks catch what breaks it: an answer with a field the document does
// not declare, a status it does not list, a figure of the wrong type, a
// request with an undeclared field.
func TestConsoleDocumentChecksBite(t *testing.T) {
	spec, err := LoadConsoleSpec()
	if err != nil {
		t.Fatal(err)
	}
	con := startAPIConsole(t)
	resp, err := http.Get(con.URL + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	served, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(served, handlers.OpenAPIDocument()) {
		t.Fatal("the console serves another document than the one checked")
	}
	token := con.token(t, "vic", identity.ScopeRead)
	// A stand-in that answers what the console would, bent one way each.
	for _, tc := range []struct {
		name, path string
		status     int
		body       string
		want       string
	}{
		{"an undeclared field", "/api/v1/runs", 200, `{"runs": [], "total": 0}`, "total"},
		{"an undeclared field deep down", "/api/v1/report", 200, `{"flows": [{"flow": "f", "objective_ms": 1, "at": null, "history_from": null, "windows": [], "episodes_over": 0, "lost_offsets": null, "lost_offsets_at_least": false, "loss_unknown_reason": "x", "loss_incidents": 0, "guess": 1}]}`, "guess"},
		{"an undocumented status", "/api/v1/runs", 418, `{"status": 418, "error": "teapot"}`, "418"},
		{"a null field the document does not have", "/api/v1/flows", 200, `{"flows": [], "at": "2026-01-01T00:00:00Z", "extra": null}`, "extra"},
		{"a figure of the wrong type", "/api/v1/drills", 200, `{"drills": [{"run": "1", "flow": "f", "started": "", "status": "", "succeeded": true, "to_running_ms": null, "achieved_rto_ms": null, "rpo_ms": null, "rpo_is_lower_bound": false, "reread_max": null, "rules_that_would_have_failed": null, "cleanup": "", "job_id": "", "temporary_groups": null}]}`, "run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stand := http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				w.Write([]byte(tc.body))
			})}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			go stand.Serve(ln)
			defer stand.Close()
			proxy, closeProxy, err := spec.NewProxy("http://" + ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer closeProxy()
			(&apiClient{t: t, base: proxy.URL}).call(token, "GET", tc.path, nil)
			xs := proxy.Exchanges()
			if len(xs) != 1 || len(xs[0].Problems) == 0 || !strings.Contains(strings.Join(xs[0].Problems, "; "), tc.want) {
				t.Fatalf("the checks let it pass: %v", xs)
			}
		})
	}
	// A request with a field the document does not declare.
	proxy, closeProxy, err := spec.NewProxy(con.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer closeProxy()
	(&apiClient{t: t, base: proxy.URL + "/api/v1"}).call(token, "POST", "/runs", map[string]any{"flow": "f", "reason": "r", "preflght": true})
	if xs := proxy.Exchanges(); len(xs) != 1 || !strings.Contains(strings.Join(xs[0].Problems, "; "), "preflght") {
		t.Fatalf("an undeclared request field passed: %v", xs)
	}
}
