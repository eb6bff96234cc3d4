package failover

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
)

// RunDrill starts drill run id (Runbook.StartDrill: approved, never
// started, the flow's name typed) and runs it in the background: every
// step in order, then, whatever their outcome, the cleanup. It returns
// once the drill is on record.
func (w *Worker) RunDrill(ctx context.Context, who runbook.Actor, id int64, confirmation string) error {
	jctx, done, err := w.admit(ctx, fmt.Sprintf("drill run %d", id))
	if err != nil {
		return err
	}
	if !w.claimDrill(id) {
		done()
		return fmt.Errorf("drill %d runs already", id)
	}
	r, err := book(w.Runbook).StartDrill(ctx, who, id, confirmation)
	if err != nil {
		w.releaseDrill(id)
		done()
		return err
	}
	go func() {
		defer done()
		defer w.releaseDrill(id)
		why := ""
		for idx := range r.Plan.Steps {
			x, err := w.Runbook.Begin(jctx, who, id, idx, confirmation, "")
			if err == nil {
				w.setStep(id, idx, true)
				x.Progress = func(s string) { w.setProgress(id, idx, s) }
				err = x.Perform(jctx)
				w.setStep(id, idx, false)
			}
			if err != nil {
				why = fmt.Sprintf("step %d: %v", idx+1, err)
				w.log().Error("drill step failed", "run", id, "step", idx+1, "err", err)
				break
			}
		}
		// The cleanup runs even when the console is shutting down and the
		// steps were cancelled: with a context of its own, bounded.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(jctx), 2*time.Minute)
		defer cancel()
		if err := book(w.Runbook).CleanupDrill(cctx, who, id, why); err != nil {
			w.log().Error("drill cleanup failed: retried later", "run", id, "err", err)
		}
	}()
	return nil
}

func (w *Worker) claimDrill(id int64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.drills == nil {
		w.drills = map[int64]bool{}
	}
	if w.drills[id] {
		return false
	}
	w.drills[id] = true
	return true
}

func (w *Worker) releaseDrill(id int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.drills, id)
}

// CleanDrills cleans up every drill whose cleanup is due and that does not
// run in this process: one whose cleanup failed (at its retry time), and,
// at start-up, every drill the previous process left unfinished (it is
// ended as failed, never resumed). It returns how many it tried.
func (w *Worker) CleanDrills(ctx context.Context) (int, error) {
	due, err := w.Runbook.Store.DrillsToClean(ctx, w.Runbook.Now().UnixMilli())
	if err != nil {
		return 0, err
	}
	tried := 0
	for _, d := range due {
		if !w.claimDrill(d.RunID) {
			continue // running here: its own goroutine cleans it
		}
		jctx, done, err := w.admit(ctx, fmt.Sprintf("drill run %d cleanup", d.RunID))
		if err != nil {
			w.releaseDrill(d.RunID)
			return tried, err
		}
		tried++
		why := "the console stopped during the drill"
		if d.Cleanup == model.CleanupFailed {
			why = ""
		}
		cctx, cancel := context.WithTimeout(jctx, 2*time.Minute)
		if err := book(w.Runbook).CleanupDrill(cctx, drillActor, d.RunID, why); err != nil {
			w.log().Error("drill cleanup failed: retried later", "run", d.RunID, "err", err)
		}
		cancel()
		done()
		w.releaseDrill(d.RunID)
	}
	return tried, nil
}

// CleanDrillsEvery runs CleanDrills now (the drills a crash left behind)
// and then every interval until ctx ends. cli runs it for the console's
// lifetime.
func (w *Worker) CleanDrillsEvery(ctx context.Context, interval time.Duration) {
	for {
		if _, err := w.CleanDrills(ctx); err != nil && ctx.Err() == nil && !errors.Is(err, runbook.ErrShuttingDown) {
			w.log().Error("drill cleanup pass", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}
