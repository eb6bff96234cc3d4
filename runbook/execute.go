package runbook

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// Execution is a step that passed its checks and is marked running; Run
// performs its effect and records the outcome. Splitting the two lets the
// web layer answer at once and show progress while the effect runs.
type Execution struct {
	Runbook *Runbook
	Run     *Run
	Idx     int
	Step    Step
	Who     Actor
	runner  string
	Rules   []RuleResult
	// Started is the step's start record, written with the claim: the
	// effect's proof that it is on record.
	Started audit.Written
	// Progress, when set, hears what a long step is waiting for (the
	// Worker shows it on the run page).
	Progress func(string)
}

// runner identifies this console process in the steps it claims. A step
// found running under another runner was interrupted (that process died)
// and may be resumed; one running under this runner is a live duplicate.
var runner atomic.Pointer[string]

func init() { Restarted() }

// Restarted gives the process a new identity; tests call it to stand for
// a restart.
func Restarted() {
	id := rand.Text()
	runner.Store(&id)
}

func RunnerID() string { return *runner.Load() }

// Begin checks that step idx of run id may run now and claims it: one
// conditional update in SQLite, with its audit record, so of concurrent
// requests exactly one starts the step and the others get an error
// wrapping storage.ErrConflict (and a refusal on record). Irreversible
// steps need confirmation to equal the flow's name. override, when not
// empty, is the operator's reason to proceed despite overridable safety
// rules (lag, heartbeats).
func (rb *Runbook) Begin(ctx context.Context, who Actor, id int64, idx int, confirmation, override string) (*Execution, error) {
	return rb.BeginWith(ctx, who, id, idx, StepArgs{Confirmation: confirmation, Override: override})
}

// BeginWith is Begin with every argument an operator types, among them
// the second operator's override of what the step rests on (inputs.go).
func (rb *Runbook) BeginWith(ctx context.Context, who Actor, id int64, idx int, args StepArgs) (*Execution, error) {
	confirmation, override := args.Confirmation, args.Override
	if !MayOperate(who) {
		return nil, ErrRole
	}
	r, err := rb.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if idx >= 0 && idx < len(r.Steps) {
		switch st := r.Steps[idx]; {
		case st.Status == model.StepDone:
			return nil, rb.refused(ctx, who, id, audit.FailoverStepStartRefused, map[string]any{"step": idx + 1, "status": st.Status},
				fmt.Errorf("step %d is done already: it never runs twice: %w", idx+1, storage.ErrConflict))
		case st.Status == model.StepRunning && st.Runner == RunnerID():
			return nil, rb.refused(ctx, who, id, audit.FailoverStepStartRefused, map[string]any{"step": idx + 1, "status": st.Status, "started_by": st.StartedBy},
				fmt.Errorf("step %d is running already (started by %s): it never runs twice at once: %w", idx+1, st.StartedBy, storage.ErrConflict))
		}
	}
	switch {
	case idx < 0 || idx >= len(r.Plan.Steps):
		return nil, fmt.Errorf("run %d has no step %d", id, idx+1)
	case r.Status != model.RunApproved && r.Status != model.RunRunning:
		return nil, fmt.Errorf("run %d is %s: %w", id, r.Status, ErrNotApproved)
	case !r.Approved:
		return nil, ErrNotApproved
	case idx != r.NextStep:
		return nil, ErrOrder
	}
	step := r.Plan.Steps[idx]
	if r.Plan.StepIrreversible(idx) && strings.TrimSpace(confirmation) != r.Flow {
		return nil, fmt.Errorf("%w: type the flow name %q to run this step", ErrConfirmation, r.Flow)
	}
	e := &Execution{Runbook: rb, Run: r, Idx: idx, Step: step, Who: who, runner: RunnerID()}
	e.Rules = r.Plan.kind().Rules(ctx, rb, r, idx, override)
	inputs := rb.InputChecks(ctx, r, idx)
	changed := rb.changedSinceApproval(ctx, r, idx, inputs)
	if err := applyInputsOverride(inputs, r, who, args.InputsOverride); err != nil {
		return nil, rb.refused(ctx, who, id, audit.FailoverStepRefused, map[string]any{"step": idx + 1, "kind": step.Kind,
			"inputs_override": args.InputsOverride}, err)
	}
	e.Rules = append(e.Rules, inputs...)
	if len(e.Rules) > 0 {
		if failed := Failed(e.Rules); len(failed) > 0 {
			msg := strings.Join(failed, "; ")
			if len(changed) > 0 {
				msg += "; changed since approval: " + strings.Join(changed, "; ")
			}
			return nil, rb.refused(ctx, who, id, audit.FailoverStepRefused, map[string]any{"step": idx + 1, "kind": step.Kind,
				"rules": e.Rules, "changed_since_approval": changed, "evidence": rb.Evidence(r.Flow)}, fmt.Errorf("%w: %s", ErrRuleViolation, msg))
		}
	}
	// The claim and its record are one transaction (storage.auditedTx);
	// the Written it yields is what the step's effect demands.
	e.Started, err = rb.Recorded(ctx, who, audit.FailoverStepStart, RunSubject(id), map[string]any{"step": idx + 1, "kind": step.Kind,
		"title": r.Plan.StepTitle(idx, rb.Config.Flow(r.Flow)), "params": step, "plan_hash": r.PlanHash, "approvers": r.ValidApprovers,
		"break_glass": r.BreakGlass, "rules": e.Rules, "override": override, "inputs_override": args.InputsOverride,
		"changed_since_approval": changed, "evidence": rb.Evidence(r.Flow)},
		func(rec model.AuditEntry) (model.AuditEntry, error) {
			return rb.Store.StartFailoverStep(ctx, storage.StepStart{RunID: id, Idx: idx, Runner: e.runner, Actor: who.Name, AtMs: rb.Now().UnixMilli(), Record: rec})
		})
	if errors.Is(err, storage.ErrConflict) {
		return nil, rb.refused(ctx, who, id, audit.FailoverStepStartRefused, map[string]any{"step": idx + 1, "kind": step.Kind}, err)
	}
	if err != nil {
		return nil, err
	}
	rb.Crash("started")
	return e, nil
}

