package failover

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/storage"
)

// sideAfter is the side a completed run leaves its flow on: a failback
// returns it to the primary, any other completed run (drills are not
// read) is a failover to DR.
func sideAfter(p runbook.Plan) model.Side {
	return kindOf(p).Target()
}

// activeSideOf reads the newest completed run of completed (newest first,
// drills excluded): the primary is active until a run completes.
func activeSideOf(flow string, completed []model.Run) (model.ActiveSide, error) {
	if len(completed) == 0 {
		return model.ActiveSide{Flow: flow, Side: model.SidePrimary}, nil
	}
	r := completed[0]
	var p runbook.Plan
	if err := json.Unmarshal([]byte(r.PlanJSON), &p); err != nil {
		return model.ActiveSide{}, fmt.Errorf("failover run %d: stored plan unreadable: %w", r.ID, err)
	}
	return model.ActiveSide{Flow: flow, Side: sideAfter(p), Run: r.ID, SinceMs: r.UpdatedMs}, nil
}

// ActiveSideOf says which side of flow is active: DR after a completed
// failover (not a drill), the primary otherwise.
func ActiveSideOf(ctx context.Context, store *storage.Store, flow string) (model.ActiveSide, error) {
	runs, err := store.CompletedFailovers(ctx, flow, 1)
	if err != nil {
		return model.ActiveSide{}, err
	}
	return activeSideOf(flow, runs)
}

// ActiveSides is ActiveSideOf for each flow named, in order; flows whose
// side could not be read are left out, with the first error.
func ActiveSides(ctx context.Context, store *storage.Store, flows []string) ([]model.ActiveSide, error) {
	var out []model.ActiveSide
	var first error
	for _, f := range flows {
		a, err := ActiveSideOf(ctx, store, f)
		if err != nil {
			first = cmp.Or(first, err)
			continue
		}
		out = append(out, a)
	}
	return out, first
}
