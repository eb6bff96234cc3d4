package failover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/storage"
)

// After a completed failover the monitor says FAILED_OVER for the flow
// instead of judging the old direction's lag (monitor/failedover.go): the
// runbook tells it which flows are, from the store, so every console on
// the same database and one restarted agree; a completed failback takes
// the mark away.

// MarkFailedOver tells the monitor exactly which configured flows are
// failed over (DR active after a completed failover run), each with what
// the run's stop step saw not replicated at the cut. When a flow's side
// cannot be read the marks are left as they were (an error): a failed
// read must neither raise nor close anybody's alert.
func (rb Book) MarkFailedOver(ctx context.Context) error {
	if rb.Monitor == nil {
		return nil
	}
	// One pass at a time, read and publish: a pass that read before a
	// run completed cannot undo the one that read after.
	rb.state().marksMu.Lock()
	defer rb.state().marksMu.Unlock()
	marks := map[string]model.FailedOver{}
	for _, f := range rb.Config.Flows {
		a, err := ActiveSideOf(ctx, rb.Store, f.Name)
		if err != nil {
			return err
		}
		if a.Side != model.SideDR {
			continue
		}
		m, err := rb.failedOverMark(ctx, a)
		if err != nil {
			return err
		}
		marks[f.Name] = m
	}
	rb.Monitor.SetFailedOver(marks)
	return nil
}

// markFailedOver is MarkFailedOver with its error logged.
func (rb Book) markFailedOver(ctx context.Context) {
	if err := rb.MarkFailedOver(ctx); err != nil && ctx.Err() == nil {
		rb.Log.Error("reading which flows are failed over", "err", err)
	}
}

// failedOverMark is a's mark with the cut's figures, read once per run
// (a completed run's records do not change); under rb.state().marksMu.
func (rb Book) failedOverMark(ctx context.Context, a model.ActiveSide) (model.FailedOver, error) {
	if m, ok := rb.state().marks[a.Run]; ok {
		return m, nil
	}
	m := model.FailedOver{Run: a.Run, SinceMs: a.SinceMs}
	ev, err := rb.cutEvidence(ctx, a.Run)
	if err != nil {
		return m, err
	}
	m.CutAtMs, m.CutRPOMs, m.CutLagOffsets = ev.atMs(), ev.RPOMs, ev.LagMessages
	if rb.state().marks == nil {
		rb.state().marks = map[int64]model.FailedOver{}
	}
	rb.state().marks[a.Run] = m
	return m, nil
}

// cutStepEvidence is what the step that stopped the mirror recorded of
// the flow (Runbook.evidence) in its audit record.
type cutStepEvidence struct {
	AsOf        time.Time `json:"as_of"`
	RPOMs       *int64    `json:"rpo_ms"`
	LagMessages *int64    `json:"lag_messages"`
}

func (e cutStepEvidence) atMs() int64 {
	if e.AsOf.IsZero() {
		return 0
	}
	return e.AsOf.UnixMilli()
}

// cutEvidence reads the evidence of run's first finished step that
// stopped the mirror (stop-mirror, or a Cluster Linking flow's
// promote/failover); zero when none was recorded.
func (rb Book) cutEvidence(ctx context.Context, run int64) (cutStepEvidence, error) {
	subject := runbook.RunSubject(run)
	recs, err := rb.Store.AuditEntries(ctx, storage.AuditFilter{Action: string(audit.FailoverStepDone), Subject: subject, Oldest: true})
	if err != nil {
		return cutStepEvidence{}, fmt.Errorf("failover run %d: reading its step records: %w", run, err)
	}
	for _, r := range recs {
		if r.Subject != subject { // the filter matches failover-run:12 for run 1
			continue
		}
		var d struct {
			Kind     runbook.StepKind `json:"kind"`
			Evidence cutStepEvidence  `json:"evidence"`
		}
		if err := json.Unmarshal(r.Details, &d); err != nil {
			return cutStepEvidence{}, errors.Join(fmt.Errorf("failover run %d: step record %d unreadable", run, r.ID), err)
		}
		if Is(d.Kind, cutsMirror) {
			return d.Evidence, nil
		}
	}
	return cutStepEvidence{}, nil
}
