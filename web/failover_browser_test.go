package web_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/demo"
)

// The whole four-eyes failover in two browsers: operator A plans, cannot
// approve; operator B approves; A runs pre-flight, stops the mirror,
// translates a group and restores Flink, typing the flow name for each
// irreversible step; the audit page tells the story.
func TestBrowserFailoverFourEyes(t *testing.T) {
	c := startConsole(t)
	waitReady(t, c)
	t.Cleanup(func() { c.Sandbox.SetMirrorRunning(true) })
	a := newBrowser(t)
	signIn(t, a, c.URL+"/failover", "test-operator")
	// B gets a browser context of its own (own cookies) once the browser runs.
	b, cancelB := chromedp.NewContext(a, chromedp.WithNewBrowserContext())
	defer cancelB()
	err := chromedp.Do(a,
		chromedp.SetValue(chromedp.ID("groups"), "billing"),
		chromedp.Click(chromedp.ID("allow-partial")),
		chromedp.SetValue(chromedp.ID("flink-target"), "sandbox-flink-dr"),
		chromedp.SetValue(chromedp.ID("jar-id"), demo.FlinkJarID),
		chromedp.SetValue(chromedp.ID("savepoint"), "file:/savepoints/savepoint-events-1"),
		chromedp.SetValue(chromedp.ID("args"), "--bootstrap\nDR:9092"),
		chromedp.SendKeys(chromedp.ID("reason"), "drill: primary region lost"),
	)
	if err != nil {
		t.Fatalf("filling in the plan: %v; the page:\n%s", err, pageSays(a))
	}
	runURL := createPlan(t, a)
	// A cannot approve their own plan: no button, and the page says why.
	if note := text(t, a, `[data-testid="self-approval-note"]`); !strings.Contains(note, "different operator") {
		t.Fatalf("self-approval note %q", note)
	}
	if n := count(t, a, "#approve"); n != 0 {
		t.Fatal("the requester is offered an approve button")
	}

	signIn(t, b, runURL, "test-admin")
	if err := chromedp.Do(b, chromedp.SendKeys(chromedp.ID("approve-comment"), "checked lag and groups"),
		chromedp.Click(chromedp.ID("approve")), chromedp.WaitVisible(chromedp.CSS(`.flash`))); err != nil {
		t.Fatal(err)
	}
	if got := text(t, b, `[data-testid="approvals"]`); !strings.HasPrefix(got, "1 of 1") {
		t.Fatalf("approvals after B approved: %q", got)
	}

	runStepAs := func(a context.Context, n int, confirm, inputsOverride string) {
		t.Helper()
		id := func(p string) string { return "#" + p + "-" + string(rune('0'+n)) }
		if err := chromedp.Do(a, chromedp.Navigate(runURL), chromedp.WaitVisible(chromedp.CSS(id("execute")))); err != nil {
			t.Fatalf("step %d button: %v", n, err)
		}
		if confirm != "" {
			if err := chromedp.Do(a, chromedp.SendKeys(chromedp.CSS(id("confirm")), confirm)); err != nil {
				t.Fatal(err)
			}
		}
		if inputsOverride != "" {
			if err := chromedp.Do(a, chromedp.SendKeys(chromedp.CSS(id("inputs-override")), inputsOverride)); err != nil {
				t.Fatal(err)
			}
		}
		if err := chromedp.Do(a, chromedp.Click(chromedp.CSS(id("execute")))); err != nil {
			t.Fatal(err)
		}
		status := `[data-testid="step-status-` + string(rune('0'+n)) + `"]`
		deadline := time.Now().Add(60 * time.Second)
		for {
			got := text(t, a, status)
			if got == "done" {
				return
			}
			if got == "failed" || time.Now().After(deadline) {
				t.Fatalf("step %d: %q\n%s", n, got, text(t, a, "#live"))
			}
			time.Sleep(300 * time.Millisecond)
		}
	}
	runStep := func(n int, confirm string) { t.Helper(); runStepAs(a, n, confirm, "") }
	runStep(1, "")
	// A wrong typed confirmation is refused by the server.
	if err := chromedp.Do(a, chromedp.Navigate(runURL), chromedp.SendKeys(chromedp.ID("confirm-2"), "primary"),
		chromedp.Click(chromedp.ID("execute-2")), chromedp.WaitVisible(chromedp.CSS(`[data-testid="run-error"]`))); err != nil {
		t.Fatal(err)
	}
	if msg := text(t, a, `[data-testid="run-error"]`); !strings.Contains(msg, "typed confirmation does not match") {
		t.Fatalf("wrong confirmation: %q", msg)
	}
	// Dedicated-mode MM2: stopped by hand (the sandbox's control), then verified.
	if err := chromedp.Do(a, chromedp.Navigate(c.URL+"/demo"), chromedp.Click(chromedp.ID("mirror-stop")), chromedp.WaitVisible(chromedp.ID("mirror-start"))); err != nil {
		t.Fatal(err)
	}
	runStep(2, "primary->dr")
	// The flow name was typed at the mirror's stop, the run's point of no
	// return: the later steps do not ask again.
	if n := count(t, a, "#confirm-3"); n != 0 {
		t.Fatal("step 3 asks for the flow name again")
	}
	runStep(3, "")
	// The savepoint is not in the catalog: its verdict for a restore in DR
	// is unknown, so the restore is refused when it starts; only the
	// second operator may override that, typed and on record.
	if err := chromedp.Do(a, chromedp.Navigate(runURL),
		chromedp.Click(chromedp.ID("execute-4")), chromedp.WaitVisible(chromedp.CSS(`[data-testid="run-error"]`))); err != nil {
		t.Fatal(err)
	}
	if msg := text(t, a, `[data-testid="run-error"]`); !strings.Contains(msg, "savepoint is not in the catalog") {
		t.Fatalf("restore from a savepoint of unknown verdict: %q", msg)
	}
	runStepAs(b, 4, "", "drill savepoint, restored knowingly")
	// The page fetches its section again once the run changed: read the
	// status when it has settled.
	waitJS(t, b, "run status completed", `(document.querySelector('[data-testid="run-status"]')||{}).textContent?.trim() === "completed"`, 15*time.Second)
	if jobs := c.Flink.Jobs(); len(jobs) != 1 {
		t.Fatalf("Flink stand-in got %d jobs", len(jobs))
	}

	// The audit page has the whole story, in order.
	if err := chromedp.Do(a, chromedp.Navigate(c.URL+"/audit"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="audit-table"]`))); err != nil {
		t.Fatal(err)
	}
	table := text(t, a, `[data-testid="audit-table"]`)
	for _, want := range []string{"failover.plan", "failover.approve", "failover.step-start", "failover.step-done", "failover.completed", "test-admin", "test-operator"} {
		if !strings.Contains(table, want) {
			t.Errorf("audit page lacks %q", want)
		}
	}
}

// text reads an element's text; a read that races a page swap (htmx
// polling replaces #live) is retried.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	var err error
	for range 10 {
		var s string
		if s, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel))); err == nil {
			return strings.TrimSpace(s)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("reading %s: %v", sel, err)
	return ""
}

func count(t *testing.T, ctx context.Context, sel string) int {
	t.Helper()
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+"`"+sel+"`"+`).length`))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A planned Cluster Linking promote through the runbook: preview with the
// dry run, approval by another operator, typed confirmation, mirrors
// STOPPED. Then the way back, in the same two browsers on a console that
// knows the primary's REST API: the failback plan, its truncation count on
// the run page, the reverse flow on the overview while the primary
// mirrors DR, and DR's topics mirrors again at the end.
func TestBrowserClusterLinkPromoteAndFailback(t *testing.T) {
	t.Parallel() // a console of its own: not one of the shared one's serial tests
	c := ownConsole(t)
	waitReady(t, c)
	// Two whole runs, a failover and a failback, with steps of ~5 s each on a
	// loaded machine: 90 s, the other tests' bound on a hung browser, ran out
	// in the last step (100 s in all beside a soak).
	a := newBrowserFor(t, 3*time.Minute)
	signIn(t, a, c.URL+"/failover", "test-operator")
	b, cancelB := chromedp.NewContext(a, chromedp.WithNewBrowserContext())
	defer cancelB()
	if err := chromedp.Do(a,
		chromedp.SetValue(chromedp.ID("flow"), "link"),
		chromedp.SendKeys(chromedp.ID("reason"), "planned region move")); err != nil {
		t.Fatalf("filling in the plan: %v; the page:\n%s", err, pageSays(a))
	}
	runURL := createPlan(t, a)
	page := text(t, a, "#live")
	for _, want := range []string{"Promote the mirror topics of link " + demo.LinkName, "users (from users): ACTIVE, lag 0", "Dry run (validate_only) accepted by the cluster", "no translation"} {
		if !strings.Contains(page, want) {
			t.Errorf("run page lacks %q", want)
		}
	}
	signIn(t, b, runURL, "test-admin")
	if err := chromedp.Do(b, chromedp.Click(chromedp.ID("approve")), chromedp.WaitVisible(chromedp.CSS(`.flash`))); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		n       string
		confirm string
	}{{"1", ""}, {"2", "link"}} {
		if err := chromedp.Do(a, chromedp.Navigate(runURL), chromedp.WaitVisible(chromedp.ID("execute-"+step.n))); err != nil {
			t.Fatal(err)
		}
		if step.confirm != "" {
			if err := chromedp.Do(a, chromedp.SendKeys(chromedp.ID("confirm-"+step.n), step.confirm)); err != nil {
				t.Fatal(err)
			}
		}
		if err := chromedp.Do(a, chromedp.Click(chromedp.ID("execute-"+step.n))); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for text(t, a, `[data-testid="step-status-`+step.n+`"]`) != "done" {
			if time.Now().After(deadline) {
				t.Fatalf("step %s: %s", step.n, text(t, a, "#live"))
			}
			time.Sleep(300 * time.Millisecond)
		}
	}
	if m := c.Link.State().Mirrors[demo.LinkTopic]; m.Status != "STOPPED" {
		t.Fatalf("mirror %s after promote", m.Status)
	}

	// The failback, on a console configured with the primary's end of the link.
	v := serveVariant(t, c, func(cfg *config.Config) {
		cfg.Flows = slices.Clone(cfg.Flows)
		for i, f := range cfg.Flows {
			if f.Name == "link" {
				g, cl := *f, *f.ClusterLink
				cl.Primary = &config.ClusterLink{RestURL: c.Link.URL, ClusterID: demo.ClusterLinkSourceID, Link: cl.Link}
				g.ClusterLink = &cl
				cfg.Flows[i] = &g
			}
		}
	})
	c.Link.SetTruncatable(demo.LinkTopic, []int64{2, 0, 1})
	// The same host: both browsers' sessions hold on the second console too.
	if err := chromedp.Do(a, chromedp.Navigate(v.URL+"/failover"), chromedp.WaitVisible(chromedp.ID("failback")),
		chromedp.SetValue(chromedp.ID("flow"), "link"),
		chromedp.Click(chromedp.ID("failback")),
		chromedp.SendKeys(chromedp.ID("reason"), "the primary region is back")); err != nil {
		t.Fatalf("filling in the failback plan: %v; the page:\n%s", err, pageSays(a))
	}
	backURL := createPlan(t, a)
	page = text(t, a, "#live")
	for _, want := range []string{"truncate-and-restore", "3 record(s) the primary holds beyond DR's copy will be deleted", "reverse-and-start-mirror"} {
		if !strings.Contains(page, want) {
			t.Errorf("failback run page lacks %q:\n%s", want, page)
		}
	}
	if err := chromedp.Do(b, chromedp.Navigate(backURL), chromedp.Click(chromedp.ID("approve")), chromedp.WaitVisible(chromedp.CSS(`.flash`))); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 4; n++ {
		step := strconv.Itoa(n)
		began := time.Now()
		if err := chromedp.Do(a, chromedp.Navigate(backURL), chromedp.WaitVisible(chromedp.ID("execute-"+step))); err != nil {
			t.Fatal(err)
		}
		// The flow name is typed at the truncation of the primary (1) and
		// at stop-writers (3), where the operators commit; not elsewhere.
		if asked := n == 1 || n == 3; asked != (count(t, a, "#confirm-"+step) == 1) {
			t.Fatalf("failback step %s: typed confirmation asked %v, want %v", step, !asked, asked)
		} else if asked {
			if err := chromedp.Do(a, chromedp.SendKeys(chromedp.ID("confirm-"+step), "link")); err != nil {
				t.Fatal(err)
			}
		}
		if err := chromedp.Do(a, chromedp.Click(chromedp.ID("execute-"+step))); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for text(t, a, `[data-testid="step-status-`+step+`"]`) != "done" {
			if time.Now().After(deadline) {
				t.Fatalf("failback step %s: %s", step, text(t, a, "#live"))
			}
			time.Sleep(300 * time.Millisecond)
		}
		t.Logf("failback step %s done in %s", step, time.Since(began).Round(time.Millisecond))
		if n == 1 { // the primary mirrors DR: its reverse flow is on the overview
			if err := chromedp.Do(a, chromedp.Navigate(v.URL+"/"), chromedp.WaitVisible(chromedp.CSS("main"))); err != nil {
				t.Fatal(err)
			}
			if overview := text(t, a, "main"); !strings.Contains(overview, "link~reverse") {
				t.Errorf("the overview during the failback lacks the reverse flow:\n%s", overview)
			}
		}
	}
	if got := text(t, a, `[data-testid="run-status"]`); got != "completed" {
		t.Fatalf("failback run %q", got)
	}
	st := c.Link.State()
	if m := st.Mirrors[demo.LinkTopic]; m.Status != "ACTIVE" || len(st.RemoteMirrors) != 0 {
		t.Fatalf("after the failback: DR's mirror %s, the primary's %v", m.Status, st.RemoteMirrors)
	}
	if err := chromedp.Do(a, chromedp.Navigate(v.URL+"/"), chromedp.WaitVisible(chromedp.CSS("main"))); err != nil {
		t.Fatal(err)
	}
	if overview := text(t, a, "main"); strings.Contains(overview, "link~reverse") {
		t.Errorf("the reverse flow is still on the overview after the failback")
	}
	// Leave the overview: its event stream would hold the second console's
	// server open at its close.
	if err := chromedp.Do(a, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
}
