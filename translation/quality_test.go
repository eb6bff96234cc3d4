package translation

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// A storage read that fails leaves no group looking fine: the configured
// groups are listed with the error, and the flow's worst is unknown.
func TestQualityFailsClosedOnStorageErrors(t *testing.T) {
	store, err := storage.Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.RecordPrimaryGroupOffsets(context.Background(), "f", []storage.GroupOffset{{Group: "billing", Topic: "events", Offset: 5, AtMs: 1}}); err != nil {
		t.Fatal(err)
	}
	store.Close()
	g := NewGroupTranslator(GroupTranslator{Flow: "f", Alias: "primary", Policy: mm2.ReplicationPolicy{Identity: true}, Index: mm2.NewSyncIndex(), Store: store}, nil, nil)
	q := g.Quality(context.Background(), QualityOptions{Configured: []model.GroupQuality{{Group: "billing", Critical: true, Objective: 10}}, Cap: 5, Now: time.Now()})
	if q.Err == "" || len(q.Groups) != 1 || q.Groups[0].Reread != nil || !strings.Contains(q.Groups[0].Problem, "closed") || !q.Groups[0].OverObjective() {
		t.Fatalf("with storage closed: %+v", q)
	}
	if w, bound, ok := q.Worst(); !ok || bound != nil || w.Group != "billing" {
		t.Fatalf("worst = %v %v %v", w, bound, ok)
	}
	// Inputs read with a failure are not to be kept for later refreshes.
	if in := g.ReadQualityInputs(context.Background(), []model.GroupQuality{{Group: "billing"}}, 5, time.Now()); in.Complete() {
		t.Fatal("inputs read from a closed store say they are complete")
	}
}
