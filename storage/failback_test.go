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
