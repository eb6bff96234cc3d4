package web_test

import (
	"context"
	_ "embed"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/drconsole/drconsole/demo"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/storage"
)

// axeSource is axe-core, pinned in testdata/axe/package.json (make vendor).
//
//go:embed testdata/axe/axe-4.14.1.min.js
var axeSource string

// wcagTags are the axe rule sets of WCAG 2.1 levels A and AA.
const wcagTags = `["wcag2a","wcag2aa","wcag21a","wcag21aa"]`

// layoutTabs is how many pages TestLayoutHoldsInEveryState checks at once.
const layoutTabs = 3

// Issue 31: no page scrolls sideways at 1,400 or 800 px, and axe-core
// finds no WCAG 2.1 A/AA violation, in each state an on-call engineer
// meets: calm, lagging, primary down, after a failover. Its own console:
// the last state fails the flow over for good.
func TestLayoutHoldsInEveryState(t *testing.T) {
	t.Parallel() // a console of its own: not one of the shared one's serial tests
	c := ownConsole(t)
	waitReady(t, c)
	ctx := newBrowserFor(t, 10*time.Minute)
	signIn(t, ctx, c.URL+"/", "test-admin")
	admin := runbook.Actor{Name: "test-admin", Role: "admin"}
	bctx := context.Background()
	run, err := c.Runbook.Create(bctx, admin, runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: failover.KindPreflight}, {Kind: failover.KindStopMirror}}},
		"layout check: "+strings.Repeat("a reason that goes on and on without a space ", 3)+strings.Repeat("x", 300))
	if err != nil {
		t.Fatal(err)
	}
	flow := url.PathEscape("primary->dr")
	pages := []string{"/", "/flows/" + flow, "/flows/" + flow + "/groups", "/flows/" + flow + "/topics/" + demo.Topics[0],
		"/flows/" + flow + "/topics/" + demo.Topics[0] + "/partitions/0", "/flows/link", "/failover", "/failover/new",
		fmt.Sprintf("/failover/%d", run), "/savepoints", "/report", "/audit", "/translate", "/drills", "/demo", "/admin/users",
		"/failover/999999"}

	// The pages are checked in a few tabs at once (tabs of one browser
	// context: signed in as one), each page at both widths in one tab:
	// one tab after another took a minute and a half.
	tabs := []context.Context{ctx}
	for range layoutTabs - 1 {
		tab, cancel := chromedp.NewContext(ctx)
		t.Cleanup(cancel)
		tabs = append(tabs, tab)
	}
	checkPage := func(tab context.Context, p, state string) (errs []string, fatal error) {
		for _, width := range []int64{1400, 800} {
			where := fmt.Sprintf("%s at %d px, %s", p, width, state)
			if err := chromedp.Do(tab, chromedp.EmulateViewport(width, 900), chromedp.Navigate(c.URL+p), chromedp.WaitReady("body")); err != nil {
				return errs, fmt.Errorf("%s: %v", where, err)
			}
			got, err := chromedp.Run(tab, chromedp.Evaluate[overflow](overflowProbe))
			if err != nil {
				return errs, fmt.Errorf("%s: %v", where, err)
			}
			if got.Scroll > got.Inner {
				errs = append(errs, fmt.Sprintf("%s scrolls sideways: %d px wide in a %d px window; widest: %s", where, got.Scroll, got.Inner, strings.Join(got.Over, "; ")))
			}
			if width != 800 { // the rules judge markup and colours, not the width
				continue
			}
			if _, err := chromedp.Run(tab, chromedp.Evaluate[bool](axeSource+";true")); err != nil {
				return errs, fmt.Errorf("%s: loading axe: %v", where, err)
			}
			violations, err := chromedp.Run(tab, chromedp.Evaluate[[]string](`axe.run(document, {runOnly: {type: "tag", values: `+wcagTags+`}}).then(r => r.violations.map(v =>
				v.id + " (" + v.impact + "): " + v.help + ": " + v.nodes.slice(0, 3).map(n => n.target.join(" ") + " " + (n.failureSummary || "").replace(/\s+/g, " ").slice(0, 160)).join(" | ") + " [" + v.nodes.length + " node(s)]"))`,
				chromedp.EvalAwaitPromise))
			if err != nil {
				return errs, fmt.Errorf("%s: axe: %v", where, err)
			}
			for _, v := range violations {
				errs = append(errs, fmt.Sprintf("%s: %s", where, v))
			}
		}
		return errs, nil
	}
	check := func(state string) {
		t.Helper()
		pages := pages
		if sps, err := c.Store.Savepoints(bctx, storage.SavepointFilter{}); err == nil && len(sps) > 0 {
			pages = append(pages, fmt.Sprintf("/savepoints/%d", sps[0].ID))
		}
		if state == "after a failover" {
			pages = append(pages, "/flows/"+flow+"/lost")
		}
		type result struct {
			errs  []string
			fatal error
		}
		results := make([]result, len(pages))
		var wg sync.WaitGroup
		for i, tab := range tabs {
			wg.Go(func() {
				for j := i; j < len(pages); j += len(tabs) {
					r := &results[j]
					if r.errs, r.fatal = checkPage(tab, pages[j], state); r.fatal != nil {
						return
					}
				}
			})
		}
		wg.Wait()
		for _, r := range results {
			for _, e := range r.errs {
				t.Error(e)
			}
			if r.fatal != nil {
				t.Fatal(r.fatal)
			}
		}
	}

	check("calm")

	c.Sandbox.SetMirrorRate(50)
	waitFor(t, "the flow to lag", func() bool {
		s := c.Monitor.Snapshot("primary->dr")
		return s.RPOMs != nil && *s.RPOMs > 3000
	})
	check("lagging")

	c.Sandbox.SetPrimaryDown(true)
	waitFor(t, "the primary to read as unreachable", func() bool {
		s := c.Monitor.Snapshot("primary->dr")
		return s.Source.Checked && !s.Source.OK
	})
	check("primary down")

	// The failover: the sandbox's mirror runs in dedicated mode, so its
	// process is stopped by hand, then the run's steps.
	c.Sandbox.SetMirrorRunning(false)
	r, _ := c.Runbook.Get(bctx, run)
	if err := c.Runbook.Approve(bctx, runbook.Actor{Name: "test-operator", Role: "operator"}, run, r.PlanHash, ""); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		x, err := c.Runbook.Begin(bctx, admin, run, i, "primary->dr", "layout check: the primary is down")
		if err != nil {
			t.Fatal(err)
		}
		if err := x.Perform(bctx); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the flow to read as failed over", func() bool { return c.Monitor.Snapshot("primary->dr").FailedOver != nil })
	check("after a failover")
}

// overflow is what overflowProbe finds.
type overflow struct {
	Scroll, Inner int
	Over          []string
}

// overflowProbe measures the page's width against the window's and names
// the elements that stick out the furthest.
const overflowProbe = `(() => {
	const inner = document.documentElement.clientWidth;
	const over = [];
	for (const el of document.body.querySelectorAll("*")) {
		const r = el.getBoundingClientRect();
		if (r.right > inner + 1) {
			const cls = typeof el.className === "string" && el.className ? "." + el.className.trim().split(/\s+/).join(".") : "";
			over.push({d: r.right, s: el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + cls + " to " + Math.round(r.right) + " px"});
		}
	}
	over.sort((a, b) => b.d - a.d);
	return {Scroll: document.documentElement.scrollWidth, Inner: inner, Over: over.slice(0, 4).map(o => o.s)};
})()`

// waitFor polls cond every 100 ms for up to a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
