package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
)

// send sends req with hdr and cookies, without following a redirect,
// and reads the answer.
func send(t *testing.T, req *http.Request, hdr map[string]string, cookies ...*http.Cookie) (*http.Response, string) {
	t.Helper()
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	for _, ck := range cookies {
		req.AddCookie(ck)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// postForm posts form with cookie and the headers hdr.
func postForm(t *testing.T, c *console, cookie *http.Cookie, path string, form url.Values, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return send(t, req, hdr, cookie)
}

// postThenGet posts form as test-<role> and, answered 303, reads the page
// its Location names with the same session and the cookies the answer set
// (its flash), as a browser does. page is "" when the answer is not 303.
func postThenGet(t *testing.T, c *console, role, path string, form url.Values) (*http.Response, string) {
	t.Helper()
	session := sessionCookie(t, c, role)
	resp, _ := postForm(t, c, session, path, form, nil)
	if resp.StatusCode != http.StatusSeeOther {
		return resp, ""
	}
	get, _ := http.NewRequest(http.MethodGet, c.URL+resp.Header.Get("Location"), nil)
	_, page := send(t, get, nil, append(resp.Cookies(), session)...)
	return resp, page
}

// pageAs reads path as test-<role>.
func pageAs(t *testing.T, c *console, role, path string) string {
	t.Helper()
	resp, body := getAs(t, c, role, path, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s as %s: %d", path, role, resp.StatusCode)
	}
	return body
}

// preflightRun is a run of one pre-flight step requested by test-operator.
func preflightRun(t *testing.T, c *console, reason string) (int64, string) {
	t.Helper()
	id, err := c.Runbook.Create(context.Background(), runbook.Actor{Name: "test-operator", Role: "operator"},
		runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: failover.KindPreflight}}}, reason)
	if err != nil {
		t.Fatal(err)
	}
	return id, fmt.Sprintf("/failover/%d", id)
}

