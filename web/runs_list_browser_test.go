package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
)

// A reason of 200,000 characters without a space (a run planned before
// reasons were capped, issue 31 made the runs list 1,259,871 px wide)
// keeps the runs list and the run page (their main part) within the window: the list shows
// its first 300 characters, the run page all of it, wrapped.
func TestBrowserLongReasonWraps(t *testing.T) {
	c := startConsole(t)
	waitReady(t, c)
	reason := strings.Repeat("x", 200_000)
	id, err := c.Runbook.Create(context.Background(), runbook.Actor{Name: "test-operator", Role: model.RoleOperator},
		runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: failover.KindPreflight}}}, reason)
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t)
	signIn(t, b, c.URL+"/failover", "test-operator")
	// The page's main part (the header is the layout's: not judged here).
	const fits = `document.querySelector("main").scrollWidth <= window.innerWidth`
	for _, page := range []string{"/failover", fmt.Sprintf("/failover/%d", id)} {
		if err := chromedp.Do(b, chromedp.Navigate(c.URL+page), chromedp.WaitVisible(chromedp.CSS("main"))); err != nil {
			t.Fatal(err)
		}
		width, err := chromedp.Run(b, chromedp.Evaluate[[]int](`[document.querySelector("main").scrollWidth, window.innerWidth]`))
		if err != nil {
			t.Fatal(err)
		}
		if ok, _ := chromedp.Run(b, chromedp.Evaluate[bool](fits)); !ok {
			wide, _ := chromedp.Run(b, chromedp.Evaluate[[]string](`[...document.querySelectorAll("main *")].filter(e => e.getBoundingClientRect().right > window.innerWidth).slice(0, 8).map(e => e.tagName + "#" + e.id + "." + e.className + " " + Math.round(e.getBoundingClientRect().right))`))
			t.Errorf("%s is %d px wide in a %d px window: %v", page, width[0], width[1], wide)
		}
	}
	if err := chromedp.Do(b, chromedp.Navigate(c.URL+"/failover"), chromedp.WaitVisible(chromedp.CSS("main"))); err != nil {
		t.Fatal(err)
	}
	cell, err := chromedp.Run(b, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector('a[href="/failover/%d"]').closest("tr").querySelector(".reason").textContent`, id)))
	if err != nil {
		t.Fatal(err)
	}
	if cell != strings.Repeat("x", 300)+"…" {
		t.Fatalf("runs list cell: %d characters", len([]rune(cell)))
	}
}
