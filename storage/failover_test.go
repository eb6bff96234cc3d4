package storage_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/storage/storagetest"
)

// A step is claimed by one conditional update: not twice by one runner,
// not while another step of the run runs or an earlier one is not done;
// a step running under another runner (a dead process) is resumed. The
// claim and its record are one transaction: no record, no claim.
func TestFailoverStepClaims(t *testing.T) {
	st, path := openStore(t)
	ctx := context.Background()
	id, _, err := st.CreateFailoverRun(ctx, model.Run{Flow: "f", Reason: "r", CreatedBy: "alice", CreatedMs: 1, PlanJSON: "{}", PlanHash: "h",
		ApprovalsRequired: 1}, []string{"translate-group", "restore-flink"}, model.AuditEntry{Actor: "alice", Action: "failover.plan", Subject: "f"})
	if err != nil {
		t.Fatal(err)
	}
	claim := func(idx int, runner string) error {
		_, err := st.StartFailoverStep(ctx, storage.StepStart{RunID: id, Idx: idx, Runner: runner, Actor: "bob", AtMs: 2,
			Record: model.AuditEntry{Actor: "bob", Action: "failover.step-start", Subject: "failover-run:1"}})
		return err
	}
	if err := claim(0, "A"); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("a step of an unapproved run was claimed: %v", err)
	}
	if err := st.SetFailoverStatus(ctx, id, []model.RunStatus{model.RunPending}, model.RunApproved, 2); err != nil {
		t.Fatal(err)
	}
	if err := claim(1, "A"); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("step 2 claimed before step 1 is done: %v", err)
	}
	if err := claim(0, "A"); err != nil {
		t.Fatal(err)
	}
	if err := claim(0, "A"); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("a running step was claimed again by its own runner: %v", err)
	}
	if err := claim(1, "B"); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("step 2 claimed while step 1 runs: %v", err)
	}
	r, _ := st.FailoverRun(ctx, id)
	if r.Status != "running" || r.Steps[0].Runner != "A" || r.Steps[0].Attempts != 1 {
		t.Fatalf("after the claim: run %s, step %+v", r.Status, r.Steps[0])
	}
	// Runner A died: B resumes the interrupted step.
	if err := claim(0, "B"); err != nil {
		t.Fatalf("an interrupted step was not resumed: %v", err)
	}
	// A's late outcome is not B's: refused.
	outcome := func(runner string) storage.StepOutcome {
		return storage.StepOutcome{RunID: id, Idx: 0, Runner: runner, Result: "{}", AtMs: 3,
			Record: model.AuditEntry{Actor: "bob", Action: "failover.step-done", Subject: "failover-run:1"}}
	}
	if err := st.FinishFailoverStep(ctx, outcome("A")); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("a stale runner finished the step: %v", err)
	}
	// No audit record, no state change: the outcome stays unwritten, and
	// a release leaves the step interrupted for the next claim.
	storagetest.FailAuditWrites(t, path, true)
	if err := st.FinishFailoverStep(ctx, outcome("B")); err == nil {
		t.Fatal("an outcome was recorded without its audit record")
	}
	if r, _ := st.FailoverRun(ctx, id); r.Steps[0].Status != "running" {
		t.Fatalf("step is %s after an outcome whose record failed", r.Steps[0].Status)
	}
	if err := st.ReleaseFailoverStep(ctx, id, 0, "B"); err != nil {
		t.Fatal(err)
	}
	if err := claim(0, "B"); err == nil {
		t.Fatal("a step was claimed without its audit record")
	}
	r, _ = st.FailoverRun(ctx, id)
	if r.Steps[0].Status != "running" || r.Steps[0].Runner != "" || r.Steps[0].Attempts != 2 {
		t.Fatalf("a claim whose record failed changed the step: %+v", r.Steps[0])
	}
	starts, _ := st.AuditEntries(ctx, storage.AuditFilter{Action: "failover.step-start"})
	if len(starts) != 2 {
		t.Fatalf("%d step starts on record, want 2 (A's and B's)", len(starts))
	}
}

