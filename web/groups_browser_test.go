package web_test

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/drconsole/drconsole/kafka/kafkatest"
)

// boundShown is how a group's known bound reads: "0 records" or "≤ N records".
var boundShown = regexp.MustCompile(`^(0|≤ [0-9,]+) records$`)

// On the sandbox, a viewer reaches a flow's consumer groups from the flow
// page with the keyboard alone, sees each of the sandbox's groups with a
// figure the monitor computed from the mirror's syncs and checkpoints,
// opens a group's partitions and sorts the table, all with keys.
func TestBrowserGroupsPageByKeyboard(t *testing.T) {
	t.Parallel()
	c := startConsole(t)
	waitReady(t, c)
	// The sandbox's consumers commit on the primary and its mirror
	// checkpoints them: wait until a refresh has computed both groups.
	kafkatest.WaitFor(t, "both sandbox groups computed with a known bound", func() bool {
		s := c.Monitor.Snapshot("primary->dr")
		if s == nil || s.Groups == nil {
			return false
		}
		known := 0
		for _, g := range s.Groups.Groups {
			if (g.Group == "billing" || g.Group == "flink-events") && g.Reread != nil {
				known++
			}
		}
		return known == 2
	})
	ctx := newBrowser(t)
	flow := url.PathEscape("primary->dr")
	signIn(t, ctx, c.URL+"/flows/"+flow, "test-viewer")
	worst := waitText(t, ctx, `[data-testid="flow-worst-group"]`, 10*time.Second, func(s string) bool { return s != "" })
	if !strings.Contains(worst, "billing") && !strings.Contains(worst, "flink-events") {
		t.Fatalf("flow page's worst group = %q", worst)
	}

	// Keyboard: focus the link to the groups page and press Enter.
	if err := chromedp.Do(ctx, chromedp.Focus(chromedp.CSS(`[data-testid="groups-link"]`)), chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="worst-group"]`))); err != nil {
		t.Fatal(err)
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](`Object.fromEntries([...document.querySelectorAll('[data-testid="group-row"]')].map(r =>
		[r.querySelector("th code").textContent.trim(), r.querySelector('[data-testid="group-bound"]').textContent.trim()]))`))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("flow page: worst group %q; groups page: %v", worst, rows)
	for _, g := range []string{"billing", "flink-events"} {
		if !boundShown.MatchString(rows[g]) {
			t.Errorf("group %s shows %q, want a bound in records (all rows: %v)", g, rows[g], rows)
		}
	}

	// Open the first group's partitions with the keyboard.
	if err := chromedp.Do(ctx, chromedp.Focus(chromedp.CSS(`[data-testid="group-row"] summary`)), chromedp.KeyEvent("\r")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the first group's partitions open", `(() => { const d = document.querySelector('[data-testid="group-row"] details');
		return d && d.open && d.querySelectorAll("tbody tr").length > 0 && d.querySelector("tbody a").href.includes("/partitions/") })()`, 5*time.Second)

	// Sort by group name with the keyboard: the header says so.
	if err := chromedp.Do(ctx, chromedp.Focus(chromedp.CSS(`th[aria-sort] a[href*="sort=group"]`)), chromedp.KeyEvent("\r")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "sorted by group", `location.search.includes("sort=group") &&
		[...document.querySelectorAll("th[aria-sort]")].some(th => th.textContent.trim() == "Group" && th.getAttribute("aria-sort") == "descending")`, 5*time.Second)
}
