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
// keeps the runs list's table and the run page's reason within the window: the list shows
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
	// The runs table on the list, the reason on the run page: the right
	// edge of each within the window (the rest of either page is not
	// judged here).
	for _, page := range []struct{ path, element string }{
		{"/failover", `document.querySelector("table.grid")`},
		{fmt.Sprintf("/failover/%d", id), `[...document.querySelectorAll("dl.inline dt")].find(dt => dt.textContent === "Reason").nextElementSibling`},
	} {
		if err := chromedp.Do(b, chromedp.Navigate(c.URL+page.path), chromedp.WaitVisible(chromedp.CSS("dl.inline, table.grid"))); err != nil {
			t.Fatal(err)
		}
		right, err := chromedp.Run(b, chromedp.Evaluate[[]int](`[Math.ceil(`+page.element+`.getBoundingClientRect().right), window.innerWidth]`))
		if err != nil {
			t.Fatal(err)
		}
		if right[0] > right[1] {
			t.Errorf("%s: the reason's element reaches %d px in a %d px window", page.path, right[0], right[1])
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
