package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The sandbox's MM2 failback as two people do it in two browsers, in an
// 800 px window, after a failover done the same way: alice brings the
// primary back and stops its consumers on the sandbox page (the
// applications run in DR), opens "Plan the failback" on the finished
// failover's page, which fills the form from that run, and creates the
// plan; bob learns from the navigation that it waits for him and approves
// it; alice runs each step as the page offers it, typing the flow name
// where asked, until the page says the primary is active again. The
// failback's clicks and typed fields are counted.
func TestSandboxFailbackJourneyInTheBrowser(t *testing.T) {
	c := startDemoConsole(t)
	alice, bob := c.signIn(t, "alice"), c.signIn(t, "bob")

	failoverURL := failOverFromTheIncident(t, alice, bob)
	alice.clicks, alice.fields, bob.clicks, bob.fields = 0, 0, 0, 0

	// The failback. The primary is back; the applications run in DR, so
	// the primary's consumers are stopped and their groups empty.
	alice.open("/demo")
	alice.click("#primary-up")
	alice.see("#primary-down")
	alice.click("#consumers-stop")
	alice.see("#consumers-start")
	if state := alice.see(`[data-testid="consumers-state"]`); !strings.Contains(state, "STOPPED") {
		t.Fatalf("after the stop the sandbox page says the consumers are %q", state)
	}
	alice.open(strings.TrimPrefix(failoverURL, c.base))
	alice.click("#plan-failback")
	alice.see("#failback") // the form, opened filled from the failover
	ticked, err := chromedp.Run(alice.ctx, chromedp.Evaluate[bool](`document.querySelector("#failback").checked`))
	if err != nil {
		t.Fatal(err)
	}
	reason, err := chromedp.Run(alice.ctx, chromedp.Value(chromedp.CSS("#reason")))
	if err != nil {
		t.Fatal(err)
	}
	if !ticked || !strings.HasPrefix(reason, "Failback after failover run ") {
		t.Fatalf("the failback form opened with failback ticked %v and reason %q", ticked, reason)
	}
	if summary := alice.see(`[data-testid="plan-summary"]`); strings.Contains(summary, "It would be refused") {
		t.Fatalf("the filled failback form would be refused:\n%s", summary)
	}
	alice.click("#create-plan")
	alice.see(`[data-testid="run-status"]`)
	failbackURL := alice.location()
	if failbackURL == failoverURL || !strings.Contains(failbackURL, "/failover/") {
		t.Fatalf("after Create alice is at %s", failbackURL)
	}
	approveFromNav(bob, failbackURL)
	runEveryStep(alice, "primary->dr")
	if active := alice.see(`[data-testid="finished-active"]`); !strings.Contains(active, "primary") {
		t.Errorf("after the failback the page says %q of the active side", active)
	}
	t.Logf("the failback took %d clicks and %d typed fields (alice %d and %d, bob %d and %d)",
		alice.clicks+bob.clicks, alice.fields+bob.fields, alice.clicks, alice.fields, bob.clicks, bob.fields)

	// The applications come back to the primary, where their groups were
	// moved to.
	alice.open("/demo")
	alice.click("#consumers-start")
	alice.see("#consumers-stop")
}

// failOverFromTheIncident takes the sandbox's primary down and fails
// primary->dr over in the browsers: alice plans it from the incident view
// and runs it, bob approves it. It returns the run's page.
func failOverFromTheIncident(t *testing.T, alice, bob *operator) string {
	t.Helper()
	alice.open("/demo")
	alice.click("#primary-down")
	alice.see("#primary-up")
	alice.open("/")
	alice.click(`a[id="incident-failover-primary->dr"]`)
	alice.click("#create-plan")
	alice.see(`[data-testid="run-status"]`)
	runURL := alice.location()
	approveFromNav(bob, runURL)
	runEveryStep(alice, "primary->dr")
	if active := alice.see(`[data-testid="finished-active"]`); !strings.Contains(active, "DR") {
		t.Fatalf("after the failover the page says %q of the active side", active)
	}
	t.Logf("the failover took %d clicks and %d typed fields", alice.clicks+bob.clicks, alice.fields+bob.fields)
	return runURL
}

// location is the address of the page o is on.
func (o *operator) location() string {
	o.t.Helper()
	loc, err := chromedp.Run(o.ctx, chromedp.Location())
	if err != nil {
		o.t.Fatalf("%s: location: %v", o.name, err)
	}
	return loc
}

// approveFromNav: the approver follows the navigation's "waiting" link to
// runURL (through the list of waiting runs when there are several) and
// approves the run.
func approveFromNav(o *operator, runURL string) {
	o.t.Helper()
	o.click(`[data-testid="nav-waiting"]`)
	if !strings.HasPrefix(o.location(), runURL) {
		o.click(fmt.Sprintf(`a[href="%s"]`, strings.TrimPrefix(runURL, o.console.base)))
	}
	o.click("#approve")
	o.see(`[data-testid="you-approved"]`)
}

// runEveryStep runs the approved run open on o's page step by step, each
// as soon as the page offers it (without a reload), typing flow where a
// step asks for it, until the run is finished.
func runEveryStep(o *operator, flow string) {
	o.t.Helper()
	for i := 1; o.has(fmt.Sprintf(`[data-testid="step-%d"]`, i)); i++ {
		o.see(fmt.Sprintf("#execute-%d", i))
		if confirm := fmt.Sprintf("#confirm-%d", i); o.has(confirm) {
			o.typeInto(confirm, flow)
		}
		o.click(fmt.Sprintf("#execute-%d", i))
		ctx, cancel := context.WithTimeout(o.ctx, 2*time.Minute)
		status, err := chromedp.Run(ctx, chromedp.Poll[string](fmt.Sprintf(
			`(s => s && /done|failed/.test(s.textContent) ? s.textContent : "")(document.querySelector('[data-testid="step-status-%d"]'))`, i),
			chromedp.WithPollingTimeout(0), chromedp.WithPollingInterval(250*time.Millisecond)))
		cancel()
		if err != nil || !strings.Contains(status, "done") {
			page, _ := chromedp.Run(o.ctx, chromedp.Text(chromedp.CSS("#live")))
			o.t.Fatalf("step %d: %q %v\n%.4000s", i, status, err, page)
		}
	}
	o.see(`[data-testid="finished"]`)
}
