package web_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
)

var previewAt = regexp.MustCompile(`datetime="([^"]+)"[^>]*data-testid="preview-at-1"`)

// The run page shows cached step previews with their age: repeated views
// (the live page's refreshes) do not compute them again, an operator's
// recompute does, a viewer's is refused, and a replaced plan is flagged.
func TestRunPagePreviewsCachedAndRecomputed(t *testing.T) {
	c := startConsole(t)
	waitReady(t, c)
	ctx := context.Background()
	requester := runbook.Actor{Name: "test-operator", Role: "operator"}
	plan := runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: failover.KindPreflight},
		{Kind: failover.KindRestoreFlink, FlinkTarget: "sandbox-flink-dr", JarID: "job.jar"}}}
	id, err := c.Runbook.Create(ctx, requester, plan, "preview cache drill")
	if err != nil {
		t.Fatal(err)
	}
	page := fmt.Sprintf("/failover/%d", id)
	computedAt := func(body string) string {
		t.Helper()
		m := previewAt.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no preview age on the run page: %.2000s", body)
		}
		return m[1]
	}
	_, body := get(t, c, page)
	first := computedAt(body)
	mustContain(t, "run page", body, "What this step will do, as computed", " ago</time>")
	if strings.Contains(body, `id="recompute-1"`) || strings.Contains(body, `id="recompute-all"`) {
		t.Fatal("a viewer is offered recompute")
	}
	for range 3 {
		if _, body = get(t, c, page); computedAt(body) != first {
			t.Fatalf("a view recomputed the previews: %s then %s", first, computedAt(body))
		}
	}

	resp, _ := postAs(t, c, "viewer", page+"/steps/1/recompute", nil)
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("viewer recompute = %d, want 403", resp.StatusCode)
	}
	resp, body = postThenGet(t, c, "operator", page+"/steps/1/recompute", nil)
	if resp.StatusCode != http.StatusSeeOther || computedAt(body) == first {
		t.Fatalf("operator recompute = %d, computed at %s (was %s)", resp.StatusCode, computedAt(body), first)
	}
	mustContain(t, "recomputed page", body, "Preview of step 1 recomputed.", `id="recompute-1"`, `id="recompute-all"`)
	second := computedAt(body)
	if resp, _ := postAs(t, c, "viewer", page+"/previews/recompute", nil); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("viewer recompute of every step = %d, want 403", resp.StatusCode)
	}
	if resp, body = postThenGet(t, c, "operator", page+"/previews/recompute", nil); resp.StatusCode != http.StatusSeeOther || computedAt(body) == second {
		t.Fatalf("operator recompute of every step = %d, computed at %s (was %s)", resp.StatusCode, computedAt(body), second)
	}

	plan.Steps = plan.Steps[:1]
	if err := c.Runbook.Update(ctx, requester, id, plan, "one step only"); err != nil {
		t.Fatal(err)
	}
	_, body = get(t, c, page)
	mustContain(t, "replaced plan", body, `data-testid="preview-changed-1"`, "the plan was replaced", "recompute before you execute")
	if previewAt.MatchString(body) {
		t.Fatal("the previous plan's preview is shown as the new plan's")
	}
}
