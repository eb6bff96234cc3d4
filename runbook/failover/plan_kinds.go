package failover

import (
	"context"
	"fmt"
	"slices"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
)

// PlanKind is a plan kind whose steps are this package's: a PlanType,
// and what its steps ask of it besides the engine.
type PlanKind interface {
	runbook.PlanType
	// SwitchesSides: a completed run makes the other side active.
	SwitchesSides() bool
	// CutsForward: a run cuts the forward mirror for good, so what it
	// would lose, or lost, at the cut is the operator's question.
	CutsForward() bool
	// DRGroup is the DR group a run commits group's offsets to.
	DRGroup(run int64, group string) string
	// RestoreArgs are the program arguments the restore of s submits.
	RestoreArgs(r *runbook.Run, s runbook.Step) []string
}

var planKinds = map[runbook.PlanKind]PlanKind{
	runbook.PlanFailover: failoverKind{},
	runbook.PlanDrill:    drillKind{},
}

func init() {
	for k, t := range planKinds {
		runbook.Register(k, t)
	}
}

// kindOf is p's kind; a failover's when p's kind is not one of these
// (Validate refuses such a plan before it is stored).
func kindOf(p runbook.Plan) PlanKind {
	if k, ok := planKinds[p.Kind]; ok {
		return k
	}
	return failoverKind{}
}

// RegisterKind registers plan kind k of another package, from its init:
// with the engine, and here, for this package's steps in its plans.
func RegisterKind(k runbook.PlanKind, t PlanKind) {
	planKinds[k] = t
	runbook.Register(k, t)
}

// stepsElsewhere refuses p's steps of a kind another plan kind owns.
func stepsElsewhere(p runbook.Plan) []error {
	var errs []error
	for i, s := range p.Steps {
		if k, ok := onlyIn[s.Kind]; ok && k != p.Kind {
			errs = append(errs, &runbook.StepProblem{Step: i, Kind: s.Kind, Why: fmt.Sprintf("only in a %s plan", k)})
		}
	}
	return errs
}

// step is step kind k of a failover plan; nil for a kind that exists only
// in another plan kind.
func step(k runbook.StepKind) stepKind { return stepKinds[k] }

// AsPlanned is the default of a plan kind that runs its steps as written:
// the plan's own groups and job arguments, each step's own title,
// confirmation, plan checks and preview inputs.
type AsPlanned struct{}

func (AsPlanned) DRGroup(_ int64, group string) string                { return group }
func (AsPlanned) RestoreArgs(_ *runbook.Run, s runbook.Step) []string { return s.Args }
func (AsPlanned) Title(p runbook.Plan, i int, flow *config.Flow) string {
	return StepTitle(p.Steps[i], flow)
}
func (AsPlanned) Irreversible(p runbook.Plan, i int) bool { return irreversible(p.Steps[i]) }

// PartOf: the stop asks for the mirror's stop (or its topics' promotion
// or failover), the groups for their moves, the restore for the job's,
// the rewrite's destination for the rewrite.
func (AsPlanned) PartOf(k runbook.StepKind) runbook.Part {
	switch k {
	case KindStopMirror, KindPromoteMirrors, KindFailoverMirrors:
		return runbook.PartStop
	case KindTranslateGroup:
		return runbook.PartGroups
	case KindRestoreFlink:
		return runbook.PartRestore
	case KindRewriteSavepoint:
		return runbook.PartRewrite
	}
	return ""
}
func (AsPlanned) Refusals(context.Context, *runbook.Runbook, runbook.Plan) []error {
	return nil
}
func (AsPlanned) Inputs(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int) []runbook.PreviewInput {
	if k := step(r.Plan.Steps[i].Kind); k != nil {
		return k.inputs(ctx, rb, r, i)
	}
	return nil
}

// irreversible steps need a typed confirmation to run; every step but
// one that only reads does.
func irreversible(s runbook.Step) bool {
	if k := step(s.Kind); k != nil {
		return k.irreversible()
	}
	return true
}

// StepTitle says what step s does, as its step kind says it.
func StepTitle(s runbook.Step, flow *config.Flow) string {
	if k := step(s.Kind); k != nil {
		return k.title(s, flow)
	}
	return string(s.Kind)
}

// StepProblems are the plan checks of p's steps by their step kinds; a
// kind no plan kind knows is refused.
func StepProblems(cfg *config.Config, p runbook.Plan) []error {
	flow := cfg.Flow(p.Flow)
	var errs []error
	for i, s := range p.Steps {
		k := step(s.Kind)
		if _, other := onlyIn[s.Kind]; k == nil && !other { // their own plan kind checks those
			errs = append(errs, &runbook.StepProblem{Step: i, Kind: s.Kind, Why: "unknown step kind"})
		}
		if k == nil {
			continue
		}
		for _, why := range k.problems(cfg, flow, p, i) {
			errs = append(errs, &runbook.StepProblem{Step: i, Kind: s.Kind, Why: why})
		}
	}
	return errs
}

// failoverKind runs each step as its kind says.
type failoverKind struct{ AsPlanned }

// Irreversible: a failover asks for the typed flow name once, at its point
// of no return, the step that cuts the mirror (DR diverges from the
// primary from then on); a plan without one asks at its first step that
// changes anything. The steps after it change what the operators already
// committed to: a translation records the offsets it replaces, a restored
// job can be stopped.
func (failoverKind) Irreversible(p runbook.Plan, i int) bool { return i == confirmedAt(p) }

