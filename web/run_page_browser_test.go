package web_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
)

// Two operators in two browsers: the requester's page shows "Run step 1"
// once the other approves, without a reload; running it keeps the page
// where it was (no reload, the step in view); the approver's navigation
// names the run waiting for them.
func TestBrowserRunPageNextActionLiveAndInPlace(t *testing.T) {
	c := startConsole(t)
	waitReady(t, c)
	id, err := c.Runbook.Create(context.Background(), runbook.Actor{Name: "test-operator", Role: "operator"},
		runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: failover.KindPreflight}, {Kind: failover.KindStopMirror},
			{Kind: failover.KindRestoreFlink, FlinkTarget: "sandbox-flink-dr", JarID: "job.jar"}}}, "run page in two browsers")
	if err != nil {
		t.Fatal(err)
	}
	runURL := fmt.Sprintf("%s/failover/%d", c.URL, id)
	a := newBrowser(t)
	signIn(t, a, runURL, "test-operator")
	// A short window, so that the page scrolls.
	if err := chromedp.Do(a, chromedp.EmulateViewport(1000, 420), chromedp.WaitVisible(chromedp.CSS(`[data-testid="self-approval-note"]`))); err != nil {
		t.Fatal(err)
	}
	if n := count(t, a, "#execute-1"); n != 0 {
		t.Fatal("the requester is offered step 1 before approval")
	}
	if _, err := chromedp.Run(a, chromedp.Evaluate[bool](`window.__sameDocument = true`)); err != nil {
		t.Fatal(err)
	}

	b := newBrowser(t)
	signIn(t, b, c.URL+"/", "test-admin")
	waitJS(t, b, "the approver's navigation names the run", fmt.Sprintf(
		`(document.querySelector('[data-testid="nav-waiting-runs"]')||{dataset:{}}).dataset.runs?.split(" ").includes("%d") && !!document.querySelector('[data-testid="nav-waiting"]')`, id), 15*time.Second)
	// (Other tests' runs may wait too: then the link leads to the list.)
	if err := chromedp.Do(b, chromedp.Navigate(runURL), chromedp.WaitVisible(chromedp.ID("approve")),
		chromedp.Click(chromedp.ID("approve")), chromedp.WaitVisible(chromedp.CSS(`.flash`))); err != nil {
		t.Fatal(err)
	}
	if n := count(t, b, "#approve"); n != 0 {
		t.Fatal("the approver is offered to approve again")
	}

	// (Settled: htmx has made the new form its own.)
	waitJS(t, a, `"Run step 1" on the requester's page without a reload`,
		`!!document.getElementById("execute-1") && window.__sameDocument === true && !document.querySelector(".htmx-added, .htmx-settling, .htmx-swapping")`, 20*time.Second)
	if n := count(t, a, `[data-testid="self-approval-note"]`); n != 0 {
		t.Fatal("the requester is still told a different operator must approve")
	}
	before, err := chromedp.Run(a, chromedp.Evaluate[[]float64](`document.getElementById("step-1").scrollIntoView({block: "start"}),
		[window.scrollY, document.getElementById("step-1").getBoundingClientRect().top]`))
	if err != nil {
		t.Fatal(err)
	}
	if before[0] <= 0 {
		t.Fatalf("the page does not scroll (scrollY %v): the test proves nothing", before[0])
	}
	// Focused and clicked from script, as a click does: the driver's own
	// click would scroll to it first.
	if _, err := chromedp.Run(a, chromedp.Evaluate[bool](`(b => (b.focus({preventScroll: true}), b.click(), true))(document.getElementById("execute-1"))`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, a, "step 1 done and step 2 offered", `(document.querySelector('[data-testid="step-status-1"]')||{}).textContent?.trim() === "done"
		&& !!document.getElementById("execute-2") && !document.querySelector('[data-testid="run-changed"]')`, 60*time.Second)
	got, err := chromedp.Run(a, chromedp.Evaluate[[]any](`(() => {
		const r = document.getElementById("step-1").getBoundingClientRect();
		return [window.__sameDocument === true, r.top, r.bottom > 0 && r.top < window.innerHeight, document.activeElement.id];
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != true {
		t.Fatal("running step 1 reloaded the page")
	}
	// Step 1 stays where it was on the screen (its body folds below it).
	if top := got[1].(float64); top < before[1]-60 || top > before[1]+60 {
		t.Errorf("running step 1 moved it on the screen from %v px to %v px", before[1], top)
	}
	if got[2] != true {
		t.Error("step 1 is out of view after running it")
	}
	if got[3] != "step-1" {
		t.Errorf("the keyboard's focus is on %q after running step 1, not on the step", got[3])
	}
	if s := text(t, a, `[data-testid="step-1"]`); !strings.Contains(s, "took") {
		t.Errorf("step 1's line after it ran: %q", s)
	}
}

// An approver's overview, open before the run exists, names the run once
// it is requested, pushed: the navigation's request that first brings the
// run is the one the page's stream triggered ("runs-changed"), not its
// 10 s poll.
func TestBrowserNavHearsOfANewRunFromTheStream(t *testing.T) {
	c := startConsole(t)
	waitReady(t, c)
	b := newBrowser(t)
	signIn(t, b, c.URL+"/", "test-admin")
	if _, err := chromedp.Run(b, chromedp.Evaluate[bool](`window.__nav = [];
		document.addEventListener("htmx:afterRequest", e => {
			if (e.detail.elt.id !== "nav-waiting") { return; }
			const ev = e.detail.requestConfig && e.detail.requestConfig.triggeringEvent;
			window.__nav.push([ev ? ev.type : "poll", e.detail.xhr.responseText]);
		}); true`)); err != nil {
		t.Fatal(err)
	}
	id, err := c.Runbook.Create(context.Background(), runbook.Actor{Name: "test-operator", Role: "operator"},
		runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: failover.KindPreflight}}}, "nav push")
	if err != nil {
		t.Fatal(err)
	}
	waitJS(t, b, "the approver's navigation names the run", fmt.Sprintf(
		`(document.querySelector('[data-testid="nav-waiting-runs"]')||{dataset:{}}).dataset.runs?.split(" ").includes("%d")`, id), 20*time.Second)
	seen, err := chromedp.Run(b, chromedp.Evaluate[[][]string](`window.__nav`))
	if err != nil {
		t.Fatal(err)
	}
	runs := regexp.MustCompile(`data-runs="([^"]*)"`)
	for _, r := range seen {
		m := runs.FindStringSubmatch(r[1])
		if m == nil || !slices.Contains(strings.Fields(m[1]), strconv.FormatInt(id, 10)) {
			continue
		}
		if r[0] != "runs-changed" {
			t.Fatalf("the navigation first named run %d on a %q, not pushed by the stream", id, r[0])
		}
		return
	}
	t.Fatalf("no navigation request brought run %d: %q", id, seen)
}
