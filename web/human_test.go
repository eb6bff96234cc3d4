package web_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/handlers"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/web"
)

// Human-speed browser helpers: the operator at 3 a.m. types a character at
// a time and stops to think before pressing the button. A live page that
// swaps an element holding an input loses what they typed; tests that
// type instantly and click at once never see it.
const (
	// keyGap is the time between two keys of a person typing.
	keyGap = 150 * time.Millisecond
	// thinkPause is how long the person looks at the form before
	// submitting: longer than two 2 s refresh cycles of a live page.
	thinkPause = 5500 * time.Millisecond
)

// humanType clicks into the field sel and types text one key at a time,
// keyGap apart. Each key is a real key event (keydown, input, keyup) sent
// to whatever has the focus at that moment: if the page swaps the field
// out, the rest goes nowhere, as it would for a person. midway, when not
// nil, runs after half the text: someone else changing the page's state
// while this person types.
func humanType(t *testing.T, ctx context.Context, sel, text string, midway func()) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel))); err != nil {
		t.Fatalf("clicking into %s: %v", sel, err)
	}
	keys := []rune(text)
	for i, r := range keys {
		if midway != nil && i == len(keys)/2 {
			midway()
		}
		if err := chromedp.Do(ctx, chromedp.KeyEvent(string(r)), chromedp.Sleep(keyGap)); err != nil {
			t.Fatalf("typing into %s: %v", sel, err)
		}
	}
}

// humanPick chooses value in the <select> sel as a person does with the
// mouse: the value changes and the page hears input and change events.
func humanPick(t *testing.T, ctx context.Context, sel, value string) {
	t.Helper()
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.focus(); e.value = %q;
		e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); return e.value })()`, sel, value)
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil || got != value {
		t.Fatalf("picking %q in %s: got %q, %v", value, sel, got, err)
	}
	chromedp.Do(ctx, chromedp.Sleep(keyGap))
}

// thinkThenCheck waits thinkPause, then requires every field to still
// hold what was typed into it (read from the input's value, not its
// attribute); a live update that replaced a field fails here.
func thinkThenCheck(t *testing.T, ctx context.Context, typed map[string]string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Sleep(thinkPause)); err != nil {
		t.Fatal(err)
	}
	for sel, want := range typed {
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q) || {value: "<gone>"}).value`, sel)))
		if err != nil {
			t.Fatalf("reading %s: %v", sel, err)
		}
		if got != want {
			t.Errorf("%s holds %q after a %s pause, typed %q: a live update replaced the field under the typist", sel, got, thinkPause, want)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

// waitText polls sel's text until ok accepts it, for at most limit.
func waitText(t *testing.T, ctx context.Context, sel string, limit time.Duration, ok func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		got, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		got = strings.TrimSpace(got)
		if err == nil && ok(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s after %s: %q (%v)", sel, limit, got, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// extraOperator adds an operator account (not created by anyone in the
// test's story) and returns its name and a session cookie.
func extraOperator(t *testing.T, c *console) (string, *http.Cookie) {
	t.Helper()
	name := fmt.Sprintf("second-op-%d", time.Now().UnixNano())
	ctx := context.Background()
	if err := c.Store.CreateUser(ctx, model.User{Name: name, Role: model.RoleOperator, PasswordHash: "x"}); err != nil {
		t.Fatal(err)
	}
	tok, err := c.Store.CreateSession(ctx, name, "127.0.0.1", "go-test")
	if err != nil {
		t.Fatal(err)
	}
	return name, &http.Cookie{Name: handlers.SessionCookie, Value: tok}
}

// postWith posts form to base+path with cookie and returns the status.
func postWith(t *testing.T, base, path string, cookie *http.Cookie, form url.Values) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(cookie)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// variant serves the shared console's store, monitor and sessions with a
// copy of its configuration changed by change (break-glass on, another
// Flink target...): a test that needs other settings leaves the shared
// console as it was. The runbook and catalog are its own.
type variant struct {
	URL     string
	Runbook *runbook.Runbook
}

func serveVariant(t *testing.T, c *console, change func(*config.Config)) variant {
	t.Helper()
	cfg := *c.Runbook.Config
	change(&cfg)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rb := &runbook.Runbook{Store: c.Store, Monitor: c.Monitor, Config: &cfg, Audit: runbook.StoreAuditor{Store: c.Store}, Log: log,
		Connect: c.Runbook.Connect, Flink: c.Runbook.Flink, StopVerifyWindow: c.Runbook.StopVerifyWindow}
	cat := &catalog.Catalog{Store: c.Store, Config: &cfg, Monitor: c.Monitor, Log: log}
	rb.Catalog = cat // as serve wires it: steps ask the catalog's verdict when they start
	ctx, cancel := context.WithCancel(context.Background())
	go cat.Run(ctx)
	h := &handlers.Handlers{Monitor: c.Monitor, Store: c.Store, Log: log, Version: "test", Runbook: rb, Catalog: cat,
		Auth: config.Auth{InsecureCookie: true, PublicURL: testPublicURL}, Worker: &failover.Worker{Runbook: rb, Catalog: cat, Log: log}}
	srv := httptest.NewServer(web.Router(h, log))
	t.Cleanup(func() { srv.Close(); cancel() })
	return variant{URL: srv.URL, Runbook: rb}
}