// confirmedAt is the step of p that asks for the typed confirmation.
func confirmedAt(p runbook.Plan) int {
	if i := First(p, cutsMirror); i >= 0 {
		return i
	}
	return slices.IndexFunc(p.Steps, irreversible)
}

func (failoverKind) Build(cfg *config.Config, q runbook.Request) runbook.Plan {
	return buildFailover(cfg, q)
}
func (failoverKind) Stamp(context.Context, *runbook.Runbook, *runbook.Plan) error {
	return nil
}
func (failoverKind) Problems(cfg *config.Config, p runbook.Plan) []error {
	return append(stepsElsewhere(p), StepProblems(cfg, p)...)
}
func (failoverKind) Refusals(ctx context.Context, rb *runbook.Runbook, p runbook.Plan) []error {
	return book(rb).refusals(ctx, p)
}
func (failoverKind) Running(context.Context, *runbook.Runbook) func() { return func() {} }
func (failoverKind) Finished(ctx context.Context, rb *runbook.Runbook) {
	book(rb).markFailedOver(ctx) // DR is active from now
}
func (failoverKind) RestsOn(p runbook.Plan, i int) runbook.RestingStep {
	return restingStepOf(p.Steps[i].Kind)
}
func (failoverKind) SwitchesSides() bool { return true }
func (failoverKind) CutsForward() bool   { return true }
func (failoverKind) Target() model.Side  { return model.SideDR }
func (failoverKind) Rules(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int, override string) []runbook.RuleResult {
	if k := step(r.Plan.Steps[i].Kind); k != nil {
		return k.rules(ctx, rb, r, i, override)
	}
	return nil
}
func (failoverKind) Preview(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int) ([]runbook.RuleResult, []string, error) {
	k := step(r.Plan.Steps[i].Kind)
	if k == nil {
		return nil, nil, nil
	}
	rules := k.rules(ctx, rb, r, i, "")
	lines, err := k.preview(ctx, rb, r, i)
	return rules, lines, err
}
func (failoverKind) Do(ctx context.Context, w audit.Written, e *runbook.Execution) (any, error) {
	if k := step(e.Step.Kind); k != nil {
		return k.do(ctx, w, e)
	}
	return nil, fmt.Errorf("unknown step kind %q", e.Step.Kind)
}

// drillKind runs a failover's steps as a rehearsal (drill.go).
type drillKind struct{ AsPlanned }

// Build: a drill never stops or promotes production's mirror.
func (drillKind) Build(cfg *config.Config, q runbook.Request) runbook.Plan {
	q.Stop = ""
	return buildFailover(cfg, q)
}
func (drillKind) Stamp(_ context.Context, rb *runbook.Runbook, p *runbook.Plan) error {
	stampDrill(p, rb.Config)
	return nil
}
func (drillKind) Title(p runbook.Plan, i int, flow *config.Flow) string {
	if k, ok := drillSteps[p.Steps[i].Kind]; ok {
		if t := k.title(p.Steps[i]); t != "" {
			return t
		}
	}
	return StepTitle(p.Steps[i], flow)
}
func (drillKind) Problems(cfg *config.Config, p runbook.Plan) []error {
	return slices.Concat(drillProblems(cfg, p), stepsElsewhere(p), StepProblems(cfg, p))
}
func (drillKind) Running(context.Context, *runbook.Runbook) func() { return func() {} }
func (drillKind) Finished(context.Context, *runbook.Runbook)       {}
func (drillKind) RestsOn(p runbook.Plan, i int) runbook.RestingStep {
	return restingStepOf(p.Steps[i].Kind)
}
func (drillKind) SwitchesSides() bool                                 { return false }
func (drillKind) CutsForward() bool                                   { return false }
func (drillKind) Target() model.Side                                  { return model.SideDR }
func (drillKind) DRGroup(run int64, group string) string              { return DrillGroup(run, group) }
func (drillKind) RestoreArgs(r *runbook.Run, s runbook.Step) []string { return drillArgs(r, s) }

// Rules: a failover's rules do not stop a drill (its preflight records
// the ones that would fail); the drill's guards, a rewrite's correctness
// rules among them, do.
func (drillKind) Rules(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int, _ string) []runbook.RuleResult {
	return book(rb).drillGuards(ctx, r, i)
}
func (drillKind) Preview(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int) ([]runbook.RuleResult, []string, error) {
	rules, lines, err := failoverKind{}.Preview(ctx, rb, r, i)
	if k, ok := drillSteps[r.Plan.Steps[i].Kind]; ok {
		lines = append(k.preview(r, i, rb.Config.Drill.Timeout.D()), lines...)
	}
	return rules, lines, err
}
func (drillKind) Do(ctx context.Context, w audit.Written, e *runbook.Execution) (any, error) {
	if k, ok := drillSteps[e.Step.Kind]; ok {
		return k.do(ctx, w, e)
	}
	return nil, fmt.Errorf("step kind %q is not part of a drill", e.Step.Kind)
}

// Failover is the failover's plan kind, for a plan kind of another
// package whose plans run the failover's steps among their own (the
// switchover): it checks, titles, previews and runs them as a failover
// does.
func Failover() PlanKind { return failoverKind{} }
