package web_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/drconsole/drconsole/runbook"
)

// planFormDriver drives the plan form in browser b: choose sets a select
// as a person would leave it (value, then change); wait polls js until it
// holds, failing with the summary and what dump adds.
type planFormDriver struct {
	t    *testing.T
	b    context.Context
	dump string // JavaScript giving more state for a failure
}

// choose picks value in the select (or sets the field) #id as a person
// would, and fires its change. It runs in the page as one script: a
// fragment swapped in just before (htmx replacing the select) leaves
// chromedp's node ids stale, while the page's own lookup is always current.
func (d planFormDriver) choose(id, value string) {
	d.t.Helper()
	js := `(function(){const e = document.getElementById(` + strconv.Quote(id) + `); if (!e) { return false; }
		e.value = ` + strconv.Quote(value) + `; if (e.value !== ` + strconv.Quote(value) + `) { return false; }
		e.dispatchEvent(new Event("change", {bubbles: true})); return true;})()`
	if _, err := chromedp.Run(d.b, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		state, _ := chromedp.Run(d.b, chromedp.Evaluate[string](d.dump))
		d.t.Fatalf("choosing %s in #%s: %v\nstate: %s", value, id, err, state)
	}
}

func (d planFormDriver) wait(what, js string, timeout time.Duration) {
	d.t.Helper()
	if _, err := chromedp.Run(d.b, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(timeout))); err != nil {
		summary, _ := chromedp.Run(d.b, chromedp.Text(chromedp.ID("plan-summary")))
		state, _ := chromedp.Run(d.b, chromedp.Evaluate[string](d.dump))
		d.t.Fatalf("waiting for %s: %v\nsummary: %s\nstate: %s", what, err, summary, state)
	}
}

// create submits the form and returns the run it created.
func (d planFormDriver) create(c *console) *runbook.Run {
	d.t.Helper()
	loc := createPlan(d.t, d.b)
	id, err := strconv.ParseInt(loc[strings.LastIndex(loc, "/")+1:], 10, 64)
	if err != nil {
		d.t.Fatalf("run page %q: %v", loc, err)
	}
	run, err := c.Runbook.Get(context.Background(), id)
	if err != nil {
		d.t.Fatal(err)
	}
	return run
}
