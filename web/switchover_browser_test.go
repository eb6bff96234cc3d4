package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/demo"
	_ "github.com/drconsole/drconsole/runbook/switchover" // the console's binary registers it (cli)
)

// switchoverConsole is a console of its own whose flow has a switchover
// with an ACL fence for principals.
func switchoverConsole(t *testing.T, principals ...string) *console {
	return ownConsole(t, func(cfg *config.Config) {
		cfg.Flows[0].Switchover = &config.Switchover{Fence: config.FenceACL, Principals: principals,
			QuietPeriod: config.Duration(2 * time.Second), CatchUpTimeout: config.Duration(30 * time.Second)}
	})
}

// planSwitchover plans a switchover as A from the plan form and has B
// approve it; it returns the run page's address.
func planSwitchover(t *testing.T, c *console, a, b context.Context, reason string) string {
	t.Helper()
	signIn(t, a, c.URL+"/failover", "test-operator")
	if err := chromedp.Do(a,
		chromedp.Click(chromedp.ID("switchover")),
		chromedp.SetValue(chromedp.ID("groups"), "billing"),
		chromedp.SendKeys(chromedp.ID("reason"), reason),
	); err != nil {
		t.Fatalf("filling in the switchover: %v; the page:\n%s", err, pageSays(a))
	}
	runURL := createPlan(t, a)
	if h := text(t, a, "h1"); !strings.HasPrefix(h, "Planned switchover of primary->dr") {
		t.Fatalf("run page heading %q", h)
	}
	signIn(t, b, runURL, "test-admin")
	if err := chromedp.Do(b, chromedp.SendKeys(chromedp.ID("approve-comment"), "fence and wait, then cut"),
		chromedp.Click(chromedp.ID("approve")), chromedp.WaitVisible(chromedp.CSS(`.flash`))); err != nil {
		t.Fatal(err)
	}
	return runURL
}

