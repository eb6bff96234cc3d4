package runbook

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/model"
)

// RollsBack is a plan kind whose runs can undo what they changed before
// their point of no return (a switchover's write fence): an operator's
// way back when a step finds the change did not hold.
type RollsBack interface {
	// Rollbackable says what a rollback of r would undo now; an error
	// says why there is nothing to roll back.
	Rollbackable(r *Run) (string, error)
	// Rollback undoes it; w is the rollback's audit record. Undoing what
	// is undone already changes nothing.
	Rollback(ctx context.Context, w audit.Written, rb *Runbook, r *Run) (any, error)
}

// ErrNoRollback: the run's kind undoes nothing, or there is nothing to undo.
var ErrNoRollback = errors.New("nothing to roll back")

// Rollbackable says what a rollback of run r would undo; ErrNoRollback
// (wrapped) when its kind has none or nothing is left.
func (rb *Runbook) Rollbackable(r *Run) (string, error) {
	k, ok := r.Plan.kind().(RollsBack)
	if !ok {
		return "", fmt.Errorf("a %s has no rollback: %w", r.Plan.Kind, ErrNoRollback)
	}
	return k.Rollbackable(r)
}

// Rollback undoes run id's reversible changes (its kind's Rollback),
// audited before and after, then cancels the run if it had not completed,
// so no later step runs on the undone change. One operator may: it puts
// the world back as it was before the run, which is what the approval
// gate protects.
func (rb *Runbook) Rollback(ctx context.Context, who Actor, id int64, reason string) error {
	if !MayOperate(who) {
		return ErrRole
	}
	r, err := rb.Get(ctx, id)
	if err != nil {
		return err
	}
	what, err := rb.Rollbackable(r)
	if err != nil {
		return rb.refused(ctx, who, id, audit.FailoverRollback, map[string]any{"refused": err.Error()}, err)
	}
	w, err := audit.New(rb.Store).Record(withClient(ctx, who), who.Name, audit.FailoverRollback, RunSubject(id),
		map[string]any{"undoes": what, "reason": reason, "evidence": rb.Evidence(r.Flow)})
	if err != nil {
		return err
	}
	result, rerr := r.Plan.kind().(RollsBack).Rollback(ctx, w, rb, r)
	// The outcome is written even when the request is gone.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	details := map[string]any{"result": result}
	action := audit.FailoverRollbackDone
	if rerr != nil {
		action, details["error"] = audit.FailoverRollbackFailed, rerr.Error()
	}
	if err := rb.Audit.Record(wctx, who, action, RunSubject(id), details); err != nil {
		return errors.Join(rerr, fmt.Errorf("the rollback's outcome could not be written to the audit log: %w", err))
	}
	if rerr != nil {
		return rerr
	}
	if r.Status == model.RunCompleted || r.Status == model.RunCancelled || r.Status == model.RunRejected {
		return nil
	}
	return rb.Cancel(wctx, who, id, "rolled back: "+reason)
}
