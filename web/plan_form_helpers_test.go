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

func (d planFormDriver) choose(id, value string) {
	d.t.Helper()
	err := chromedp.Do(d.b, chromedp.SetValue(chromedp.ID(id), value))
	if err == nil {
		_, err = chromedp.Run(d.b, chromedp.Evaluate[bool](`document.getElementById(`+strconv.Quote(id)+`).dispatchEvent(new Event("change", {bubbles: true}))`))
	}
	if err != nil {
		d.t.Fatalf("choosing %s in #%s: %v", value, id, err)
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
	if err := chromedp.Do(d.b, chromedp.Click(chromedp.ID("create-plan")), chromedp.WaitVisible(chromedp.CSS(`[data-testid="run-status"]`))); err != nil {
		d.t.Fatal(err)
	}
	loc, err := chromedp.Run(d.b, chromedp.Location())
	if err != nil {
		d.t.Fatal(err)
	}
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