// executeStep runs step n (1-based) on the run page, typing confirm when
// given, and returns its status once it is done or failed.
func executeStep(t *testing.T, ctx context.Context, runURL string, n int, confirm string) string {
	t.Helper()
	id := func(p string) string { return "#" + p + "-" + string(rune('0'+n)) }
	if err := chromedp.Do(ctx, chromedp.Navigate(runURL), chromedp.WaitVisible(chromedp.CSS(id("execute")))); err != nil {
		t.Fatalf("step %d button: %v", n, err)
	}
	if confirm != "" {
		if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(id("confirm")), confirm)); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(id("execute")))); err != nil {
		t.Fatal(err)
	}
	status := `[data-testid="step-status-` + string(rune('0'+n)) + `"]`
	deadline := time.Now().Add(60 * time.Second)
	for {
		if got := text(t, ctx, status); got == "done" || got == "failed" {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("step %d: %q\n%s", n, text(t, ctx, status), text(t, ctx, "#live"))
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// A fence that misses the sandbox's writer: verify-fence fails naming
// what moved, the run page offers the rollback, and the rollback removes
// the fence and cancels the run, on record.
func TestBrowserSwitchoverBypassRollback(t *testing.T) {
	t.Parallel()
	c := switchoverConsole(t, "User:not-the-writer")
	waitReady(t, c)
	a := newBrowserFor(t, 5*time.Minute) // a whole journey with quiet periods: slow on a loaded machine
	b, cancelB := chromedp.NewContext(a, chromedp.WithNewBrowserContext())
	defer cancelB()
	runURL := planSwitchover(t, c, a, b, "region exercise, fence misses the writer")
	if got := executeStep(t, a, runURL, 1, "primary->dr"); got != "done" {
		t.Fatalf("fence: %s\n%s", got, text(t, a, "#live"))
	}
	// The run page as it is once the step's end has reached it.
	if err := chromedp.Do(a, chromedp.Navigate(runURL)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, a, "the rollback offered once the fence is up", `document.querySelectorAll('[data-testid="rollback"]').length > 0`, 30*time.Second)
	if n := count(t, a, `[data-testid="rollback"]`); n != 1 {
		t.Fatalf("%d rollback buttons once the fence is up", n)
	}
	if got := executeStep(t, a, runURL, 2, ""); got != "failed" {
		t.Fatalf("verify-fence with a writer going on: %s", got)
	}
	if err := chromedp.Do(a, chromedp.Navigate(runURL), chromedp.WaitVisible(chromedp.ID("rollback"))); err != nil {
		t.Fatal(err)
	}
	if live := text(t, a, "#live"); !strings.Contains(live, "the fence does not hold") || !strings.Contains(live, "record(s)") {
		t.Fatalf("the failed step does not say what moved:\n%s", live)
	}
	if err := chromedp.Do(a, chromedp.SendKeys(chromedp.ID("rollback-reason"), "a writer bypasses the fence"),
		chromedp.Click(chromedp.ID("rollback")), chromedp.WaitVisible(chromedp.CSS(`.flash`))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, a, "run status cancelled", `(document.querySelector('[data-testid="run-status"]')||{}).textContent?.trim() === "cancelled"`, 15*time.Second)
	if err := chromedp.Do(a, chromedp.Navigate(c.URL+"/audit"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="audit-table"]`))); err != nil {
		t.Fatal(err)
	}
	table := text(t, a, `[data-testid="audit-table"]`)
	for _, want := range []string{"failover.rollback", "failover.rollback-done", "failover.cancel"} {
		if !strings.Contains(table, want) {
			t.Errorf("audit page lacks %q", want)
		}
	}
}

// The clean switchover in the browser: the fence denies the sandbox's
// writer, DR catches up, the mirror stops, the group moves, and the run
// page states RPO 0, verified.
func TestBrowserSwitchoverVerified(t *testing.T) {
	t.Parallel()
	c := switchoverConsole(t, demo.WriterPrincipal)
	waitReady(t, c)
	a := newBrowserFor(t, 5*time.Minute) // a whole journey with quiet periods: slow on a loaded machine
	b, cancelB := chromedp.NewContext(a, chromedp.WithNewBrowserContext())
	defer cancelB()
	runURL := planSwitchover(t, c, a, b, "region evacuation")
	if got := executeStep(t, a, runURL, 1, "primary->dr"); got != "done" {
		t.Fatalf("fence: %s", got)
	}
	// The fence may cut a sandbox transaction short: its abort marker then
	// moves an end once; the operator runs the check again.
	got := ""
	for range 3 {
		if got = executeStep(t, a, runURL, 2, ""); got == "done" {
			break
		}
	}
	if got != "done" {
		t.Fatalf("verify-fence: %s\n%s", got, text(t, a, "#live"))
	}
	if got := executeStep(t, a, runURL, 3, ""); got != "done" {
		t.Fatalf("wait-caught-up: %s\n%s", got, text(t, a, "#live"))
	}
	// Dedicated-mode MM2: stopped by hand (the sandbox's control) once DR
	// caught up, then verified by the stop step.
	if err := chromedp.Do(a, chromedp.Navigate(c.URL+"/demo"), chromedp.Click(chromedp.ID("mirror-stop")), chromedp.WaitVisible(chromedp.ID("mirror-start"))); err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		n       int
		confirm string
	}{{4, "primary->dr"}, {5, ""}, {6, ""}, {7, ""}} {
		if got := executeStep(t, a, runURL, s.n, s.confirm); got != "done" {
			t.Fatalf("step %d: %s\n%s", s.n, got, text(t, a, "#live"))
		}
	}
	waitJS(t, a, "run status completed", `(document.querySelector('[data-testid="run-status"]')||{}).textContent?.trim() === "completed"`, 15*time.Second)
	if err := chromedp.Do(a, chromedp.Navigate(runURL), chromedp.WaitVisible(chromedp.CSS(`[data-testid="switchover-verdict"]`))); err != nil {
		t.Fatal(err)
	}
	if v := text(t, a, `[data-testid="switchover-verdict"]`); !strings.HasPrefix(v, "RPO 0, verified: DR held every record up to the fence") {
		t.Fatalf("verdict %q", v)
	}
}
