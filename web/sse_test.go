package web_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/drconsole/drconsole/handlers"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/views"
	"github.com/drconsole/drconsole/web"
)

// sseEvent is one event read off a stream.
type sseEvent struct{ name, data string }

// readEvents reads events off body into a channel until it ends.
func readEvents(resp *http.Response) <-chan sseEvent {
	ch := make(chan sseEvent, 64)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev sseEvent
		var data []string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.name != "" {
					ev.data = strings.Join(data, "\n")
					ch <- ev
				}
				ev, data = sseEvent{}, nil
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data = append(data, strings.TrimPrefix(line, "data: "))
			}
		}
	}()
	return ch
}

// collect gathers the events that arrive within d.
func collect(ch <-chan sseEvent, d time.Duration) map[string]string {
	got := map[string]string{}
	timeout := time.After(d)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return got
			}
			got[ev.name] = ev.data
		case <-timeout:
			return got
		}
	}
}

func openStream(t *testing.T, ctx context.Context, url string, cookie *http.Cookie) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if cookie != nil {
		req.AddCookie(cookie)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// waitOpen polls until s has n streams open.
func waitOpen(t *testing.T, s *web.Streams, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.Open() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d streams open, want %d", s.Open(), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The run page's stream: named events with small fragments and no input
// in any of them; the first tick sends all, later ticks only what changed
// (an approval changes "run" and "approvals", not the step); the request's
// end ends the stream; the bound refuses one stream too many.
func TestFailoverRunEventsSendOnlyWhatChanged(t *testing.T) {
	c := startConsole(t)
	waitReady(t, c)
	ctx := context.Background()
	id, err := c.Runbook.Create(ctx, runbook.Actor{Name: "test-admin", Role: "admin"},
		runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: failover.KindPreflight}}}, "sse drill")
	if err != nil {
		t.Fatal(err)
	}
	streams := &web.Streams{Tick: 100 * time.Millisecond, Max: 1}
	r := chi.NewRouter()
	r.Get("/failover/{run}/events", streams.Handler(c.H.FailoverRunEvents))
	srv := httptest.NewServer(r)
	defer srv.Close()
	defer streams.CloseAll() // before Close, which waits for them
	url := fmt.Sprintf("%s/failover/%d/events", srv.URL, id)

	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	resp := openStream(t, sctx, url, nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := readEvents(resp)
	first := collect(events, time.Second)
	for _, name := range []string{"run", "approvals", "step-1"} {
		if _, ok := first[name]; !ok {
			t.Errorf("first tick lacks %q: %v", name, first)
		}
	}
	for name, data := range first {
		for _, tag := range []string{"<input", "<form", "<textarea", "<select", "<button"} {
			if strings.Contains(data, tag) {
				t.Errorf("event %s holds %s: %s", name, tag, data)
			}
		}
		if len(data) > 2000 {
			t.Errorf("event %s is %d bytes: not a small fragment", name, len(data))
		}
	}
	if !strings.Contains(first["run"], `data-testid="run-status"`) || !strings.Contains(first["step-1"], `data-testid="step-status-1"`) {
		t.Fatalf("fragments: %v", first)
	}
	if quiet := collect(events, 500*time.Millisecond); len(quiet) != 0 {
		t.Fatalf("nothing changed, yet sent %v", quiet)
	}

	run, _ := c.Runbook.Get(ctx, id)
	if err := c.Runbook.Approve(ctx, runbook.Actor{Name: "test-operator", Role: "operator"}, id, run.PlanHash, "ok"); err != nil {
		t.Fatal(err)
	}
	changed := collect(events, time.Second)
	if _, ok := changed["step-1"]; ok || !strings.Contains(changed["approvals"], "test-operator") || !strings.Contains(changed["run"], "approved") {
		t.Fatalf("after an approval, sent %v", changed)
	}

	// One stream is the bound: a second is refused while the first is open.
	waitOpen(t, streams, 1)
	second := openStream(t, ctx, url, nil)
	second.Body.Close()
	if second.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a stream over the bound: %d", second.StatusCode)
	}
	cancel()
	waitOpen(t, streams, 0)

	// A run that does not exist is refused before any stream opens.
	missing := openStream(t, ctx, srv.URL+"/failover/999999/events", nil)
	missing.Body.Close()
	if missing.StatusCode == http.StatusOK {
		t.Fatal("a stream for a missing run")
	}
}

