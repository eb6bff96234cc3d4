package storage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// A drill's figures are recorded once each (a resumed drill keeps its
// first times), unknown ones stay nil, and it counts as a success only
// once its steps were measured and its cleanup is done.
func TestDrillRecord(t *testing.T) {
	st, _ := openStore(t)
	ctx := context.Background()
	id, _, err := st.CreateFailoverRun(ctx, model.Run{Flow: "f", Reason: "drill", CreatedBy: "alice", CreatedMs: 1, PlanJSON: "{}", PlanHash: "h",
		ApprovalsRequired: 1}, []string{"translate-group", "restore-flink"}, model.AuditEntry{Actor: "alice", Action: "failover.plan", Subject: "f"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Drill(ctx, id); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("a drill not started: %v", err)
	}
	start := model.Drill{RunID: id, Flow: "f", StartedMs: 1000, FlinkTarget: "flink-dr", JobID: "j1", Groups: []string{"drconsole-drill-1-billing"}, RereadExpected: 2}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	rec := func(action string) model.AuditEntry {
		return model.AuditEntry{Actor: "drconsole", Action: action, Subject: "failover-run:1"}
	}
	start.RulesFailed = []string{"lag within 30s: RPO 2m"}
	_, err = st.StartDrill(ctx, start, rec("drill.start"))
	must(err)
	start.StartedMs = 5000
	if _, err := st.StartDrill(ctx, start, rec("drill.start")); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("a drill started twice: %v", err)
	}
	must(st.DrillMoment(ctx, id, storage.MomentSubmitted, 1100))
	must(st.DrillMoment(ctx, id, storage.MomentRunning, 1500))
	must(st.DrillMoment(ctx, id, storage.MomentRunning, 9999))
	must(st.DrillReread(ctx, id, 1, 7))
	d, err := st.Drill(ctx, id)
	must(err)
	if d.StartedMs != 1000 || *d.ToRunningMs() != 500 || d.RTOMs() != nil || d.RPOMs != nil || d.RereadMax() != nil {
		t.Fatalf("drill %+v: want started 1000, RUNNING after 500 ms, RTO, RPO and re-read unknown", d)
	}
	must(st.DrillReread(ctx, id, 2, 3))
	rpo := int64(2500)
	must(st.DrillFirstRecord(ctx, id, 3000, &rpo, true))
	must(st.DrillFirstRecord(ctx, id, 8000, nil, false))
	d, err = st.Drill(ctx, id)
	must(err)
	if *d.RTOMs() != 2000 || *d.RPOMs != 2500 || !d.RPOAtLeast || *d.RereadMax() != 10 || len(d.RulesFailed) != 1 || d.Groups[0] != "drconsole-drill-1-billing" {
		t.Fatalf("drill %+v", d)
	}
	if d.Succeeded() {
		t.Fatal("a drill whose cleanup has not run counts as a success")
	}
	// The run never completed (the process died): the drill failed, and
	// its run is ended so no step of it starts again.
	_, err = st.DrillCleanupClaim(ctx, id, "interrupted", 4000, rec("drill.cleanup-start"))
	must(err)
	r, err := st.FailoverRun(ctx, id)
	must(err)
	if r.Status != model.RunPending { // pending is not a running drill: left as it was
		t.Fatalf("run %s", r.Status)
	}
	must(st.DrillCleanupOutcome(ctx, id, errors.New("group not empty"), 4100, 34100, rec("drill.cleanup-failed")))
	if due, err := st.DrillsToClean(ctx, 30000); err != nil || len(due) != 0 {
		t.Fatalf("a failed cleanup is due before its retry time: %v %v", due, err)
	}
	due, err := st.DrillsToClean(ctx, 34100)
	must(err)
	if len(due) != 1 || due[0].Cleanup != model.CleanupFailed || due[0].CleanupError != "group not empty" || due[0].Outcome != model.DrillFailed || due[0].Error != "interrupted" {
		t.Fatalf("due %+v", due)
	}
	_, err = st.DrillCleanupClaim(ctx, id, "again", 34200, rec("drill.cleanup-start"))
	must(err)
	must(st.DrillCleanupOutcome(ctx, id, nil, 34300, 0, rec("drill.cleanup-done")))
	if _, err := st.DrillCleanupClaim(ctx, id, "", 34400, rec("drill.cleanup-start")); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("a done cleanup claimed again: %v", err)
	}
	d, err = st.Drill(ctx, id)
	must(err)
	if d.Succeeded() || d.Outcome != model.DrillFailed || d.Cleanup != model.CleanupDone || *d.CleanupDoneMs != 34300 {
		t.Fatalf("a failed drill: %+v", d)
	}
	if last, err := st.LastDrillSuccess(ctx); err != nil || len(last) != 0 {
		t.Fatalf("last success of a failed drill: %v %v", last, err)
	}
	n, err := st.AuditEntries(ctx, storage.AuditFilter{Action: "drill.cleanup-start"})
	if err != nil || len(n) != 2 {
		t.Fatalf("cleanup claims on record: %d %v (the refused one writes none)", len(n), err)
	}
}
