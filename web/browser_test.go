package web_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/drconsole/drconsole/web/webtest"
)

// newBrowser opens a tab of its own in the package's shared Chromium.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	return newBrowserFor(t, 90*time.Second)
}

// newBrowserFor is newBrowser for a test that browses for up to d.
func newBrowserFor(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	return webtest.Browser(t, d)
}

// parseShown reads a duration as the views print it ("0 s", "850 ms",
// "12 s", "1 m 05 s"); ok is false for "unknown".
func parseShown(s string) (time.Duration, bool) {
	f := strings.Fields(strings.TrimSpace(s))
	var d time.Duration
	for i := 0; i+1 < len(f); i += 2 {
		n, err := time.ParseDuration(f[i] + map[string]string{"ms": "ms", "s": "s", "m": "m", "h": "h", "d": "h"}[f[i+1]])
		if err != nil {
			return 0, false
		}
		if f[i+1] == "d" {
			n *= 24
		}
		d += n
	}
	return d, len(f) >= 2
}

// A visitor slows the mirror on the sandbox controls page, and the overview,
// left open, shows the RPO grow without a reload.
func TestBrowserSeesLagGrowWhenMirrorSlowed(t *testing.T) {
	c := startConsole(t)
	waitReady(t, c)
	ctx := newBrowser(t)
	rpo := chromedp.CSS(`[data-testid="rpo"]`)
	// Signed out, the overview sends the browser to the sign-in form and,
	// once signed in, back.
	signIn(t, ctx, c.URL+"/", "test-operator")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(rpo)); err != nil {
		t.Fatal(err)
	}
	before, err := chromedp.Run(ctx, chromedp.Text(rpo))
	if err != nil {
		t.Fatal(err)
	}
	d0, ok := parseShown(before)
	if !ok {
		t.Fatalf("RPO before = %q, not a duration", before)
	}

	// Use the control panel like a person: open it, press the button.
	if err := chromedp.Do(ctx, chromedp.Navigate(c.URL+"/demo"), chromedp.Click(chromedp.ID("rate-5")),
		chromedp.WaitVisible(chromedp.CSS(`.flash`))); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Sandbox.SetMirrorRate(0) })
	flash, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`.flash`)))
	if !strings.Contains(flash, "5 records/s") {
		t.Fatalf("flash after click = %q", flash)
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(c.URL+"/"), chromedp.WaitVisible(rpo)); err != nil {
		t.Fatal(err)
	}
	loaded := time.Now()
	var shown string
	deadline := time.Now().Add(45 * time.Second)
	for {
		// A push may replace the card between finding the figure and
		// reading it: read again on the next turn.
		shown, err = chromedp.Run(ctx, chromedp.Text(rpo))
		if err != nil && ctx.Err() != nil {
			t.Fatal(err)
		}
		// Lag must grow past what it was, and past 3 s, with the page
		// updating itself (htmx polling) rather than being reloaded.
		if d, ok := parseShown(shown); ok && d > d0 && d >= 3*time.Second && time.Since(loaded) > 2*time.Second {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("RPO on the open overview stayed at %q (was %q) for 45 s after slowing the mirror", shown, before)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("RPO on the overview went from %q to %q without a reload", before, shown)

	if dir := os.Getenv("DRCONSOLE_SCREENSHOTS"); dir != "" {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err == nil {
			os.WriteFile(filepath.Join(dir, "overview.png"), png, 0o644)
		}
	}
}

// signIn opens url signed out, expects the sign-in form, fills it in as
// user and waits for the page to come back.
func signIn(t *testing.T, ctx context.Context, url, user string) {
	t.Helper()
	err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.ID("password")),
		chromedp.SendKeys(chromedp.ID("username"), user), chromedp.SendKeys(chromedp.ID("password"), testPassword),
		chromedp.Click(chromedp.ID("sign-in")), chromedp.WaitVisible(chromedp.CSS(`[data-testid="signed-in-user"]`)))
	if err != nil {
		t.Fatalf("signing in as %s: %v", user, err)
	}
	who, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="signed-in-user"]`)))
	if err != nil || who != user {
		t.Fatalf("signed in as %q (%v), want %s", who, err, user)
	}
}

// A viewer signs in, finds their sign-in in the audit log, cannot press
// an operator's button, and signs out.
func TestBrowserViewerAuditAndSignOut(t *testing.T) {
	c := startConsole(t)
	ctx := newBrowser(t)
	signIn(t, ctx, c.URL+"/audit?action=login", "test-viewer")
	row := chromedp.CSS(`tr[data-action="login"]`)
	if err := chromedp.Do(ctx, chromedp.WaitVisible(row)); err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="audit-table"] tbody`)))
	if err != nil || !strings.Contains(text, "test-viewer") {
		t.Fatalf("audit table %q (%v) lacks the viewer's sign-in", text, err)
	}
	// The sandbox buttons are shown, but the server refuses a viewer, and
	// the page says so: htmx swaps nothing for a 403, so without the
	// alert the button would seem to do nothing.
	if err := chromedp.Do(ctx, chromedp.Navigate(c.URL+"/demo"), chromedp.WaitVisible(chromedp.ID("rate-5"))); err != nil {
		t.Fatal(err)
	}
	state, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="mirror-rate"]`)))
	alert := chromedp.CSS(`[data-testid="request-error"][role="alert"] .request-error-box`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("rate-5")), chromedp.WaitVisible(alert)); err != nil {
		t.Fatalf("no visible message for the refused button: %v", err)
	}
	said, err := chromedp.Run(ctx, chromedp.Text(alert))
	if err != nil || !strings.Contains(said, "Not allowed (HTTP 403") || !strings.Contains(said, "this needs the operator role; test-viewer is a viewer") {
		t.Fatalf("the alert says %q (%v)", said, err)
	}
	if s := c.Sandbox.State(); s.MirrorRate == 5 {
		t.Fatalf("a viewer changed the mirror rate (was %q)", state)
	}
	// Dismissed by keyboard: the button takes focus and Enter.
	if err := chromedp.Do(ctx, chromedp.Focus(chromedp.CSS(`.request-error-box button`)), chromedp.KeyEvent("\r"),
		chromedp.WaitNotPresent(chromedp.CSS(`.request-error-box`))); err != nil {
		t.Fatalf("dismissing the message: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("sign-out")), chromedp.WaitVisible(chromedp.ID("password"))); err != nil {
		t.Fatal(err)
	}
	// Signed out for real: the audit page sends us back to the form.
	if err := chromedp.Do(ctx, chromedp.Navigate(c.URL+"/audit"), chromedp.WaitVisible(chromedp.ID("password"))); err != nil {
		t.Fatal(err)
	}
}

// pageSays is where the page in ctx is, its alerts and fields the
// browser holds invalid, and the start of its text, for a failure
// message. It is read even when ctx's own time is up.
func pageSays(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[location.href,
		...[...document.querySelectorAll("[role=alert], .flash, .field-error")].filter(e => e.innerText.trim()).map(e => "says: " + e.innerText),
		...[...document.querySelectorAll("form :invalid")].map(e => "invalid field: #" + e.id),
		document.body.innerText.slice(0, 2000)].join("\n")`))
	if err != nil {
		return "(the page could not be read: " + err.Error() + ")"
	}
	return s
}

// createPlan presses "Create the plan" on the plan form in ctx and waits
// for the run page, whose address it returns. It aims once the form's
// fragments have settled: a summary swapped in between aiming and
// pressing moves the button from under the pointer. A refused plan, or
// one that never comes, fails the test with what the page shows.
func createPlan(t *testing.T, ctx context.Context) string {
	t.Helper()
	settle, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := chromedp.Run(settle, chromedp.Poll[bool](`document.querySelector(".htmx-request, .htmx-swapping, .htmx-settling") === null`)); err != nil {
		t.Fatalf("the plan form's fragments did not settle: %v\n%s", err, pageSays(ctx))
	}
	created, cancel := context.WithTimeout(ctx, 45*time.Second)
	defer cancel()
	if err := chromedp.Do(created, chromedp.Click(chromedp.ID("create-plan")), chromedp.WaitVisible(chromedp.CSS(`[data-testid="run-status"]`))); err != nil {
		t.Fatalf("creating the plan: %v; the page:\n%s", err, pageSays(ctx))
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil || !strings.Contains(loc, "/failover/") {
		t.Fatalf("after creating the plan at %q: %v", loc, err)
	}
	return loc
}