// The streams sit behind the same sign-in as their pages, and a page that
// changed under its forms says so in its pushed status.
func TestEventStreamsNeedSignIn(t *testing.T) {
	t.Parallel()
	c := startConsole(t)
	waitReady(t, c)
	id, err := c.Runbook.Create(context.Background(), runbook.Actor{Name: "test-admin", Role: "admin"},
		runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: failover.KindPreflight}}}, "sse gate")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/events", fmt.Sprintf("/failover/%d/events", id), "/savepoints/events"} {
		resp := openStream(t, context.Background(), c.URL+path, nil)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("%s signed out: %d", path, resp.StatusCode)
		}
		ctx, cancel := context.WithCancel(context.Background())
		resp = openStream(t, ctx, c.URL+path+"?forms=stale", sessionCookie(t, c, "viewer"))
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Errorf("%s as a viewer: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		got := collect(readEvents(resp), 3*time.Second)
		if len(got) == 0 {
			t.Errorf("%s as a viewer: no event", path)
		}
		if strings.HasPrefix(path, "/failover/") && !strings.Contains(got["run"], `data-testid="run-changed"`) {
			t.Errorf("a page loaded with other forms is not told: %s", got["run"])
		}
		cancel()
		resp.Body.Close()
	}
}

// Open overviews share one render per tick: two streams on the same tick
// cost one call of the page's fragments, and both get every fragment.
func TestOverviewStreamsShareOneRenderPerTick(t *testing.T) {
	c := startConsole(t)
	waitReady(t, c)
	var calls atomic.Int64
	page := func(w http.ResponseWriter, r *http.Request) (handlers.Fragments, bool) {
		frags, ok := c.H.OverviewEvents(w, r)
		return func(ctx context.Context) ([]handlers.Fragment, error) {
			calls.Add(1)
			return frags(ctx)
		}, ok
	}
	streams := &web.Streams{Tick: time.Hour} // one tick: the first
	r := chi.NewRouter()
	r.Get("/events", streams.Shared(func(r *http.Request) string { return r.URL.Query().Get("losses") }, page))
	srv := httptest.NewServer(r)
	defer srv.Close()
	defer streams.CloseAll()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var firsts [2]map[string]string
	var wg sync.WaitGroup
	for i := range firsts {
		resp := openStream(t, ctx, srv.URL+"/events?losses=0&flows=1", nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			events := readEvents(resp)
			got := map[string]string{}
			deadline := time.After(10 * time.Second)
			for got["asof"] == "" || got["card-primary->dr"] == "" || got["spark-primary->dr"] == "" {
				select {
				case ev, ok := <-events:
					if !ok {
						return
					}
					got[ev.name] = ev.data
				case <-deadline:
					return
				}
			}
			firsts[i] = got
		}()
	}
	wg.Wait()
	for i, got := range firsts {
		if got == nil {
			t.Fatalf("stream %d: first tick incomplete", i)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("two streams on one tick rendered the overview %d times, want 1", n)
	}
	// The sparkline is its own event: a card whose figures changed does
	// not resend it.
	if strings.Contains(firsts[0]["card-primary->dr"], "<svg") || !strings.Contains(firsts[0]["spark-primary->dr"], "<svg") {
		t.Fatalf("card %q, spark %q", firsts[0]["card-primary->dr"], firsts[0]["spark-primary->dr"])
	}
	if firsts[0]["card-primary->dr"] != firsts[1]["card-primary->dr"] {
		t.Fatal("the streams got different cards from one render")
	}
}

// The sparkline ends at the SparkStep: over ticks within one step it is
// sent once, while the figures' time line moves on.
func TestOverviewSparklineNotResentEachTick(t *testing.T) {
	c := startConsole(t)
	waitReady(t, c)
	streams := &web.Streams{Tick: 100 * time.Millisecond}
	r := chi.NewRouter()
	r.Get("/events", streams.Shared(func(r *http.Request) string { return r.URL.Query().Get("losses") }, c.H.OverviewEvents))
	srv := httptest.NewServer(r)
	defer srv.Close()
	defer streams.CloseAll()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Start just after a step boundary, so the 2.5 s window lies in one step.
	time.Sleep(time.Until(time.Now().Truncate(views.SparkStep).Add(views.SparkStep + 50*time.Millisecond)))
	start := time.Now()
	events := readEvents(openStream(t, ctx, srv.URL+"/events?losses=0&flows=1", nil))
	count := map[string]int{}
	timeout := time.After(2500 * time.Millisecond)
	for done := false; !done; {
		select {
		case ev := <-events:
			count[ev.name]++
		case <-timeout:
			done = true
		}
	}
	if start.Truncate(views.SparkStep) != time.Now().Truncate(views.SparkStep) {
		t.Fatalf("the 2.5 s window outlasted a %s step: the machine stalled; events %v", views.SparkStep, count)
	}
	if count["asof"] < 2 || count["spark-primary->dr"] != 1 {
		t.Fatalf("events sent: %v; want the sparkline once and the time line more", count)
	}
}
