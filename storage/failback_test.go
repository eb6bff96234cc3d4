package storage_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/drconsole/drconsole/model"
)

func cutOffset(v int64) *int64 { return &v }

// A run's cut keeps unknown positions unknown (NULL, not 0), and its first
// record stands: a resumed stop-mirror step does not overwrite it.
func TestFailoverCutKeepsUnknownsAndTheFirstRecord(t *testing.T) {
	st, _ := openStore(t)
	ctx := context.Background()
	id, _, err := st.CreateFailoverRun(ctx, model.Run{Flow: "f", Reason: "r", CreatedBy: "alice", CreatedMs: 1, PlanJSON: "{}", PlanHash: "h",
		ApprovalsRequired: 1}, []string{"stop-mirror"}, model.AuditEntry{Actor: "alice", Action: "failover.plan", Subject: "f"})
	if err != nil {
		t.Fatal(err)
	}
	cut := []model.CutPosition{
		{Topic: "a", Partition: 0, RemoteTopic: "a", DREnd: cutOffset(10), SyncUp: cutOffset(19), SyncDown: cutOffset(9), ConnectLast: cutOffset(19), AtMs: 5},
		{Topic: "a", Partition: 1, RemoteTopic: "a", AtMs: 5},
	}
	if err := st.SaveFailoverCut(ctx, id, cut); err != nil {
		t.Fatal(err)
	}
	later := []model.CutPosition{{Topic: "a", Partition: 0, RemoteTopic: "a", DREnd: cutOffset(50), AtMs: 9}}
	if err := st.SaveFailoverCut(ctx, id, later); err != nil {
		t.Fatal(err)
	}
	got, err := st.FailoverCut(ctx, id)
	if err != nil || !reflect.DeepEqual(got, cut) {
		t.Fatalf("got %+v %v, want %+v", got, err, cut)
	}
	if none, err := st.FailoverCut(ctx, id+1); err != nil || len(none) != 0 {
		t.Fatalf("a run without a cut: %+v %v", none, err)
	}
}

// The times a flow was failed over: a completed failover opens one, the
// next completed failback closes it; drills, runs not completed and other
// flows' runs count for nothing.
func TestFailedOverSpans(t *testing.T) {
	st, _ := openStore(t)
	ctx := context.Background()
	run := func(flow, plan string, status model.RunStatus, atMs int64) int64 {
		t.Helper()
		id, _, err := st.CreateFailoverRun(ctx, model.Run{Flow: flow, Reason: "r", CreatedBy: "alice", CreatedMs: 1, PlanJSON: plan, PlanHash: "h",
			ApprovalsRequired: 1}, []string{"stop-mirror"}, model.AuditEntry{Actor: "alice", Action: "failover.plan", Subject: flow})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.SetFailoverStatus(ctx, id, []model.RunStatus{model.RunPending}, status, atMs); err != nil {
			t.Fatal(err)
		}
		return id
	}
	a := run("f", `{"flow":"f"}`, model.RunCompleted, 100)
	run("f", `{"flow":"f","drill":true}`, model.RunCompleted, 150)
	run("other", `{"flow":"other"}`, model.RunCompleted, 160)
	run("f", `{"flow":"f","failback":true}`, model.RunFailed, 170)
	b := run("f", `{"flow":"f","failback":true,"failback_of":1}`, model.RunCompleted, 200)
	c := run("f", `{"flow":"f"}`, model.RunCompleted, 300)
	got, err := st.FailedOverSpans(ctx, "f")
	want := []model.FailedOverSpan{{Run: a, FromMs: 100, UntilMs: 200, UntilRun: b}, {Run: c, FromMs: 300}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v %v, want %+v", got, err, want)
	}
}
