package web_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"golang.org/x/crypto/bcrypt"

	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/connect"
	"github.com/drconsole/drconsole/demo"
	"github.com/drconsole/drconsole/demo/panel"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/handlers"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failback"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/web"
	"github.com/drconsole/drconsole/web/webtest"
)

// console is a running console against a running sandbox.
type console struct {
	Flink   *demo.FlinkStandIn
	Link    *demo.ClusterLinkStandIn
	URL     string
	Handler http.Handler
	H       *handlers.Handlers // for a second router with other stream settings (sse_test.go)
	Sandbox *demo.Sandbox
	Monitor *monitor.Monitor
	Store   *storage.Store
	Catalog *catalog.Catalog
	Runbook *runbook.Runbook
}

var (
	sharedOnce    sync.Once
	shared        *console
	sharedErr     error
	sharedCleanup []func()
)

// startConsole starts one sandbox and console for the whole package: the
// tests read it, and the browser test's controls are undone by that test.
// Tests that only add their own runs, users, servers or tabs to the
// shared console call t.Parallel: they wait on typing, polls and pushes,
// not the CPU. Tests that change the sandbox, count the console's streams
// or time its ticks stay serial (Go runs those first, one at a time).
// Tests on a console of their own (ownConsole) call t.Parallel too: the
// serial run is the package's critical path, and they are not part of it.
func startConsole(t *testing.T) *console {
	t.Helper()
	sharedOnce.Do(func() { shared, sharedCleanup, sharedErr = newConsole() })
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

// ownConsole starts a sandbox and console for one test that changes it for
// good (fails its flow over): the shared one stays as the others expect.
// Each of configure may change the console's config before it starts.
func ownConsole(t *testing.T, configure ...func(*config.Config)) *console {
	t.Helper()
	c, cleanup, err := newConsole(configure...)
	t.Cleanup(func() {
		slices.Reverse(cleanup)
		for _, f := range cleanup {
			f()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newConsole starts a sandbox and a console against it; cleanup undoes
// it, in reverse order.
func newConsole(configure ...func(*config.Config)) (*console, []func(), error) {
	var cleanup []func()
	ctx, cancel := context.WithCancel(context.Background())
	cleanup = append(cleanup, cancel) // runs last: cleanups run in reverse
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	sb, err := demo.Start(ctx, demo.Options{Logger: log, Seed: 1})
	if err != nil {
		return nil, cleanup, err
	}
	cleanup = append(cleanup, sb.Close)
	cfg := &config.Config{
		Clusters: map[string]*config.Cluster{"primary": {Bootstrap: sb.PrimaryBootstrap()}, "dr": {Bootstrap: sb.DRBootstrap()}},
		Flows: []*config.Flow{{Source: "primary", Target: "dr", ReplicationPolicy: "identity", OffsetSyncsLocation: "target",
			ConnectOffsetsTopic: mm2.ConnectOffsetsTopic("primary"), Topics: config.Topics{Include: demo.Topics}}},
		RefreshInterval: config.Duration(time.Second),
	}
	fl, err := demo.StartFlinkStandIn()
	if err != nil {
		return nil, cleanup, err
	}
	cleanup = append(cleanup, fl.Close)
	cfg.FlinkTargets = []*config.FlinkTarget{{Name: "sandbox-flink-dr", RestURL: fl.URL, Region: "dr"}}
	cfg.SavepointDirs = []string{fl.SavepointDir}
	link, err := demo.StartClusterLinkStandIn(demo.LinkClusterID, demo.LinkName, demo.LinkTopics)
	if err != nil {
		return nil, cleanup, err
	}
	cleanup = append(cleanup, link.Close)
	cfg.Flows = append(cfg.Flows, &config.Flow{Name: "link", Kind: "cluster-link", Source: "primary", Target: "dr",
		Topics:      config.Topics{Include: []string{demo.LinkTopic}},
		ClusterLink: &config.ClusterLink{RestURL: link.URL, ClusterID: demo.LinkClusterID, Link: demo.LinkName}})
	for _, f := range configure {
		f(cfg)
	}
	if err := cfg.Normalize("test"); err != nil {
		return nil, cleanup, err
	}
	dir, err := os.MkdirTemp("", "drconsole-web-test-")
	if err != nil {
		return nil, cleanup, err
	}
	cleanup = append(cleanup, func() { os.RemoveAll(dir) })
	store, err := storage.Open(filepath.Join(dir, "db"))
	if err != nil {
		return nil, cleanup, err
	}
	mon, err := monitor.NewMonitor(ctx, cfg, store, log)
	if err != nil {
		return nil, cleanup, err
	}
	go mon.Run(ctx)
	rb := failover.Equip(&runbook.Runbook{Store: store, Config: cfg, Audit: runbook.StoreAuditor{Store: store}, Log: log,
		Connect: connect.New,
		Flink:   flink.NewRESTClient, StopVerifyWindow: 2 * time.Second}, failover.Env{Monitor: mon})
	cat := &catalog.Catalog{Store: store, Config: cfg, Monitor: mon, Log: log}
	failover.BookOf(rb).Catalog = cat
	go cat.Run(ctx)
	h := &handlers.Handlers{Monitor: mon, Store: store, Log: log, Version: "test", Demo: panel.SandboxControls{Sandbox: sb}, Runbook: rb,
		Auth: config.Auth{InsecureCookie: true, PublicURL: testPublicURL}, Catalog: cat, Worker: &failover.Worker{Runbook: rb, Catalog: cat, Log: log}, Failovers: failback.BookOf(rb)}
	if err := createTestUsers(store); err != nil {
		return nil, cleanup, err
	}
	router := web.Router(h, log)
	// Every test here shares this console, its users and 127.0.0.1:
	// web/costly_test.go holds the real limits on a console of its own.
	router.Cost.Shape(100_000, 10_000, 100_000, 10_000)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, cleanup, err
	}
	go web.Serve(ctx, ln, router, log)
	c := &console{URL: "http://" + ln.Addr().String(), Handler: router, H: h, Sandbox: sb, Monitor: mon, Store: store, Flink: fl, Link: link, Catalog: cat, Runbook: rb}
	cleanup = append(cleanup, func() { store.Close() }, mon.Close, func() { cancel(); time.Sleep(100 * time.Millisecond) })
	return c, cleanup, nil
}

// get fetches path as a viewer: every page must be open to viewers.
func get(t *testing.T, c *console, path string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.URL+path, nil)
	req.AddCookie(sessionCookie(t, c, "viewer"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func waitReady(t *testing.T, c *console) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, _ := get(t, c, "/readyz")
		s := c.Monitor.Snapshot("primary->dr")
		if code == 200 && s != nil && s.RPOMs != nil && s.HeartbeatAge != nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("console not ready with data in 30 s (readyz %d)", code)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestPagesRender(t *testing.T) {
	c := startConsole(t)
	waitReady(t, c)
	// The shared console's flow may have been failed over by an earlier
	// test: then /metrics says so instead of exporting the old direction's
	// lag, heartbeat and RPO (TestAfterAFailoverTheFlowIsFailedOverNotAtRisk).
	flowSeries := []string{`kafka_mirror_topic_lag_messages{flow="primary->dr",topic="events"}`, "kafka_mirror_topic_lag_ms{", "kafka_mirror_topic_unknown_partitions{", "kafka_mirror_heartbeat_age_ms{", "kafka_mirror_rpo_ms{"}
	if s := c.Monitor.Snapshot("primary->dr"); s != nil && s.FailedOver != nil {
		flowSeries = []string{`kafka_mirror_failed_over{flow="primary->dr"} 1`, `kafka_mirror_status{flow="primary->dr",status="FAILED_OVER"} 1`}
	}
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"/", []string{`data-flow="primary-&gt;dr"`, `data-testid="rpo"`, "Data at risk (RPO)", "/static/vendor/htmx-2.0.11.min.js"}},
		{"/flows/primary-%3Edr", []string{"Flow primary-&gt;dr", ">events<", ">orders<", ">users<", "mm2-offset-syncs.primary.internal"}},
		{"/flows/primary-%3Edr?q=ord&sort=topic", []string{">orders<", "matching “ord”"}},
		{"/flows/primary-%3Edr/topics/events", []string{"Topic events", "/flows/primary-%3Edr/topics/events/partitions/5"}},
		{"/flows/primary-%3Edr/topics/events/partitions/0", []string{"events-0", "Offset-sync history"}},
		{"/metrics", append(flowSeries, "go_goroutines",
			`kafka_mirror_rpo_threshold_ms{flow="primary->dr",level="critical"} 120000`, `drconsole_failover_runs{flow="primary->dr",status="completed"} `,
			`drconsole_drill_last_success_timestamp_seconds{flow="primary->dr"} `)},
		{"/healthz", []string{"ok"}},
		{"/readyz", []string{"ready"}},
		{"/demo", []string{"Sandbox controls", `id="rate-5"`}},
		{"/static/app.css", []string{"--ok"}},
	} {
		code, body := get(t, c, tc.path)
		if code != 200 {
			t.Errorf("GET %s = %d: %.200s", tc.path, code, body)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s: missing %q", tc.path, w)
			}
		}
	}
	if _, body := get(t, c, "/flows/primary-%3Edr?q=ord"); strings.Contains(body, ">events<") {
		t.Error("filter ord still lists events")
	}
}

func TestBadURLs(t *testing.T) {
	c := startConsole(t)
	for path, want := range map[string]int{
		"/flows/nope":                                      404,
		"/flows/primary-%3Edr/topics/nope":                 404,
		"/flows/primary-%3Edr/topics/events/partitions/99": 404,
		"/flows/primary-%3Edr/topics/events/partitions/x":  400,
		"/no/such/page":                                    404,
	} {
		if code, _ := get(t, c, path); code != want {
			t.Errorf("GET %s = %d, want %d", path, code, want)
		}
	}
}

// Every state-changing route refuses a cross-origin browser request, and
// every route that is not a GET/HEAD changes state only through POST.
func TestStateChangingRoutesRefuseCrossOrigin(t *testing.T) {
	c := startConsole(t)
	var posts []string
	err := chi.Walk(c.Handler.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		switch method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
		default:
			posts = append(posts, method+" "+route)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(posts) < 3 {
		t.Fatalf("found only %v: the walk is not seeing the routes", posts)
	}
	for _, mr := range posts {
		method, route, _ := strings.Cut(mr, " ")
		form := url.Values{"rate": {"0"}, "running": {"true"}, "down": {"false"}}
		for _, site := range []string{"cross-site", "same-site"} {
			req := httptest.NewRequest(method, route, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Sec-Fetch-Site", site)
			rec := httptest.NewRecorder()
			c.Handler.ServeHTTP(rec, req)
			if rec.Code != http.StatusForbidden {
				t.Errorf("%s with Sec-Fetch-Site %s = %d, want 403", mr, site, rec.Code)
			}
		}
		req := httptest.NewRequest(method, route, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		role := "operator"
		if adminRoute(route) {
			role = "admin"
		}
		req.AddCookie(sessionCookie(t, c, role))
		rec := httptest.NewRecorder()
		c.Handler.ServeHTTP(rec, req)
		if rec.Code == http.StatusForbidden || rec.Code >= 500 {
			t.Errorf("%s same-origin = %d: %.200s", mr, rec.Code, rec.Body.String())
		}
	}
}

func TestDemoControlsRejectBadInput(t *testing.T) {
	c := startConsole(t)
	for _, tc := range []struct{ path, form string }{
		{"/demo/mirror-rate", "rate=-1"},
		{"/demo/mirror-rate", "rate=fast"},
		{"/demo/mirror", "running=maybe"},
		{"/demo/primary", "down="},
		{"/demo/consumers", "running=later"},
	} {
		req, _ := http.NewRequest(http.MethodPost, c.URL+tc.path, strings.NewReader(tc.form))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(sessionCookie(t, c, "operator"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(body), "must be") {
			t.Errorf("POST %s %s = %d %.100s", tc.path, tc.form, resp.StatusCode, body)
		}
	}
}

func TestMain(m *testing.M) {
	identity.HashCost = bcrypt.MinCost // sign-ins in tests need not be slow
	code := m.Run()
	webtest.Close()
	for i := len(sharedCleanup) - 1; i >= 0; i-- {
		sharedCleanup[i]()
	}
	os.Exit(code)
}

func TestTranslatePage(t *testing.T) {
	c := startConsole(t)
	waitReady(t, c)
	// MM2-style checkpoints of the sandbox's groups must exist first.
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := get(t, c, "/translate?flow=primary-%3Edr&group=flink-events&ts=1")
		if code == 200 && strings.Contains(body, `data-testid="translate-result"`) {
			for _, want := range []string{"partition(s) translated", "events-5", "Timestamp seek", "DR group state", "Download the DR offsets"} {
				if !strings.Contains(body, want) {
					t.Errorf("group preview lacks %q", want)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			i := strings.Index(body, "translate-error")
			t.Fatalf("no group preview after 30 s: %d %.300s", code, body[max(i, 0):])
		}
		time.Sleep(500 * time.Millisecond)
	}
	post := func(form url.Values) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, c.URL+"/translate", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(sessionCookie(t, c, "operator"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := post(url.Values{"flow": {"primary->dr"}, "source": {"offsets"}, "offsets": {`{"events-0": 5, "nosuch-3": 1}`}})
	if code != 200 || !strings.Contains(body, "1 partition(s) translated, 1 not translatable") || !strings.Contains(body, "unknown: no syncs") {
		t.Fatalf("pasted offsets: %d %.500s", code, body)
	}
	code, body = post(url.Values{"flow": {"primary->dr"}, "source": {"offsets"}, "offsets": {"{\n\"events\": 5}"}})
	if code != 422 || !strings.Contains(body, `key &#34;events&#34; is not topic-partition`) {
		t.Fatalf("bad offsets: %d %.800s", code, body)
	}
	code, body = post(url.Values{"flow": {"primary->dr"}, "source": {"group"}, "group": {"flink-events"}, "ts": {"yesterday"}})
	if code != 422 || !strings.Contains(body, "use RFC 3339") {
		t.Fatalf("bad timestamp: %d", code)
	}

	// What one request may cost: partitions (400) and bytes (413).
	var many strings.Builder
	many.WriteString("{")
	for i := 0; i <= handlers.MaxOffsetsPartitions; i++ {
		if i > 0 {
			many.WriteString(",")
		}
		fmt.Fprintf(&many, "\n\"events-%d\": %d", i, i)
	}
	many.WriteString("}")
	code, body = post(url.Values{"flow": {"primary->dr"}, "source": {"offsets"}, "offsets": {many.String()}})
	if code != http.StatusBadRequest || !strings.Contains(body, fmt.Sprintf("more than %d partitions in one preview", handlers.MaxOffsetsPartitions)) {
		t.Fatalf("%d partitions: %d %.300s", handlers.MaxOffsetsPartitions+1, code, body)
	}
	code, body = post(url.Values{"flow": {"primary->dr"}, "source": {"offsets"}, "offsets": {strings.Repeat(" ", handlers.MaxOffsetsUpload) + "{}"}})
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "larger than 8 MiB") {
		t.Fatalf("more than 8 MiB: %d %.300s", code, body)
	}
}
