package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/web"
)

// waitJS polls a JavaScript boolean expression in the page until it holds.
func waitJS(t *testing.T, ctx context.Context, what, expr string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s (%v)", what, within, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// countSSE makes the page count the pushed fragments it swaps in.
const countSSE = `window.__sse = 0; document.addEventListener("htmx:sseMessage", () => window.__sse++); true`

// An operator types a reject reason and a step confirmation on a run page
// while other operators approve the run and it changes under them: the
// pushed status and approvals change, what was typed stays (the very
// elements: never replaced), the cursor stays where it was, and the page
// says its buttons are from before the change.
func TestBrowserTypedValuesSurviveLiveUpdates(t *testing.T) {
	t.Parallel()
	c := startConsole(t)
	waitReady(t, c)
	ctx := context.Background()
	hash, err := identity.HashPassword(testPassword)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"live-op2", "live-op3"} {
		if err := c.Store.CreateUser(ctx, model.User{Name: n, Role: model.RoleOperator, PasswordHash: hash}); err != nil {
			t.Fatal(err)
		}
	}
	id, err := c.Runbook.Create(ctx, runbook.Actor{Name: "test-admin", Role: "admin"},
		runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: failover.KindStopMirror}}}, "live typing drill")
	if err != nil {
		t.Fatal(err)
	}
	approve := func(who string) {
		t.Helper()
		run, _ := c.Runbook.Get(ctx, id)
		if err := c.Runbook.Approve(ctx, runbook.Actor{Name: who, Role: "operator"}, id, run.PlanHash, "ok"); err != nil {
			t.Fatal(err)
		}
	}
	approve("live-op2") // approved: the page offers the irreversible step with its typed confirmation

	b := newBrowser(t)
	signIn(t, b, fmt.Sprintf("%s/failover/%d", c.URL, id), "test-operator")
	const reason, confirm = "the primary is back, no failover needed", "primary->dr"
	if err := chromedp.Do(b, chromedp.WaitVisible(chromedp.ID("confirm-1"))); err != nil {
		t.Fatal(err)
	}
	// Marks on the elements themselves: a swap would replace them.
	if _, err := chromedp.Run(b, chromedp.Evaluate[bool](countSSE+` && (document.getElementById("reject-reason").__mark = document.getElementById("confirm-1").__mark = true)`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(b, chromedp.SendKeys(chromedp.ID("reject-reason"), reason),
		chromedp.SendKeys(chromedp.ID("confirm-1"), confirm[:5])); err != nil {
		t.Fatal(err)
	}
	// A second operator approves while the cursor is in the confirmation.
	approve("live-op3")
	waitJS(t, b, "the second approval pushed", `document.querySelector('[data-testid="approvals"]').textContent.startsWith("2 of")`, 15*time.Second)
	if err := chromedp.Do(b, chromedp.SendKeys(chromedp.ID("confirm-1"), confirm[5:])); err != nil {
		t.Fatal(err)
	}
	// Then the requester's own reject (a third change: the run ends).
	if err := c.Runbook.Reject(ctx, runbook.Actor{Name: "live-op2", Role: "operator"}, id, "changed my mind"); err != nil {
		t.Fatal(err)
	}
	waitJS(t, b, "the rejection pushed", `document.querySelector('[data-testid="run-status"]').textContent.includes("rejected")`, 15*time.Second)
	waitJS(t, b, "three or more pushed fragments", `window.__sse >= 3`, 15*time.Second)
	got, err := chromedp.Run(b, chromedp.Evaluate[[]any](`(() => {
		const r = document.getElementById("reject-reason"), c = document.getElementById("confirm-1");
		return [r.value, c.value, !!(r.__mark && c.__mark), document.activeElement === c];
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != reason || got[1] != confirm || got[2] != true || got[3] != true {
		t.Fatalf("after the run changed: reject reason %q, confirmation %q, same elements %v, focus kept %v", got[0], got[1], got[2], got[3])
	}
	if n := count(t, b, `[data-testid="run-changed"]`); n != 1 {
		t.Fatal("the page does not say its buttons are from before the change")
	}
	// The server still decides: running the step of a rejected run is refused.
	if err := chromedp.Do(b, chromedp.Click(chromedp.ID("execute-1")), chromedp.WaitVisible(chromedp.CSS(`[data-testid="run-error"]`))); err != nil {
		t.Fatal(err)
	}
}

// overviewLive opens the overview in a browser as a viewer and waits for
// its first pushed fragment.
//
// It starts a console of its own: its tests count and drop that console's
// streams, which no other test may share, so they can run in parallel.
func overviewLive(t *testing.T) (*web.Streams, context.Context) {
	t.Helper()
	c := ownConsole(t)
	waitReady(t, c)
	b := newBrowser(t)
	signIn(t, b, c.URL+"/", "test-viewer")
	if _, err := chromedp.Run(b, chromedp.Evaluate[bool](countSSE)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, b, "a pushed card", `window.__sse > 0`, 15*time.Second)
	return c.Handler.(*web.Console).Streams, b
}

// When the stream drops, the page says "live updates paused, retrying"
// and takes the notice away when it reconnects.
func TestBrowserDroppedStreamShowsNoticeAndRecovers(t *testing.T) {
	t.Parallel() // a console of its own (overviewLive)
	streams, b := overviewLive(t)
	if n := count(t, b, `[data-testid="live-notice"]`); n != 0 {
		t.Fatal("notice shown while connected")
	}
	streams.CloseAll()
	waitJS(t, b, "the notice", `(document.querySelector('[data-testid="live-notice"]')||{}).textContent === "Live updates paused, retrying…"`, 10*time.Second)
	waitJS(t, b, "the notice gone after reconnecting", `!document.querySelector('[data-testid="live-notice"]')`, 30*time.Second)
	before, _ := chromedp.Run(b, chromedp.Evaluate[int](`window.__sse`))
	waitJS(t, b, "fragments again", fmt.Sprintf(`window.__sse > %d`, before), 15*time.Second)
}

// A hidden tab holds no stream (so costs the server nothing); shown again,
// it reconnects and the server sends the current fragments at once.
func TestBrowserHiddenTabStopsStreaming(t *testing.T) {
	t.Parallel() // a console of its own (overviewLive)
	streams, b := overviewLive(t)
	open := streams.Open()
	if open < 1 {
		t.Fatalf("%d streams open with the overview shown", open)
	}
	setHidden := func(hidden bool) {
		t.Helper()
		state := map[bool]string{true: "hidden", false: "visible"}[hidden]
		if _, err := chromedp.Run(b, chromedp.Evaluate[bool](fmt.Sprintf(`
			Object.defineProperty(document, "hidden", {configurable: true, get: () => %t});
			Object.defineProperty(document, "visibilityState", {configurable: true, get: () => %q});
			document.dispatchEvent(new Event("visibilitychange")); true`, hidden, state))); err != nil {
			t.Fatal(err)
		}
	}
	setHidden(true)
	waitOpen(t, streams, open-1)
	// Still none a few ticks later: nothing reopens it while hidden.
	msgs, _ := chromedp.Run(b, chromedp.Evaluate[int](`window.__sse`))
	deadline := time.Now().Add(3 * web.DefaultStreamTick)
	for time.Now().Before(deadline) {
		if n := streams.Open(); n != open-1 {
			t.Fatalf("hidden tab: %d streams open, want %d", n, open-1)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if after, _ := chromedp.Run(b, chromedp.Evaluate[int](`window.__sse`)); after != msgs {
		t.Fatalf("hidden tab got %d fragments", after-msgs)
	}
	setHidden(false)
	waitOpen(t, streams, open)
	// Caught up at once: the first tick of the new stream sends everything.
	waitJS(t, b, "fragments after showing", fmt.Sprintf(`window.__sse >= %d + document.querySelectorAll("[sse-swap]").length`, msgs), 5*time.Second)
	if strings.Contains(text(t, b, "body"), "Live updates paused") {
		t.Fatal("the notice shows after a pause of our own")
	}
}

// A keyboard user on a flow card's link keeps the focus while the card is
// pushed again and again.
func TestBrowserOverviewKeepsKeyboardFocus(t *testing.T) {
	t.Parallel()
	_, b := overviewLive(t)
	if _, err := chromedp.Run(b, chromedp.Evaluate[bool](`document.getElementById("flow-link-primary->dr").focus(); window.__sse = 0; true`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, b, "two more pushed fragments", `window.__sse >= 2`, 15*time.Second)
	if id, err := chromedp.Run(b, chromedp.Evaluate[string](`document.activeElement.id`)); err != nil || id != "flow-link-primary->dr" {
		t.Fatalf("focus on %q after the updates (%v)", id, err)
	}
}
