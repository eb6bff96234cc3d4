package storage_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// A run's last known lost-to-DR figures: a newer read replaces a
// partition's figures, an older one (a slower page's write) does not, and
// another run has none.
func TestLostLastKeepsTheNewestFigures(t *testing.T) {
	st, _ := openStore(t)
	ctx := context.Background()
	id, _, err := st.CreateFailoverRun(ctx, model.Run{Flow: "f", Reason: "r", CreatedBy: "alice", CreatedMs: 1, PlanJSON: "{}", PlanHash: "h",
		ApprovalsRequired: 1}, []string{"stop-mirror"}, model.AuditEntry{Actor: "alice", Action: "failover.plan", Subject: "f"})
	if err != nil {
		t.Fatal(err)
	}
	first := []storage.LostFigure{{Topic: "a", Partition: 0, AsOfMs: 10, Figures: `{"n":1}`}, {Topic: "a", Partition: 1, AsOfMs: 10, Figures: `{"n":2}`}}
	if err := st.SaveLostLast(ctx, id, first); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveLostLast(ctx, id, []storage.LostFigure{{Topic: "a", Partition: 0, AsOfMs: 20, Figures: `{"n":3}`}}); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveLostLast(ctx, id, []storage.LostFigure{{Topic: "a", Partition: 1, AsOfMs: 5, Figures: `{"n":0}`}}); err != nil {
		t.Fatal(err)
	}
	got, err := st.LostLast(ctx, id)
	want := []storage.LostFigure{{Topic: "a", Partition: 0, AsOfMs: 20, Figures: `{"n":3}`}, first[1]}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v %v, want %+v", got, err, want)
	}
	if none, err := st.LostLast(ctx, id+1); err != nil || len(none) != 0 {
		t.Fatalf("another run: %+v %v", none, err)
	}
}
