package runbook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// What a failover step rests on, checked again when it starts (issue 28):
// a plan approved minutes ago may name a savepoint whose positions DR's
// retention has deleted since, or one whose verdict was never known. Every
// step that moves a group or restores a job re-checks, at its start, DR's
// reachability, the catalog's verdict of its savepoint for a restore in DR
// and its positions against DR's current log start. A check that fails or
// cannot be made refuses the step, with the reason; only an operator other
// than the requester may override it (StepArgs.InputsOverride), and the
// override is in the step's start record.
//
// A DR drill's translate, rewrite and restore steps are checked as a
// failover's: they read DR. A failback's translate-group-back,
// rewrite-savepoint-back and restore-flink from its rewritten savepoint
// move positions back to the primary, so they are checked against the
// primary's reachability and current log start (logSide).

// StepArgs are what an operator types to run a step.
type StepArgs struct {
	// Confirmation is the flow's name, for an irreversible step.
	Confirmation string
	// Override is the reason to proceed despite the overridable lag and
	// heartbeat rules.
	Override string
	// InputsOverride is the reason to proceed although what the step
	// rests on (a savepoint's verdict, positions in DR) is unusable or
	// unknown: the second operator's, never the requester's.
	InputsOverride string
}

// ErrInputsOverrideByRequester: the requester may not override the check
// of a step's inputs.
var ErrInputsOverrideByRequester = errors.New("only an operator other than the requester may override what a step rests on")

// inputsTimeout bounds the reads of a step's input checks.
const inputsTimeout = 15 * time.Second

// InputChecks re-checks what step idx of r rests on, now; nil for steps
// that rest on no savepoint or group position. The rules are
// SecondOperator: only StepArgs.InputsOverride, from someone other than
// the requester, overrides them.
func (rb *Runbook) InputChecks(ctx context.Context, r *Run, idx int) []RuleResult {
	if !r.Plan.RestsOnInputs(idx) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, inputsTimeout)
	defer cancel()
	var rules []RuleResult
	add := func(rr RuleResult) {
		rr.Overridable, rr.SecondOperator = !rr.OK, !rr.OK
		rules = append(rules, rr)
	}
	side, name := r.Plan.kind().Target(), "DR cluster reachable now"
	if side == model.SidePrimary {
		name = "primary cluster reachable now"
	}
	switch {
	case rb.Flows == nil: // nothing reads the flows: unknown, never assumed reachable
		add(RuleResult{Name: name, OK: false, Evidence: "unknown: this console reads no flow state"})
	default:
		if reach := rb.Flows.Reach(r.Flow, side); reach.Read {
			add(RuleResult{Name: name, OK: reach.OK, Evidence: reach.Text})
		}
	}
	if k := r.Plan.kind().RestsOn(r.Plan, idx); k != nil {
		for _, rr := range k.InputRules(ctx, rb, r, idx) {
			add(rr)
		}
	}
	return rules
}

// RestsOnInputs reports whether step i of p is checked, when it starts,
// against what it rests on (a savepoint, positions in DR or, for a
// failback, on the primary): the group moves, rewrites and restores from
// a savepoint of a failover, a drill and a failback.
func (p Plan) RestsOnInputs(i int) bool {
	if i < 0 || i >= len(p.Steps) {
		return false
	}
	k := p.kind().RestsOn(p, i)
	return k != nil && k.RestsOnInputs(p.Steps[i])
}

// RestingStep is a step kind that may rest on a savepoint or on group
// positions, re-checked by inputRules when it starts.
type RestingStep interface {
	RestsOnInputs(s Step) bool
	// InputRules are its rules, before rb.inputRules marks them
	// overridable by a second operator only.
	InputRules(ctx context.Context, rb *Runbook, r *Run, i int) []RuleResult
}

// applyInputsOverride lets who's typed reason override the failing input
// rules, when who is not the run's requester.
func applyInputsOverride(rules []RuleResult, r *Run, who Actor, reason string) error {
	if strings.TrimSpace(reason) == "" {
		return nil
	}
	if samePerson(who.Name, r.CreatedBy) {
		return ErrInputsOverrideByRequester
	}
	for i := range rules {
		if rules[i].SecondOperator && !rules[i].OK {
			rules[i].Overridden = reason + " (override by " + who.Name + ")"
		}
	}
	return nil
}

// planInputs are the input checks of every step of r as its approver sees
// them, for the approval's record: a step later says what changed since.
func (rb *Runbook) planInputs(ctx context.Context, r *Run) map[string][]RuleResult {
	out := map[string][]RuleResult{}
	for i := range r.Plan.Steps {
		if rules := rb.InputChecks(ctx, r, i); len(rules) > 0 {
			out[fmt.Sprint(i+1)] = rules
		}
	}
	return out
}

// changedSinceApproval compares step idx's input checks now with those
// the newest approval of the current plan recorded, and says what changed
// ("" entries never). An approval that recorded none (from before this
// check) compares nothing.
func (rb *Runbook) changedSinceApproval(ctx context.Context, r *Run, idx int, now []RuleResult) []string {
	es, err := rb.Store.AuditEntries(ctx, storage.AuditFilter{Action: string(audit.FailoverApprove), Subject: RunSubject(r.ID)})
	if err != nil {
		return []string{"the approval's record could not be read: " + err.Error()}
	}
	for _, e := range es { // newest first
		if e.Subject != RunSubject(r.ID) {
			continue
		}
		var d struct {
			PlanHash string                  `json:"plan_hash"`
			Inputs   map[string][]RuleResult `json:"inputs"`
		}
		if json.Unmarshal([]byte(e.Details), &d) != nil || d.PlanHash != r.PlanHash || d.Inputs == nil {
			continue
		}
		then := d.Inputs[fmt.Sprint(idx+1)]
		var out []string
		for _, n := range now {
			i := slices.IndexFunc(then, func(t RuleResult) bool { return t.Name == n.Name })
			switch {
			case i < 0:
				out = append(out, fmt.Sprintf("%s: not checked at approval; now %s", n.Name, mark(n)))
			case then[i].OK != n.OK:
				out = append(out, fmt.Sprintf("%s: at approval by %s %s; now %s", n.Name, e.Actor, mark(then[i]), mark(n)))
			}
		}
		return out
	}
	return nil
}

func mark(r RuleResult) string {
	if r.OK {
		return "✓ " + r.Evidence
	}
	return "✗ " + r.Evidence
}
