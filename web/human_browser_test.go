package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/demo"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
)

// Forms on live pages, filled in at human speed (humanType): what the
// operator typed must survive the page's updates, including one caused by
// another operator's action while they type, and the action must succeed.

// onPendingRun plans a one-step pre-flight run requested by test-operator
// on the console at base (its runbook rb), opens the run page as user,
// types text into field while another operator approves over HTTP (the
// page's state changes underneath), thinks, checks the field and presses
// button. It returns the browser and the run.
func onPendingRun(t *testing.T, c *console, base string, rb *runbook.Runbook, user, field, text, button string) (context.Context, int64) {
	t.Helper()
	bg := context.Background()
	id, err := rb.Create(bg, runbook.Actor{Name: "test-operator", Role: "operator"},
		runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: failover.KindPreflight}}}, "human-speed "+button)
	if err != nil {
		t.Fatal(err)
	}
	run, err := rb.Get(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	_, other := extraOperator(t, c)
	ctx := newBrowser(t)
	signIn(t, ctx, fmt.Sprintf("%s/failover/%d", base, id), user)
	humanType(t, ctx, field, text, approveOverHTTP(t, base, other, id, run.PlanHash))
	thinkThenCheck(t, ctx, map[string]string{field: text})
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID(button))); err != nil {
		t.Fatal(err)
	}
	return ctx, id
}

// approveOverHTTP is another operator approving through the console while
// the browser's user types.
func approveOverHTTP(t *testing.T, base string, cookie *http.Cookie, id int64, hash string) func() {
	return func() {
		if code := postWith(t, base, fmt.Sprintf("/failover/%d/approve", id), cookie, url.Values{"plan_hash": {hash}, "comment": {"seen"}}); code >= 400 {
			t.Errorf("the other operator's approval: HTTP %d", code)
		}
	}
}

func TestHumanApproveCommentOnLiveRunPage(t *testing.T) {
	t.Parallel()
	c := startConsole(t)
	waitReady(t, c)
	const comment = "checked lag and groups"
	ctx, _ := onPendingRun(t, c, c.URL, c.Runbook, "test-admin", "#approve-comment", comment, "approve")
	waitText(t, ctx, "#live", 10*time.Second, func(s string) bool { return strings.Contains(s, "test-admin approved") && strings.Contains(s, comment) })
}

func TestHumanRejectReasonOnLiveRunPage(t *testing.T) {
	t.Parallel()
	c := startConsole(t)
	waitReady(t, c)
	const reason = "wrong flow, DR is behind"
	ctx, _ := onPendingRun(t, c, c.URL, c.Runbook, "test-admin", "#reject-reason", reason, "reject")
	waitText(t, ctx, `[data-testid="run-status"]`, 10*time.Second, func(s string) bool { return s == "rejected" })
	if page := text(t, ctx, "#live"); !strings.Contains(page, reason) {
		t.Fatalf("the rejection's reason is not shown: %s", page)
	}
}

// Break-glass needs its own settings (failover.break_glass, and two
// approvals so that one approval arriving while the requester types
// leaves the run pending and the break-glass form in place).
func TestHumanBreakGlassReasonOnLiveRunPage(t *testing.T) {
	t.Parallel()
	c := startConsole(t)
	waitReady(t, c)
	v := serveVariant(t, c, func(cfg *config.Config) { cfg.Failover.BreakGlass = true; cfg.Failover.ApprovalsRequired = 2 })
	const reason = "primary region gone, no one else awake"
	ctx, id := onPendingRun(t, c, v.URL, v.Runbook, "test-operator", "#bg-reason", reason, "break-glass")
	waitText(t, ctx, "#live", 10*time.Second, func(s string) bool { return strings.Contains(s, "BREAK-GLASS") && strings.Contains(s, reason) })
	if run, err := v.Runbook.Get(context.Background(), id); err != nil || run.BreakGlass != reason {
		t.Fatalf("run after break-glass: %q %v", run.BreakGlass, err)
	}
}

// The execute form of an irreversible step: the typed flow name and an
// override reason, while a further approval arrives.
func TestHumanExecuteFormOnLiveRunPage(t *testing.T) {
	t.Parallel()
	c := startConsole(t)
	waitReady(t, c)
	ctx0 := context.Background()
	id, err := c.Runbook.Create(ctx0, runbook.Actor{Name: "test-admin", Role: "admin"},
		runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: failover.KindTranslateGroup, Group: "billing", AllowPartial: true}}}, "human-speed execute")
	if err != nil {
		t.Fatal(err)
	}
	run, _ := c.Runbook.Get(ctx0, id)
	if err := c.Runbook.Approve(ctx0, runbook.Actor{Name: "test-operator", Role: "operator"}, id, run.PlanHash, "ok"); err != nil {
		t.Fatal(err)
	}
	_, other := extraOperator(t, c)
	ctx := newBrowser(t)
	signIn(t, ctx, fmt.Sprintf("%s/failover/%d", c.URL, id), "test-operator")
	const override = "drill: rules checked by hand"
	humanType(t, ctx, "#confirm-1", "primary->dr", nil)
	humanType(t, ctx, "#override-1", override, approveOverHTTP(t, c.URL, other, id, run.PlanHash))
	thinkThenCheck(t, ctx, map[string]string{"#confirm-1": "primary->dr", "#override-1": override})
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("execute-1"))); err != nil {
		t.Fatal(err)
	}
	// The step ran (on record), and the open page shows it by itself.
	deadline := time.Now().Add(30 * time.Second)
	for {
		run, err := c.Runbook.Get(ctx0, id)
		if err != nil {
			t.Fatal(err)
		}
		if st := run.Steps[0].Status; st == "done" {
			break
		} else if st == "failed" || time.Now().After(deadline) {
			t.Fatalf("step 1 %s: %s", st, run.Steps[0].Error)
		}
		time.Sleep(300 * time.Millisecond)
	}
	waitText(t, ctx, `[data-testid="step-status-1"]`, 10*time.Second, func(s string) bool { return s == "done" })
}

