package web_test

import (
	"context"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/demo"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/views"
)

// Issue 31: a finished failover's "Plan the failback" opens the plan form
// filled with what the console knows of it: the flow, failback ticked, the
// groups it moved, the Flink part (the DR target and the job it restored,
// the only primary target and its only jar, a new directory for the copy)
// and a reason naming the run. A run that is not the finished failover DR
// is active from opens the plain form.
func TestFinishedFailoverOpensAFilledFailback(t *testing.T) {
	t.Parallel() // a console of its own: not one of the shared one's serial tests
	c := ownConsole(t, func(cfg *config.Config) {
		cfg.FlinkTargets = append(cfg.FlinkTargets, &config.FlinkTarget{Name: "sandbox-flink-primary", RestURL: cfg.FlinkTargets[0].RestURL, Region: "primary"})
	})
	waitReady(t, c)
	ctx := context.Background()
	alice, bob := runbook.Actor{Name: "test-operator", Role: "operator"}, runbook.Actor{Name: "test-admin", Role: "admin"}
	id, err := c.Runbook.Create(ctx, alice, runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{
		{Kind: failover.KindStopMirror},
		{Kind: failover.KindTranslateGroup, Group: "billing"},
		{Kind: failover.KindRestoreFlink, FlinkTarget: "sandbox-flink-dr", JarID: demo.FlinkJarID},
	}}, "primary lost")
	if err != nil {
		t.Fatal(err)
	}
	prefill := strings.TrimSuffix(views.FailbackPlanPath(id), "#plan-form")
	plain := func(why string, run int64) {
		t.Helper()
		_, page := getAs(t, c, "operator", strings.TrimSuffix(views.FailbackPlanPath(run), "#plan-form"), nil)
		if strings.Contains(page, "Failback after failover run") || regexp.MustCompile(`name="(failback|group_pick)" value="[^"]*" checked`).MatchString(page) {
			t.Errorf("%s: the form is filled:\n%s", why, page)
		}
	}
	plain("a pending failover", id)

	run, _ := c.Runbook.Get(ctx, id)
	if err := c.Runbook.Approve(ctx, bob, id, run.PlanHash, ""); err != nil {
		t.Fatal(err)
	}
	c.Sandbox.SetMirrorRunning(false) // dedicated MM2: stopped by hand, then verified
	for idx, confirm := range []string{"primary->dr", "", ""} {
		x, err := c.Runbook.Begin(ctx, alice, id, idx, confirm, "")
		if err != nil {
			t.Fatalf("step %d: %v", idx+1, err)
		}
		if err := x.Perform(ctx); err != nil {
			t.Fatalf("step %d: %v", idx+1, err)
		}
	}
	run, _ = c.Runbook.Get(ctx, id)
	if run.Status != model.RunCompleted {
		t.Fatalf("failover run %s", run.Status)
	}
	var job string
	for _, s := range run.Steps {
		if s.Idx == 2 {
			m := regexp.MustCompile(`"job_id":"([0-9a-f]{32})"`).FindStringSubmatch(s.Result)
			if m == nil {
				t.Fatalf("restore result %s", s.Result)
			}
			job = m[1]
		}
	}

	_, runPage := getAs(t, c, "operator", fmt.Sprintf("/failover/%d", id), nil)
	if !strings.Contains(runPage, `href="`+strings.ReplaceAll(views.FailbackPlanPath(id), "&", "&amp;")+`"`) {
		t.Errorf("the finished run's page does not link to its failback's form:\n%s", runPage)
	}
	_, page := getAs(t, c, "operator", prefill, nil)
	checked := func(name, value string) bool {
		return regexp.MustCompile(`<input[^>]*name="` + name + `"[^>]*value="` + regexp.QuoteMeta(value) + `"[^>]*checked`).MatchString(page)
	}
	selected := func(name, value string) bool {
		return regexp.MustCompile(`(?s)<select[^>]*name="` + name + `"[^>]*>(?:(?:[^<]|<option[^>]*>[^<]*</option>)*?)<option value="` + regexp.QuoteMeta(html.EscapeString(value)) + `" selected`).MatchString(page)
	}
	typed := func(name, value string) bool {
		return regexp.MustCompile(`<input[^>]*name="` + name + `"[^>]*value="` + regexp.QuoteMeta(value) + `"`).MatchString(page)
	}
	for _, c := range []struct {
		what string
		ok   bool
	}{
		{"the flow", selected("flow", "primary->dr")},
		{"failback ticked", checked("failback", "1")},
		{"the group moved", checked("group_pick", "billing")},
		{"no group the run did not move", !checked("group_pick", "flink-events")},
		{"the DR target", selected("failback_dr_target", "sandbox-flink-dr")},
		{"the job restored, " + job, typed("failback_dr_job", job)},
		{"the only primary target", selected("failback_flink_target", "sandbox-flink-primary")},
		{"its only jar", typed("failback_jar_id", demo.FlinkJarID)},
		{"a new directory for the copy", regexp.MustCompile(`name="failback_rewrite_to"[^>]*value="file:/[^"]*/failback-run-` + fmt.Sprint(id) + `"`).MatchString(page)},
		{"the reason", strings.Contains(page, fmt.Sprintf("Failback after failover run %d", id))},
	} {
		if !c.ok {
			t.Errorf("the failback form lacks %s", c.what)
		}
	}
	if t.Failed() {
		t.Logf("form:\n%s", page)
	}
	plain(fmt.Sprintf("run %d, which does not exist", id+1), id+1)
	// A later failover: DR is active from it, not from the first one.
	later, err := c.Runbook.Create(ctx, alice, runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: failover.KindStopMirror}}}, "again")
	if err != nil {
		t.Fatal(err)
	}
	run, _ = c.Runbook.Get(ctx, later)
	if err := c.Runbook.Approve(ctx, bob, later, run.PlanHash, ""); err != nil {
		t.Fatal(err)
	}
	x, err := c.Runbook.Begin(ctx, alice, later, 0, "primary->dr", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Perform(ctx); err != nil {
		t.Fatal(err)
	}
	plain("the failover before the latest", id)
}
