package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/drconsole/drconsole/storage"
)

// A manager (a viewer) finds the RPO report from the menu and reads it:
// every flow has its objective and the 7, 30 and 90 day rows, and an
// episode two days ago (3 minutes at a 5 minute RPO) is listed with its
// start, duration and peak.
func TestBrowserViewerReadsRPOReport(t *testing.T) {
	c := startConsole(t)
	flow := c.Monitor.Snapshots()[0].Flow.Name
	// Two days back: outside every chart's window, inside the report's.
	start := time.Now().Add(-48 * time.Hour).Truncate(time.Minute)
	for i := range 13 {
		for s := 0; s < 60; s += 10 {
			x := storage.FlowSample{AtMs: start.Add(time.Duration(i)*time.Minute + time.Duration(s)*time.Second).UnixMilli(), Status: "OK"}
			rpo := int64(1_000)
			if i >= 10 {
				rpo, x.Status = 5*60_000, "CRITICAL"
			}
			x.RPOMs = &rpo
			if err := c.Store.AddFlowSample(context.Background(), flow, x); err != nil {
				t.Fatal(err)
			}
		}
	}
	ctx := newBrowser(t)
	signIn(t, ctx, c.URL+"/", "test-viewer")
	err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`header nav a[href="/report"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="report-flow"]`)))
	if err != nil {
		t.Fatal(err)
	}
	flows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="report-flow"]').length`))
	if err != nil {
		t.Fatal(err)
	}
	episodes, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="report-flow"] .report-episodes`)))
	if err != nil {
		t.Fatal(err)
	}
	if flows != len(c.Monitor.Snapshots()) {
		t.Errorf("%d flows in the report, the console watches %d", flows, len(c.Monitor.Snapshots()))
	}
	for _, days := range []string{"7", "30", "90"} {
		row, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="report-flow"] [data-testid="report-window-`+days+`"]`)))
		if err != nil {
			t.Fatalf("%s-day row: %v", days, err)
		}
		if !strings.Contains(row, days+" days") || !strings.Contains(row, "%") {
			t.Errorf("%s-day row reads %q", days, row)
		}
	}
	// The plots: the RPO over the week against the objective, with the
	// time before the history as a named gap, and the day of the episode
	// as a bar with its over part, each named by its summary.
	plots, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => {
		const f = document.querySelector('[data-testid="report-flow"]');
		const rpo = f.querySelector('[data-testid="report-rpo-plot"] svg'), days = f.querySelector('[data-testid="report-day-plot"] svg');
		return [rpo.getAttribute('aria-label'), [...rpo.querySelectorAll('[data-testid="chart-rule"], [data-testid="chart-mark"]')].map(e => e.textContent).join('|'),
			days.getAttribute('aria-label'), String(days.querySelectorAll('path.bar-over').length), String(days.querySelector('path.bar-hit title') !== null)];
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plots[0], "RPO per minute, last 7 d 0 h, against the") || !strings.Contains(plots[0], "highest ") ||
		!strings.Contains(plots[1], "objective ") || !strings.Contains(plots[1], "no data") {
		t.Errorf("RPO plot: label %q, rule and marks %q", plots[0], plots[1])
	}
	if !strings.Contains(plots[2], "Share of each UTC day's recorded time within") || plots[3] == "0" || plots[4] != "true" {
		t.Errorf("day plot: label %q, %s over bars, titled %s", plots[2], plots[3], plots[4])
	}
	want := start.Add(10 * time.Minute).UTC().Format("2006-01-02 15:04")
	if !strings.Contains(episodes, want) || !strings.Contains(episodes, "3 m 00 s") || !strings.Contains(episodes, "5 m 00 s") {
		t.Errorf("episodes table lacks the one starting %s (3 m 00 s, peak 5 m 00 s):\n%s", want, episodes)
	}
}
