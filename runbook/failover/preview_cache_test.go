package failover

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/runbooktest"
)

// A recompute replaces the preview; viewers may not recompute; the page
// is told when what a preview was computed from has changed: a new sync,
// a changed catalog entry, a replaced plan.
// Serial, and its unchanged views are taken while no sync arrives
// (unchangedPreviews): the sandbox mirror keeps writing syncs.
func TestPreviewRecomputeAndChangedInputs(t *testing.T) {
	e := runbooktest.NewEnv(t, 1)
	ctx := context.Background()
	const path = "file:/savepoints/savepoint-preview-1"
	sp, err := e.Store.UpsertSavepoint(ctx, model.Savepoint{Path: path, Kind: model.KindSavepoint, Origin: model.OriginManual,
		Status: model.SavepointCompleted}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Store.SetSavepointOffsets(ctx, sp, `{"orders-0":7}`, "kafka-source", 4, ""); err != nil {
		t.Fatal(err)
	}
	plan := runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: KindPreflight}, {Kind: KindTranslateGroup, Group: "sp-group", FromSavepoint: path}}}
	id, err := e.RB.Create(ctx, runbooktest.Alice, plan, "preview drill")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := e.RB.Get(ctx, id)
	pv := unchangedPreviews(t, e, r, id)
	if !pv[1].Computed || len(pv[1].Changed) != 0 || !strings.Contains(strings.Join(pv[1].Lines, "\n"), "savepoint "+path) {
		t.Fatalf("first view: %+v", pv[1])
	}
	at := pv[1].At

	// A new offset sync ingested: the translation may differ.
	_, syncs := e.Mon.Activity("primary->dr")
	deadline := time.Now().Add(30 * time.Second)
	for _, n := e.Mon.Activity("primary->dr"); n == syncs; _, n = e.Mon.Activity("primary->dr") {
		if time.Now().After(deadline) {
			t.Fatal("no new offset sync in 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if pv = e.RB.Previews(ctx, r); !strings.Contains(strings.Join(pv[1].Changed, ";"), "offset syncs ingested") || !pv[1].At.Equal(at) {
		t.Fatalf("a new sync is not flagged (or the view recomputed): %+v", pv[1])
	}
	// The savepoint's offsets in the catalog changed.
	if err := e.Store.SetSavepointOffsets(ctx, sp, `{"orders-0":9}`, "kafka-source", 4, ""); err != nil {
		t.Fatal(err)
	}
	if pv = e.RB.Previews(ctx, r); !strings.Contains(strings.Join(pv[1].Changed, ";"), "savepoint catalog entry") {
		t.Fatalf("a changed catalog entry is not flagged: %+v", pv[1])
	}

	if err := e.RB.Recompute(ctx, runbooktest.Vera, id, 1); !errors.Is(err, runbook.ErrRole) {
		t.Fatalf("a viewer recomputed: %v", err)
	}
	e.Now = e.Now.Add(time.Minute)
	if err := e.RB.Recompute(ctx, runbooktest.Alice, id, 1); err != nil {
		t.Fatal(err)
	}
	pv = e.RB.Previews(ctx, r)
	if !pv[1].At.After(at) || strings.Contains(strings.Join(pv[1].Changed, ";"), "savepoint catalog entry") {
		t.Fatalf("recompute did not replace the preview: %+v", pv[1])
	}
	if err := e.RB.Recompute(ctx, runbooktest.Alice, id, 2); err == nil {
		t.Fatal("recomputed a step the plan does not have")
	}

	// The plan replaced: its old previews are not shown as the new plan's.
	plan.Steps = plan.Steps[:1]
	if err := e.RB.Update(ctx, runbooktest.Alice, id, plan, "one step only"); err != nil {
		t.Fatal(err)
	}
	r, _ = e.RB.Get(ctx, id)
	pv = e.RB.Previews(ctx, r)
	if len(pv) != 1 || pv[0].Computed || !strings.Contains(strings.Join(pv[0].Changed, ";"), "the plan was replaced") {
		t.Fatalf("a replaced plan's view: %+v", pv)
	}
	if err := e.RB.Recompute(ctx, runbooktest.Alice, id, 0); err != nil {
		t.Fatal(err)
	}
	if pv = unchangedPreviews(t, e, r, id); !pv[0].Computed || len(pv[0].Changed) != 0 {
		t.Fatalf("recompute after the plan changed: %+v", pv[0])
	}
}

// unchangedPreviews are run id's previews as computed while no offset sync
// was ingested: the sandbox mirror writes syncs all the time, and on a
// loaded machine one can land between computing a preview and reading it,
// which the preview rightly flags as a change. Recomputed until one view
// is taken with no sync in between.
func unchangedPreviews(t *testing.T, e *runbooktest.Env, r *runbook.Run, id int64) []runbook.CachedPreview {
	t.Helper()
	for range 20 {
		_, before := e.Mon.Activity(r.Flow)
		pv := e.RB.Previews(context.Background(), r)
		if _, after := e.Mon.Activity(r.Flow); after == before {
			return pv
		}
		if err := e.RB.Recompute(context.Background(), runbooktest.Alice, id, -1); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("an offset sync was ingested during each of 20 views")
	return nil
}