// An action on the run page answers 303 to the page at its step (a reload
// reads the page, never posts again), its message shown there once; a GET
// on an action's path shows the page instead of a 405; with htmx, an
// action on a step answers that step's fragment alone.
func TestRunActionsRedirectToTheirStep(t *testing.T) {
	c := startConsole(t)
	waitReady(t, c)
	id, page := preflightRun(t, c, "redirect after post")

	resp, body := postThenGet(t, c, "operator", page+"/steps/1/recompute", nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != page+"#step-1" {
		t.Fatalf("recompute: %d to %q, want 303 to %s#step-1", resp.StatusCode, resp.Header.Get("Location"), page)
	}
	step := regexp.MustCompile(`(?s)<li id="step-1".*?</li>`).FindString(body)
	mustContain(t, "step 1 after the redirect", step, "Preview of step 1 recomputed.")
	if again := pageAs(t, c, "operator", page); strings.Contains(again, "Preview of step 1 recomputed.") {
		t.Fatal("the flash is shown again on the next view")
	}

	for _, path := range []string{page + "/steps/1/execute", page + "/steps/1/recompute", page + "/approve"} {
		if r, body := getAs(t, c, "operator", path, nil); r.StatusCode != http.StatusOK || !strings.Contains(body, `data-live-url="`+page+`/live"`) {
			t.Errorf("GET %s: %d, want the run page", path, r.StatusCode)
		}
	}

	run, _ := c.Runbook.Get(context.Background(), id)
	resp, body = postThenGet(t, c, "admin", page+"/approve", url.Values{"plan_hash": {run.PlanHash}, "comment": {"ok"}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != page {
		t.Fatalf("approve: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	mustContain(t, "page after approving", body, `class="flash"`, "Approved.")

	frag := htmxPost(t, c, "operator", page+"/steps/1/execute", nil)
	if !strings.HasPrefix(strings.TrimSpace(frag), `<li id="step-1"`) || strings.Contains(frag, "<html") || strings.Contains(frag, `id="step-2"`) {
		t.Fatalf("htmx execute did not answer the step alone:\n%.1500s", frag)
	}
	mustContain(t, "htmx execute", frag, "Step 1 started.")
	// A refusal through htmx is in the step too (the step has started).
	frag = htmxPost(t, c, "operator", page+"/steps/1/execute", nil)
	mustContain(t, "htmx refused execute", frag, `<li id="step-1"`, `data-testid="run-error"`)
	waitStepDone(t, c, id, 0)
}

// htmxPost posts as htmx does and returns the 200 answer's body.
func htmxPost(t *testing.T, c *console, role, path string, form url.Values) string {
	t.Helper()
	resp, body := postForm(t, c, sessionCookie(t, c, role), path, form, map[string]string{"HX-Request": "true"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("htmx POST %s: %d %.300s", path, resp.StatusCode, body)
	}
	return body
}

// waitStepDone waits for step i of run id to end, and wants it done.
func waitStepDone(t *testing.T, c *console, id int64, i int) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		run, err := c.Runbook.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		switch st := run.Steps[i]; st.Status {
		case "done":
			return
		case "failed":
			t.Fatalf("step %d failed: %s", i+1, st.Error)
		}
		if time.Now().After(deadline) {
			t.Fatalf("step %d still %s after 60 s", i+1, run.Steps[i].Status)
		}
	}
}

// The page's texts follow the run: the requester is told a different
// operator must approve only while nobody has; the approver is offered
// "Approve" only until they have; a done step offers no recompute and
// shows its result as figures with the JSON behind a toggle; a completed
// run says how long it took, what the cut lost, which side is active and
// what to do next.
func TestRunPageTextsFollowTheState(t *testing.T) {
	c := startConsole(t)
	waitReady(t, c)
	id, page := preflightRun(t, c, "texts per state")

	mine, theirs := pageAs(t, c, "operator", page), pageAs(t, c, "admin", page)
	mustContain(t, "requester, pending", mine, `data-testid="self-approval-note"`)
	mustContain(t, "approver, pending", theirs, `id="approve"`)
	if strings.Contains(mine, `id="approve"`) || strings.Contains(mine, `id="execute-1"`) {
		t.Fatal("the requester is offered approve or execute before approval")
	}

	run, _ := c.Runbook.Get(context.Background(), id)
	if err := c.Runbook.Approve(context.Background(), runbook.Actor{Name: "test-admin", Role: "admin"}, id, run.PlanHash, "ok"); err != nil {
		t.Fatal(err)
	}
	mine, theirs = pageAs(t, c, "operator", page), pageAs(t, c, "admin", page)
	if strings.Contains(mine, "a different operator must approve") {
		t.Fatal("the requester is still told a different operator must approve, after the approval")
	}
	mustContain(t, "requester, approved", mine, `data-testid="next-action"`, `href="#step-1"`, `id="execute-1"`)
	if strings.Contains(theirs, `id="approve"`) {
		t.Fatal("the approver is still offered the approve button after approving")
	}
	mustContain(t, "approver, approved", theirs, `data-testid="you-approved"`)

	if resp, _ := postThenGet(t, c, "operator", page+"/steps/1/execute", nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("execute: %d", resp.StatusCode)
	}
	waitStepDone(t, c, id, 0)
	done := pageAs(t, c, "operator", page)
	for _, gone := range []string{"recompute", "Recompute", "a different operator must approve", `id="execute-1"`, `id="reject"`} {
		if strings.Contains(done, gone) {
			t.Errorf("the completed run's page still shows %q", gone)
		}
	}
	mustContain(t, "completed run", done, `data-testid="step-result-1"`, "Raw result (JSON)",
		`data-testid="finished-took"`, " from the request, ", `data-testid="finished-lost"`, `data-testid="finished-active"`,
		`data-testid="finished-next"`, "Plan the failback", "Take a fresh savepoint", "Plan a drill")
	// This run stopped no mirror: what its cut lost is not known, and the
	// page does not make it smaller than that.
	lost := regexp.MustCompile(`(?s)data-testid="finished-lost">(.*?)</dd>`).FindStringSubmatch(done)
	if lost == nil || !strings.Contains(lost[1], "unknown") {
		t.Fatalf("data at risk at the cut: %q", lost)
	}
}

var waitingRuns = regexp.MustCompile(`data-runs="([^"]*)"`)

// The navigation counts the runs waiting for the signed-in user's
// decision: an approver sees the run until they approve it, its requester
// never does, a viewer has no count.
func TestNavCountsRunsAwaitingTheUser(t *testing.T) {
	c := startConsole(t)
	waitReady(t, c)
	id, page := preflightRun(t, c, "waiting for a decision")
	waiting := func(role string) []string {
		t.Helper()
		m := waitingRuns.FindStringSubmatch(pageAs(t, c, role, "/failover/waiting"))
		if m == nil {
			t.Fatalf("no waiting runs in the fragment for %s", role)
		}
		return strings.Fields(m[1])
	}
	me := fmt.Sprint(id)
	if got := waiting("admin"); !contains(got, me) {
		t.Fatalf("the approver's waiting runs %v lack run %s", got, me)
	}
	if got := waiting("operator"); contains(got, me) {
		t.Fatalf("the requester is asked to decide on their own run: %v", got)
	}
	if got := waiting("viewer"); len(got) != 0 {
		t.Fatalf("a viewer is asked to decide: %v", got)
	}
	mustContain(t, "an operator's page", pageAs(t, c, "admin", page), `id="nav-waiting"`, `hx-get="/failover/waiting"`, `aria-live="polite"`)
	if strings.Contains(pageAs(t, c, "viewer", page), `id="nav-waiting"`) {
		t.Fatal("a viewer's navigation polls for decisions")
	}
	run, _ := c.Runbook.Get(context.Background(), id)
	if err := c.Runbook.Approve(context.Background(), runbook.Actor{Name: "test-admin", Role: "admin"}, id, run.PlanHash, "ok"); err != nil {
		t.Fatal(err)
	}
	if got := waiting("admin"); contains(got, me) {
		t.Fatalf("run %s still waits for the approver after the approval: %v", me, got)
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
