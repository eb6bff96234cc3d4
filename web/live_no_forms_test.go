package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
)

// No page updates itself by swapping an element that holds something a
// person types into or presses: every element that polls (hx-trigger
// "every …") or takes pushed fragments (sse-swap) is checked, in the
// browser, on every page that updates itself, as an operator sees it.
func TestLiveElementsHoldNoControls(t *testing.T) {
	t.Parallel()
	c := startConsole(t)
	waitReady(t, c)
	id, err := c.Runbook.Create(context.Background(), runbook.Actor{Name: "test-operator", Role: "operator"},
		runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: failover.KindPreflight}, {Kind: failover.KindStopMirror}}}, "drill")
	if err != nil {
		t.Fatal(err)
	}
	ctx := newBrowser(t)
	signIn(t, ctx, c.URL+"/", "test-admin")
	const check = `(() => {
		const live = document.querySelectorAll('[hx-trigger*="every"], [sse-swap]');
		const bad = [];
		for (const el of live) {
			const inner = el.querySelector('input, select, textarea, button, form');
			if (inner) { bad.push((el.id || el.tagName) + " holds " + inner.outerHTML.slice(0, 80)); }
		}
		return JSON.stringify({live: live.length, bad: bad});
	})()`
	pages := []string{"/", "/flows/primary-%3Edr", "/failover", fmt.Sprintf("/failover/%d", id), "/savepoints", "/translate", "/demo"}
	sawLive := 0
	for _, p := range pages {
		if err := chromedp.Do(ctx, chromedp.Navigate(c.URL+p), chromedp.WaitVisible(chromedp.CSS("main"))); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](check))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var res struct {
			Live int      `json:"live"`
			Bad  []string `json:"bad"`
		}
		if err := json.Unmarshal([]byte(got), &res); err != nil {
			t.Fatalf("%s: %v (%s)", p, err, got)
		}
		sawLive += res.Live
		for _, b := range res.Bad {
			t.Errorf("%s: a live element %s", p, b)
		}
	}
	if sawLive < len(pages)-2 { // /failover and /translate have no live element
		t.Fatalf("found only %d live elements on %d pages: the check looks at the wrong attributes", sawLive, len(pages))
	}
}