// Accounts that existed before creators were recorded take theirs from
// the audit chain's user.create record when the database is upgraded.
func TestUpgradeTakesAccountCreatorsFromAudit(t *testing.T) {
	path := oldSchema(t, 6) // before migration 7
	ctx := context.Background()
	rawDB(t, path, `INSERT INTO users(name, role, created_ms) VALUES ('bob', 'operator', 1), ('old', 'operator', 1)`)
	st, err := storage.OpenAtVersion(path, 6)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AppendAudit(ctx, model.AuditEntry{Actor: "alice", Action: "user.create", Subject: "user:bob"}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st, err = storage.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for name, want := range map[string]string{"bob": "alice", "old": ""} {
		if o, err := st.AccountOrigins(ctx, name); err != nil || len(o) != 1 || o[0].CreatedBy != want {
			t.Errorf("%s after the upgrade: %+v %v, want created by %q", name, o, err, want)
		}
	}
}

func TestFailoverRunCounts(t *testing.T) {
	st, _ := openStore(t)
	ctx := context.Background()
	plan := "{}"
	create := func(flow string) int64 {
		id, _, err := st.CreateFailoverRun(ctx, model.Run{Flow: flow, Reason: "r", CreatedBy: "alice", CreatedMs: 1, PlanJSON: plan, PlanHash: "h",
			ApprovalsRequired: 1}, []string{"preflight"}, model.AuditEntry{Actor: "alice", Action: "failover.plan", Subject: flow})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	create("a")
	create("a")
	cancelled := create("a")
	create("b")
	plan = `{"flow":"b","steps":[],"drill":true}` // a drill is not a failover
	create("b")
	if _, err := st.CancelFailoverRun(ctx, cancelled, []model.RunStatus{model.RunPending}, 2, model.AuditEntry{Actor: "alice", Action: "failover.cancel"}); err != nil {
		t.Fatal(err)
	}
	got, err := st.FailoverRunCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []storage.RunCount{{"a", model.RunCancelled, 1}, {"a", model.RunPending, 2}, {"b", model.RunPending, 1}}
	if len(got) != len(want) {
		t.Fatalf("%+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%+v, want %+v", got, want)
		}
	}
}

// A run's plan record names the run it created, in its hashed details,
// though the record was made before the run had an id; a record whose
// details are not an object creates no run.
func TestPlanRecordNamesItsRun(t *testing.T) {
	st, _ := openStore(t)
	ctx := context.Background()
	for want := int64(1); want <= 2; want++ {
		id, rec, err := st.CreateFailoverRun(ctx, model.Run{Flow: "f", Reason: "r", CreatedBy: "alice", CreatedMs: 1, PlanJSON: "{}", PlanHash: "h",
			ApprovalsRequired: 1}, []string{"restore-flink"}, model.AuditEntry{Actor: "alice", Action: "failover.plan", Subject: "f",
			Details: json.RawMessage(`{"plan_hash":"h","reason":"r"}`)})
		if err != nil || id != want {
			t.Fatalf("run %d: %v", id, err)
		}
		stored, err := st.AuditEntries(ctx, storage.AuditFilter{Action: "failover.plan", Limit: 1})
		if err != nil || len(stored) != 1 || stored[0].ID != rec.ID || stored[0].Hash != rec.Hash {
			t.Fatalf("stored %+v (%v), returned %+v", stored, err, rec)
		}
		var d struct {
			RunID    int64  `json:"run_id"`
			PlanHash string `json:"plan_hash"`
		}
		if err := json.Unmarshal(stored[0].Details, &d); err != nil || d.RunID != id || d.PlanHash != "h" {
			t.Fatalf("run %d's plan record details %s", id, stored[0].Details)
		}
	}
	if n, bad, err := st.VerifyAudit(ctx); err != nil || bad != nil || n != 2 {
		t.Fatalf("chain: %d records, first bad %+v, %v", n, bad, err)
	}
	if _, _, err := st.CreateFailoverRun(ctx, model.Run{Flow: "f", Reason: "r", CreatedBy: "alice", CreatedMs: 1, PlanJSON: "{}", PlanHash: "h"},
		nil, model.AuditEntry{Actor: "alice", Action: "failover.plan", Subject: "f", Details: json.RawMessage(`[1]`)}); err == nil {
		t.Fatal("a plan record whose details are not an object created a run")
	}
	if runs, err := st.FailoverRuns(ctx, 10); err != nil || len(runs) != 2 {
		t.Fatalf("runs %d (%v)", len(runs), err)
	}
}
