package web_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/drconsole/drconsole/demo"
	"github.com/drconsole/drconsole/flink/rewritetest"
	"github.com/drconsole/drconsole/runbook/failover"
)

// The plan form with the rewritten-savepoint strategy, by keyboard: the
// operator picks a catalog savepoint, then the strategy (Space on its
// radio); the partitions without a translation appear, each with a choice
// made with the arrow keys (and a typed time for the timestamp); the
// summary shows the strategies judged for the savepoint (the rewrite
// recommended once every partition is chosen) and the rewrite's preview;
// the plan created rewrites with those choices, recorded as the
// operator's, and restores the copy without allowNonRestoredState.
func TestBrowserPlanRewriteStrategy(t *testing.T) {
	c := startConsole(t)
	waitReady(t, c)
	ctx := context.Background()

	// The source: a real Flink 2.2.1 savepoint of orders and users, with
	// users renamed clicks, a topic the sandbox does not mirror: its three
	// partitions never translate.
	const fixture = "../flink/testdata/savepoints/flink-2.2.1-p1-orders2-users3-stop"
	src := filepath.Join(c.Flink.SavepointDir, fmt.Sprintf("rewrite-src-%d", time.Now().UnixNano()))
	rewritetest.RenamedCopy(t, fixture, src, "orders-users-source", map[string]string{"users": "clicks"})
	if _, err := c.Catalog.Register(ctx, src); err != nil {
		t.Fatal(err)
	}
	spPath := "file:" + filepath.ToSlash(src)

	b := newBrowser(t)
	signIn(t, b, c.URL+"/failover", "test-operator")
	d := planFormDriver{t: t, b: b, dump: `document.getElementById("rewrite-choices").outerHTML`}
	choose := d.choose
	wait := func(what, js string) { t.Helper(); d.wait(what, js, 20*time.Second) }
	choose("flink-target", "sandbox-flink-dr")
	if err := chromedp.Do(b, chromedp.SendKeys(chromedp.ID("jar-id"), demo.FlinkJarID)); err != nil {
		t.Fatal(err)
	}
	choose("savepoint-pick", spPath)
	wait("the strategies judged for the savepoint", `!!document.querySelector('[data-testid="plan-strategies"] li[data-n="4"]')`)

	// Space on the focused radio picks the rewrite.
	if err := chromedp.Do(b, chromedp.Focus(chromedp.ID("strategy-rewrite")), chromedp.KeyEvent(" ")); err != nil {
		t.Fatal(err)
	}
	row := func(key string) string {
		return `document.querySelector('[data-testid="rewrite-choice"][data-key="` + key + `"]')`
	}
	wait("the partitions needing a choice", `!!(`+row("clicks-0")+` && `+row("clicks-1")+` && `+row("clicks-2")+`)`)
	// Arrow keys on each focused select: earliest is one down, latest two,
	// timestamp three.
	for key, downs := range map[string]int{"clicks-0": 1, "clicks-1": 2, "clicks-2": 3} {
		id, err := chromedp.Run(b, chromedp.Evaluate[string](row(key)+`.querySelector("select").id`))
		if err != nil {
			t.Fatal(err)
		}
		acts := []chromedp.Action[chromedp.Void]{chromedp.Focus(chromedp.ID(id))}
		for range downs {
			acts = append(acts, chromedp.KeyEvent(kb.ArrowDown))
		}
		if err := chromedp.Do(b, acts...); err != nil {
			t.Fatal(err)
		}
	}
	atID, err := chromedp.Run(b, chromedp.Evaluate[string](row("clicks-2")+`.querySelector("input").id`))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(b, chromedp.SendKeys(chromedp.ID(atID), "2026-12-01T07:00:00Z"+kb.Tab)); err != nil {
		t.Fatal(err)
	}
	// orders may lack a translation in a sandbox that just started: those
	// rows, if any, start at the earliest too.
	others, err := chromedp.Run(b, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="rewrite-choice"]')].map(p => p.dataset.key).filter(k => !k.startsWith("clicks-"))`))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range others {
		id, _ := chromedp.Run(b, chromedp.Evaluate[string](row(key)+`.querySelector("select").id`))
		choose(id, "earliest")
	}
	wait("the rewrite's preview and recommendation", `(function(){const s = document.querySelector('[data-testid="plan-summary"]').innerText;
		const rec = document.querySelector('[data-testid="plan-strategies"] li[data-n="4"]');
		return rec && rec.dataset.recommended === "true" && s.includes("The rewrite, previewed now") &&
			s.includes("clicks-0 (subtask 0) primary 200 → clicks-0 earliest: earliest (chosen by test-operator") &&
			s.includes("clicks-1 (subtask 0) primary 270 → clicks-1 latest") && s.includes("clicks-2") &&
			s.includes("Rewrite savepoint `+spPath+`") && !s.includes("would be refused");})()`)
	if err := chromedp.Do(b, chromedp.SendKeys(chromedp.ID("reason"), "drill: rewritten savepoint")); err != nil {
		t.Fatal(err)
	}
	run := d.create(c)
	steps := run.Plan.Steps
	rw, restore := steps[len(steps)-2], steps[len(steps)-1]
	if rw.Kind != failover.KindRewriteSavepoint || rw.RewriteFrom != spPath || rw.RewriteTo != spPath+"-dr-primary--dr" {
		t.Fatalf("rewrite step %+v", rw)
	}
	want := map[string]string{"clicks-0": "earliest", "clicks-1": "latest", "clicks-2": "timestamp 2026-12-01T07:00:00Z"}
	for key, w := range want {
		if ch := rw.Choices[key]; ch.String() != w || ch.By != "test-operator" {
			t.Errorf("choice %s = %+v (%s), want %s by test-operator", key, ch, ch, w)
		}
	}
	if restore.Kind != failover.KindRestoreFlink || restore.SavepointPath != rw.RewriteTo || restore.AllowNonRestoredState {
		t.Fatalf("restore step %+v", restore)
	}
}
