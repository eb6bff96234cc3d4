package web_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
)

// Issue 28: the run page and its approval box say what the failover
// loses, as a lower bound ("≥") with the read's time while the primary
// is down.
func TestRunPageAndApprovalBoxStateDataAtRisk(t *testing.T) {
	c := startConsole(t)
	waitReady(t, c)
	ctx := context.Background()
	id, err := c.Runbook.Create(ctx, runbook.Actor{Name: "test-admin", Role: "admin"},
		runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: failover.KindPreflight}, {Kind: failover.KindStopMirror}}}, "primary region down")
	if err != nil {
		t.Fatal(err)
	}
	c.Sandbox.SetPrimaryDown(true)
	t.Cleanup(func() { c.Sandbox.SetPrimaryDown(false) })
	deadline := time.Now().Add(30 * time.Second)
	for s := c.Monitor.Snapshot("primary->dr"); !s.Source.Checked || s.Source.OK; s = c.Monitor.Snapshot("primary->dr") {
		if time.Now().After(deadline) {
			t.Fatal("the primary never read as unreachable")
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, page := getAs(t, c, "operator", fmt.Sprintf("/failover/%d", id), nil)
	mustContain(t, "run page of another operator", page, `data-testid="at-risk"`, "this failover loses ≥ ", " offsets / ≥ ",
		`data-testid="approve-at-risk"`, "Approving this plan accepts losing ≥ ", "a lower bound: the primary is unreachable since")
}
