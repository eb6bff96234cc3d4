package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/handlers"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
)

// An admin who requests a failover and then adds an operator account on
// the admin page cannot approve through it: the account records its
// creator, the approval does not count, and the run page says why.
func TestApprovalFromAccountTheRequesterCreatedDoesNotCount(t *testing.T) {
	c := startConsole(t)
	waitReady(t, c)
	ctx := context.Background()
	id, err := c.Runbook.Create(ctx, runbook.Actor{Name: "test-admin", Role: "admin"},
		runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: failover.KindPreflight}}}, "sock-puppet drill")
	if err != nil {
		t.Fatal(err)
	}
	const pw = "a long enough password for the puppet"
	resp, body := postAs(t, c, "admin", "/admin/users", url.Values{"name": {"puppet-op"}, "role": {"operator"}, "password": {pw}, "password2": {pw}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("admin adds puppet-op = %d %.300s", resp.StatusCode, body)
	}
	origins, err := c.Store.AccountOrigins(ctx, "puppet-op")
	if err != nil || len(origins) != 1 || origins[0].CreatedBy != "test-admin" {
		t.Fatalf("puppet-op's creator on record: %+v %v", origins, err)
	}
	run, _ := c.Runbook.Get(ctx, id)
	tok, err := c.Store.CreateSession(ctx, "puppet-op", "127.0.0.1", "go-test")
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/failover/%d/approve", c.URL, id),
		strings.NewReader(url.Values{"plan_hash": {run.PlanHash}, "comment": {"lgtm"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: handlers.SessionCookie, Value: tok})
	resp, err = noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if run, _ = c.Runbook.Get(ctx, id); run.Approved || len(run.ValidApprovers) != 0 {
		t.Fatalf("the requester's own account approved (%d): %v", resp.StatusCode, run.ValidApprovers)
	}
	_, page := get(t, c, fmt.Sprintf("/failover/%d", id))
	mustContain(t, "run page", page, `data-testid="approval-discounted"`, "does not count: the account puppet-op was created by the requester test-admin")
}