// refused puts a refusal on record and returns why, joined with the audit
// failure if the record could not be written (the caller is refused either
// way: nothing happens).
func (rb *Runbook) refused(ctx context.Context, who Actor, id int64, action audit.Action, details any, why error) error {
	if err := rb.Audit.Record(ctx, who, action, RunSubject(id), details); err != nil {
		return errors.Join(why, fmt.Errorf("the refusal could not be written to the audit log: %w", err))
	}
	return why
}

func (rb *Runbook) Crash(point string) {
	if rb.CrashHook != nil {
		rb.CrashHook(point)
	}
}

// Perform performs the step's effect and records its result. It is safe to call
// again for a step found "running" after a crash: every effect is
// idempotent. The outcome, its audit record and (after the last step) the
// run's completion are one transaction; when that cannot be written the
// step is released, still running, so executing it again resumes it.
func (e *Execution) Perform(ctx context.Context) error {
	rb := e.Runbook
	defer e.Run.Plan.kind().Running(ctx, rb)()
	result, err := e.Run.Plan.kind().Do(ctx, e.Started, e)
	rb.Crash("effect-done")
	body, _ := json.Marshal(result)
	// Record with a fresh context: the outcome must be written even when
	// the request that started the step is gone.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	details := map[string]any{"step": e.Idx + 1, "kind": e.Step.Kind, "result": result, "evidence": rb.Evidence(e.Run.Flow)}
	action := audit.FailoverStepDone
	if err != nil {
		action, details["error"] = audit.FailoverStepFailed, err.Error()
	}
	o := storage.StepOutcome{RunID: e.Run.ID, Idx: e.Idx, Runner: e.runner, Result: string(body), Failure: err, AtMs: rb.Now().UnixMilli()}
	var ferr error
	o.Record, ferr = AuditEntry(e.Who, action, RunSubject(e.Run.ID), details)
	if err == nil && e.Idx == len(e.Run.Plan.Steps)-1 {
		c, cerr := AuditEntry(e.Who, audit.FailoverCompleted, RunSubject(e.Run.ID), map[string]any{"steps": len(e.Run.Plan.Steps)})
		o.Completed, ferr = &c, errors.Join(ferr, cerr)
	}
	if ferr == nil {
		ferr = rb.Store.FinishFailoverStep(wctx, o)
	}
	if ferr != nil {
		if rerr := rb.Store.ReleaseFailoverStep(wctx, e.Run.ID, e.Idx, e.runner); rerr != nil {
			ferr = errors.Join(ferr, rerr)
		}
		return errors.Join(err, fmt.Errorf("the outcome of step %d is not recorded, so the step stays running (interrupted): execute it again to resume it: %w", e.Idx+1, ferr))
	}
	if o.Completed != nil {
		e.Run.Plan.kind().Finished(wctx, rb)
	}
	return err
}
