package cli

import (
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The whole sandbox failover as two people do it in two browsers, in an
// 800 px window, with the sandbox exactly as `make run` starts it, as the
// README's tour goes: the primary goes down while both have the overview
// open; alice starts the failover from the incident view, bob learns from
// the navigation that a run waits for him and approves it, alice's page
// offers each step as it becomes possible, without a reload. Every click
// and typed field is counted: issue 31 measured 26 clicks and 7 typed
// fields before, and asks for at most 12 and 2. With
// DRCONSOLE_SCREENSHOTS=1 it writes the on-call page's screenshots.
func TestSandboxFailoverJourneyInTheBrowser(t *testing.T) {
	c := startDemoConsole(t)
	alice, bob := c.signIn(t, "alice"), c.signIn(t, "bob")

	// A calm moment first, as on any day before the outage: the flow OK
	// on the overview both have open.
	alice.open("/")
	bob.open("/")
	alice.see(`article[data-flow="primary->dr"] .status-OK`)

	// The outage, from the sandbox page (not part of the failover).
	alice.open("/demo")
	alice.do("take the primary down", chromedp.Click(chromedp.CSS("#primary-down")), chromedp.WaitVisible(chromedp.CSS("#primary-up")))
	alice.open("/")
	bob.open("/")

	// Alice: the incident leads the overview, and takes her to a plan.
	incident := `[data-testid="incident"][data-flow="primary->dr"]`
	alice.see(incident)
	if risk := alice.see(incident + ` [data-testid="incident-at-risk"]`); !strings.HasPrefix(risk, "≥ ") && !strings.HasPrefix(risk, "unknown") {
		t.Errorf("with the primary down the data at risk reads %q: not a lower bound", risk)
	}
	alice.screenshot("incident.png", incident)
	alice.click(`a[id="incident-failover-primary->dr"]`)
	alice.see(`[data-testid="plan-summary"]`)
	alice.click("#create-plan")
	alice.see(`[data-testid="run-status"]`)
	runURL := alice.location()

	// Bob: the overview he left open says a run waits for him.
	approveFromNav(bob, runURL)

	// Alice: each step as it becomes possible, on the page she left open.
	runEveryStep(alice, "primary->dr", func(step int) {
		if step == 2 {
			alice.screenshot("failover-checklist.png", "main")
		}
	})
	alice.see(`[data-testid="finished"]`)
	alice.screenshot("failover-finished.png", `[data-testid="finished"]`)
	t.Logf("the failover took %d clicks and %d typed fields (alice %d and %d, bob %d and %d)",
		alice.clicks+bob.clicks, alice.fields+bob.fields, alice.clicks, alice.fields, bob.clicks, bob.fields)
	if c, f := alice.clicks+bob.clicks, alice.fields+bob.fields; c > 12 || f > 2 {
		t.Errorf("the failover took %d clicks and %d typed fields: at most 12 and 2", c, f)
	}
	if active := alice.see(`[data-testid="finished-active"]`); !strings.Contains(active, "DR") {
		t.Errorf("after the failover the page says %q of the active side", active)
	}
	// The cut happened with the primary down: what it lost is a floor.
	if lost := alice.see("main"); !regexp.MustCompile(`Lost at the cut:? *(≥|unknown)`).MatchString(lost) {
		t.Errorf("the finished failover does not say what the cut lost as a floor:\n%.3000s", lost)
	}
}
