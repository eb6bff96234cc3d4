package cli

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The sandbox's MM2 failback as two people do it in two browsers, in an
// 800 px window, after a failover done the same way: alice brings the
// primary back and stops its consumers on the sandbox page (the
// applications run in DR), opens "Plan the failback" on the finished
// failover's page, which fills the form from that run, and creates the
// plan; bob learns from the navigation that it waits for him and approves
// it; alice runs each step as the page offers it, typing the flow name
// once (at stop-writers), until the page says the primary is active again. The
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
	runEveryStep(alice, "primary->dr", nil)
	if active := alice.see(`[data-testid="finished-active"]`); !strings.Contains(active, "primary") {
		t.Errorf("after the failback the page says %q of the active side", active)
	}
	t.Logf("the failback took %d clicks and %d typed fields (alice %d and %d, bob %d and %d)",
		alice.clicks+bob.clicks, alice.fields+bob.fields, alice.clicks, alice.fields, bob.clicks, bob.fields)
	if f := alice.fields + bob.fields; f != 1 {
		t.Errorf("the failback took %d typed fields: the flow name is typed once, at stop-writers", f)
	}

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
	runEveryStep(alice, "primary->dr", nil)
	if active := alice.see(`[data-testid="finished-active"]`); !strings.Contains(active, "DR") {
		t.Fatalf("after the failover the page says %q of the active side", active)
	}
	t.Logf("the failover took %d clicks and %d typed fields", alice.clicks+bob.clicks, alice.fields+bob.fields)
	return runURL
}
