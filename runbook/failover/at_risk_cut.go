package failover

import (
	"encoding/json"
	"strconv"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
)

// lostAtCut is the data at risk once the mirror stopped, for the stop
// step's result and the run's summary. A figure read before the stop
// finished is a lower bound: the primary may have taken records until the
// cut that the read did not see.
func (rb Book) lostAtCut(flow string) *LossRecord {
	a, ok := rb.AtRisk(flow)
	if !ok {
		return nil
	}
	now := rb.Now()
	if !a.AsOf.IsZero() && a.AsOf.Before(now) && !a.AtLeast {
		a.AtLeast = true
		a.Why = append(a.Why, "read before the mirror stopped: records the primary took until the cut are not counted")
	}
	return a.Record(now)
}

// LostAtCut is the run's summary of what its failover lost at the cut,
// "≥ N offsets / X s not in DR (…)", as its stop-mirror step recorded it;
// "" before that step is done or for a run that has none.
func LostAtCut(r *runbook.Run) string {
	for i, s := range r.Plan.Steps {
		if !Is(s.Kind, countsLoss) || !kindOf(r.Plan).CutsForward() || i >= len(r.Steps) || r.Steps[i].Status != model.StepDone {
			continue
		}
		var res mirrorStopped
		if json.Unmarshal([]byte(r.Steps[i].Result), &res) == nil && res.V == 0 && res.LostAtCut != nil && res.LostAtCut.Text != "" {
			return res.LostAtCut.Text
		}
		return "not recorded by step " + strconv.Itoa(i+1) + " (a run from before the console recorded it)"
	}
	return ""
}

// RunAtRisk states, for the run page and its approval box, what run's
// failover would lose if it cut now; "" when that is not the question: a
// drill or a failback, a Cluster Linking flow (its steps state their
// mirrors'), a run that has stopped the mirror (LostAtCut says what it
// lost) or has ended.
func (rb Book) RunAtRisk(r *runbook.Run) string {
	if !kindOf(r.Plan).CutsForward() || LostAtCut(r) != "" {
		return ""
	}
	switch r.Status {
	case model.RunPending, model.RunApproved, model.RunRunning, model.RunFailed:
	default:
		return ""
	}
	a, ok := rb.AtRisk(r.Flow)
	if !ok {
		return ""
	}
	return a.Text(rb.Now())
}
