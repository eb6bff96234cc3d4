package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/drconsole/drconsole/demo"
)

// An operator takes a savepoint from the catalog page: the page shows it
// in progress (pushed by server-sent events), then says it finished; the
// operator reloads and the catalog lists the new entry.
func TestBrowserSavepointProgress(t *testing.T) {
	c := startConsole(t)
	ctx := newBrowser(t)
	signIn(t, ctx, c.URL+"/savepoints", "test-operator")
	err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.ID("sp-job"), demo.FlinkSandboxJobID),
		chromedp.Click(chromedp.ID("sp-trigger")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="sp-trigger-state"]`)))
	if err != nil {
		t.Fatal(err)
	}
	// The newest trigger comes first.
	if s := text(t, ctx, `[data-testid="sp-trigger-state"]`); !strings.HasPrefix(s, "in progress for") {
		t.Fatalf("right after the trigger: %q", s)
	}
	const newest = `(() => {
		const li = document.querySelector('[data-testid="sp-trigger"]');
		if (!li || !li.textContent.includes('done in')) return "";
		const a = li.querySelector('a[href^="/savepoints/"]');
		const id = a.getAttribute('href').split('/')[2];
		return document.querySelector('[data-testid="savepoint-row"][data-id="' + id + '"]') ? id : "";
	})()`
	// The pushed progress says when it finished; reloading is the
	// operator's click (an automatic one would erase what they type).
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid="sp-finished"] a`)),
		chromedp.Click(chromedp.CSS(`[data-testid="sp-finished"] a`))); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		id, err := chromedp.Run(ctx, chromedp.Evaluate[string](newest))
		if err != nil {
			t.Fatal(err)
		}
		if id != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no catalog row for the new savepoint after 30 s:\n%s", text(t, ctx, "#sp-progress"))
		}
		time.Sleep(300 * time.Millisecond)
	}
}
