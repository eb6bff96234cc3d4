package web_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/drconsole/drconsole/demo"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
)

// An operator plans by picking, not typing: filters the groups to
// "bill", reaches billing from the filter with the arrow key and ticks
// it with Space; chooses the DR Flink cluster,
// whose jars then load; picks the jar and a catalog savepoint; sees the
// summary say so; and the plan created has exactly those steps.
func TestBrowserPlanPickers(t *testing.T) {
	c := startConsole(t)
	waitReady(t, c)
	ctx := context.Background()
	ms := time.Now().UnixMilli()
	spPath := fmt.Sprintf("file:/savepoints/picked-%d", ms)
	if _, err := c.Store.UpsertSavepoint(ctx, model.Savepoint{Path: spPath, Kind: model.KindSavepoint, Origin: model.OriginManual,
		Status: model.SavepointCompleted, CompletedMs: &ms, JobName: "events"}, ms); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, body := getAs(t, c, "operator", "/failover", nil); !strings.Contains(body, `data-name="billing"`); _, body = getAs(t, c, "operator", "/failover", nil) {
		if time.Now().After(deadline) {
			t.Fatal("billing not offered by the group picker after 30 s")
		}
		time.Sleep(500 * time.Millisecond)
	}

	b := newBrowser(t)
	signIn(t, b, c.URL+"/failover", "test-operator")
	d := planFormDriver{t: t, b: b, dump: `(document.activeElement ? document.activeElement.outerHTML : "no focus") + " | " + location.href + " | " + document.getElementById("group-list").outerHTML`}
	choose := d.choose
	wait := func(what, js string) { t.Helper(); d.wait(what, js, 15*time.Second) }
	err := chromedp.Do(b,
		chromedp.WaitVisible(chromedp.ID("group-filter")), // shown by app.js
		chromedp.SendKeys(chromedp.ID("group-filter"), "bill"))
	if err != nil {
		t.Fatal(err)
	}
	wait("the filter to hide flink-events", `document.querySelector('li[data-name="flink-events"]').hidden && !document.querySelector('li[data-name="billing"]').hidden`)
	err = chromedp.Do(b,
		// ArrowDown, not Enter: DevTools sends Enter's character apart from
		// its keydown, so the page's preventDefault cannot stop it as it
		// does a real key press, and it would reach the checkbox.
		chromedp.KeyEvent(kb.ArrowDown),
	)
	if err != nil {
		t.Fatal(err)
	}
	wait("focus on billing after ArrowDown in the filter", `document.activeElement && document.activeElement.value === "billing"`)
	jarPick := demo.FlinkJarID + "|" + demo.FlinkEntryClass
	if err := chromedp.Do(b, chromedp.KeyEvent(" ")); err != nil {
		t.Fatal(err)
	}
	choose("flink-target", "sandbox-flink-dr")
	wait("the DR target's jars", `!!document.querySelector('#jar-pick option[value=`+strconv.Quote(jarPick)+`]')`)
	choose("jar-pick", jarPick)
	choose("savepoint-pick", spPath)
	if err := chromedp.Do(b, chromedp.SendKeys(chromedp.ID("reason"), "drill: picked, not typed")); err != nil {
		t.Fatal(err)
	}
	wait("the summary of the picks", `(function(){const s = document.querySelector('[data-testid="plan-summary"]').innerText;
		return s.includes("Translate consumer group billing") && !s.includes("flink-events") && s.includes(`+strconv.Quote(demo.FlinkEntryClass)+`) &&
			s.includes(`+strconv.Quote(spPath)+`) && !s.includes("would be refused");})()`)
	run := d.create(c)
	var groups []string
	var restore *runbook.Step
	for i, st := range run.Plan.Steps {
		switch st.Kind {
		case failover.KindTranslateGroup:
			groups = append(groups, st.Group)
		case failover.KindRestoreFlink:
			restore = &run.Plan.Steps[i]
		}
	}
	if strings.Join(groups, ",") != "billing" || restore == nil || restore.FlinkTarget != "sandbox-flink-dr" || restore.JarID != demo.FlinkJarID ||
		restore.EntryClass != demo.FlinkEntryClass || restore.SavepointPath != spPath {
		t.Fatalf("planned groups %q, restore %+v", groups, restore)
	}
	if run.Reason != "drill: picked, not typed" {
		t.Fatalf("reason %q", run.Reason)
	}
}
