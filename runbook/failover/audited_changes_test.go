package failover

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/runbooktest"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/storage/storagetest"
)

// With the audit log unwritable, cancelling, break-glass and a plan change
// change nothing (approve and reject: TestNoRunbookEffectWithoutAuditRecord).
func TestRunChangesNeedTheirAuditRecord(t *testing.T) {
	t.Parallel()
	e := runbooktest.NewEnv(t, 1)
	e.Cfg.Failover.BreakGlass = true
	ctx := context.Background()
	id, err := e.RB.Create(ctx, runbooktest.Alice, fullPlan(), "drill")
	if err != nil {
		t.Fatal(err)
	}
	before, _ := e.RB.Get(ctx, id)
	storagetest.FailAuditWrites(t, e.Path, true)
	changed := fullPlan()
	changed.Steps[2].Group = "flink-events"
	for what, change := range map[string]func() error{
		"cancel":      func() error { return e.RB.Cancel(ctx, runbooktest.Alice, id, "not needed") },
		"break-glass": func() error { return e.RB.BreakGlass(ctx, runbooktest.Alice, id, "the approver is asleep") },
		"plan change": func() error { return e.RB.Update(ctx, runbooktest.Alice, id, changed, "wrong group") },
		"approve":     func() error { return e.RB.Approve(ctx, runbooktest.Bob, id, before.PlanHash, "ok") },
		"reject":      func() error { return e.RB.Reject(ctx, runbooktest.Bob, id, "no") },
	} {
		if err := change(); !errors.Is(err, storage.ErrAuditWrite) {
			t.Errorf("%s without its audit record: %v", what, err)
		}
	}
	r, _ := e.RB.Get(ctx, id)
	if r.Status != "pending" || r.BreakGlass != "" || r.PlanHash != before.PlanHash || len(r.Approvals) != 0 {
		t.Fatalf("after unrecorded changes: run %s, break-glass %q, plan %.12s (was %.12s), approvals %+v",
			r.Status, r.BreakGlass, r.PlanHash, before.PlanHash, r.Approvals)
	}
}

// A change its condition refuses (the run is no longer in a state that
// allows it) leaves no record claiming it happened, nor any part of it.
func TestRefusedRunChangeLeavesNoRecord(t *testing.T) {
	t.Parallel()
	e := runbooktest.NewEnv(t, 1)
	e.Cfg.Failover.BreakGlass = true
	ctx := context.Background()
	newRun := func(status model.RunStatus) *runbook.Run {
		t.Helper()
		id, err := e.RB.Create(ctx, runbooktest.Alice, fullPlan(), "drill")
		if err != nil {
			t.Fatal(err)
		}
		if status != "pending" {
			if err := e.Store.SetFailoverStatus(ctx, id, []model.RunStatus{model.RunPending}, status, e.Now.UnixMilli()); err != nil {
				t.Fatal(err)
			}
		}
		r, _ := e.RB.Get(ctx, id)
		return r
	}
	refused := func(action string, r *runbook.Run, change func() error) {
		t.Helper()
		n := e.Audit.Count(action)
		if err := change(); err == nil {
			t.Errorf("%s of a %s run succeeded", action, r.Status)
		}
		if got := e.Audit.Count(action); got != n {
			t.Errorf("%s of a %s run was refused, but %d %s records claim it", action, r.Status, got-n, action)
		}
		if after, _ := e.RB.Get(ctx, r.ID); after.Status != r.Status || len(after.Approvals) != len(r.Approvals) ||
			after.PlanHash != r.PlanHash || after.BreakGlass != r.BreakGlass {
			t.Errorf("%s of a %s run changed it: now %s, %d approvals, plan %.12s, break-glass %q",
				action, r.Status, after.Status, len(after.Approvals), after.PlanHash, after.BreakGlass)
		}
	}
	completed := newRun("completed")
	refused("failover.cancel", completed, func() error { return e.RB.Cancel(ctx, runbooktest.Bob, completed.ID, "too late") })
	cancelled := newRun("cancelled")
	refused("failover.cancel", cancelled, func() error { return e.RB.Cancel(ctx, runbooktest.Bob, cancelled.ID, "again") })
	refused("failover.reject", cancelled, func() error { return e.RB.Reject(ctx, runbooktest.Bob, cancelled.ID, "no") })
	refused("failover.BREAK-GLASS", cancelled, func() error { return e.RB.BreakGlass(ctx, runbooktest.Alice, cancelled.ID, "the approver is asleep") })
	changed := fullPlan()
	changed.Steps[2].Group = "flink-events"
	refused("failover.plan-changed", cancelled, func() error { return e.RB.Update(ctx, runbooktest.Alice, cancelled.ID, changed, "wrong group") })

	// Approving checks the run's state before it writes; a cancellation
	// landing after that check (here: when Approve reads the clock) must
	// still refuse the approval and leave no record of it.
	racing := newRun("pending")
	calls := 0
	e.RB.Clock = func() time.Time {
		if calls++; calls == 2 {
			if err := e.Store.SetFailoverStatus(ctx, racing.ID, []model.RunStatus{model.RunPending}, "cancelled", e.Now.UnixMilli()); err != nil {
				t.Error(err)
			}
		}
		return e.Now
	}
	n := e.Audit.Count("failover.approve")
	if err := e.RB.Approve(ctx, runbooktest.Bob, racing.ID, racing.PlanHash, "ok"); !errors.Is(err, storage.ErrConflict) {
		t.Errorf("approval of a run cancelled meanwhile: %v", err)
	}
	e.RB.Clock = func() time.Time { return e.Now }
	if got := e.Audit.Count("failover.approve"); got != n {
		t.Errorf("a refused approval left %d failover.approve records", got-n)
	}
	if r, _ := e.RB.Get(ctx, racing.ID); r.Status != "cancelled" || len(r.Approvals) != 0 {
		t.Errorf("after a refused approval: run %s, approvals %+v", r.Status, r.Approvals)
	}
}