// A savepoint from the trigger form, against a Flink stand-in of its own,
// while another savepoint is in progress (the progress block is pushed):
// what is typed survives the updates, and the job keeps running (no stop
// is offered: only an approved runbook ends a job).
func TestHumanSavepointTriggerForm(t *testing.T) {
	t.Parallel()
	c := startConsole(t)
	fl, err := demo.StartFlinkStandIn()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fl.Close)
	fl.SetSavepointDuration(8 * time.Second)
	v := serveVariant(t, c, func(cfg *config.Config) {
		cfg.FlinkTargets = []*config.FlinkTarget{{Name: "human-flink", RestURL: fl.URL, Region: "dr"}}
		cfg.SavepointDirs = []string{fl.SavepointDir}
	})
	ctx := newBrowser(t)
	signIn(t, ctx, v.URL+"/savepoints", "test-operator")
	// Someone else takes a plain savepoint of the job: in progress while
	// this operator fills the form in.
	if code := postWith(t, v.URL, "/savepoints/trigger", sessionCookie(t, c, "admin"), url.Values{"target": {"human-flink"}, "job": {demo.FlinkSandboxJobID}}); code != http.StatusSeeOther {
		t.Fatalf("the other trigger: HTTP %d", code)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(v.URL+"/savepoints"), chromedp.WaitVisible(chromedp.ID("sp-job"))); err != nil {
		t.Fatal(err)
	}
	humanPick(t, ctx, "#sp-target", "human-flink")
	if tag, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#sp-job").tagName`)); tag == "SELECT" {
		humanPick(t, ctx, "#sp-job", demo.FlinkSandboxJobID)
	} else {
		humanType(t, ctx, "#sp-job", demo.FlinkSandboxJobID, nil)
	}
	thinkThenCheck(t, ctx, map[string]string{"#sp-job": demo.FlinkSandboxJobID})
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#sp-stop, [name=stop]").length`)); n != 0 {
		t.Fatal("the form offers stop-with-savepoint")
	}
	// The other savepoint may still be in progress: one per job at a time.
	waitText(t, ctx, `[data-testid="sp-progress"]`, 30*time.Second, func(s string) bool { return strings.Count(s, "done in") == 1 })
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("sp-trigger"))); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, `[data-testid="sp-progress"]`, 30*time.Second, func(s string) bool {
		return strings.Contains(s, "test-operator") && strings.Count(s, "done in") == 2
	})
	if st := fl.JobState(demo.FlinkSandboxJobID); st != "RUNNING" {
		t.Fatalf("job %s after a plain savepoint: %s", demo.FlinkSandboxJobID, st)
	}
}

// The translation form: a group, then offsets typed as JSON.
func TestHumanTranslateForm(t *testing.T) {
	t.Parallel()
	c := startConsole(t)
	waitReady(t, c)
	ctx := newBrowser(t)
	signIn(t, ctx, c.URL+"/translate", "test-operator")
	humanType(t, ctx, "#group", "billing", nil)
	thinkThenCheck(t, ctx, map[string]string{"#group": "billing"})
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("translate-go"))); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, `[data-testid="translate-result"]`, 15*time.Second, func(s string) bool { return s != "" })

	if err := chromedp.Do(ctx, chromedp.Navigate(c.URL+"/translate"), chromedp.Click(chromedp.ID("src-offsets"))); err != nil {
		t.Fatal(err)
	}
	const offsets = `{"events-0": 1}`
	humanType(t, ctx, "#offsets", offsets, nil)
	thinkThenCheck(t, ctx, map[string]string{"#offsets": offsets})
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("translate-go"))); err != nil {
		t.Fatal(err)
	}
	got := waitText(t, ctx, `[data-testid="translate-result"]`, 15*time.Second, func(s string) bool { return s != "" })
	if !strings.Contains(got, "events") {
		t.Fatalf("translation of typed offsets: %s", got)
	}
}

// An admin adds a user, typing name and password twice at human speed.
func TestHumanAddUserForm(t *testing.T) {
	t.Parallel()
	c := startConsole(t)
	ctx := newBrowser(t)
	signIn(t, ctx, c.URL+"/admin/users", "test-admin")
	name := fmt.Sprintf("night-op-%d", time.Now().UnixNano()%100000)
	const pw = "correct horse battery"
	humanType(t, ctx, "#add-name", name, nil)
	humanPick(t, ctx, "#add-role", "operator")
	humanType(t, ctx, "#add-password", pw, nil)
	humanType(t, ctx, "#add-password2", pw, nil)
	thinkThenCheck(t, ctx, map[string]string{"#add-name": name, "#add-password": pw, "#add-password2": pw})
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("add-user-submit"))); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, `[data-testid="users-table"]`, 10*time.Second, func(s string) bool { return strings.Contains(s, name) })
	if u, err := c.Store.UserByName(context.Background(), name); err != nil || u.Role != "operator" {
		t.Fatalf("user %s: %+v %v", name, u, err)
	}
}
