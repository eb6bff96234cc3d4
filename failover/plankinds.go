package failover

import (
	"context"
	"fmt"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/model"
)

// PlanType is how one kind of plan titles, checks, previews and runs its
// steps. The engine asks planTypes and knows no kind by name.
type PlanType interface {
	// Title of step i; "" when its step kind's Title says it.
	Title(p Plan, i int, flow *config.Flow) string
	// Problems says what makes p unfit as a plan of this kind.
	Problems(cfg *config.Config, p Plan) []error
	// Rules are checked when step i starts; override is the operator's
	// reason to pass the overridable ones.
	Rules(ctx context.Context, rb *Runbook, r *Run, i int, override string) []RuleResult
	// Preview is step i's rules and what it will change, computed now.
	Preview(ctx context.Context, rb *Runbook, r *Run, i int) ([]RuleResult, []string, error)
	// Do performs step i of the execution.
	Do(ctx context.Context, w audit.Written, e *Execution) (any, error)
	// Running is called before a step runs; the func it returns after.
	Running(ctx context.Context, rb *Runbook) func()
	// SwitchesSides: a completed run makes the other side active.
	SwitchesSides() bool
	// RestsOn is step i's kind when it may rest on inputs; nil if not.
	RestsOn(p Plan, i int) RestingStep
	// CutsForward: a run cuts the forward mirror for good, so what it
	// would lose, or lost, at the cut is the operator's question.
	CutsForward() bool
	// Target is the side a run moves work to: its rules judge that side,
	// and a completed one leaves it active (drills are not read).
	Target() model.Side
	// Stamp copies into p what its approval must cover besides the form.
	Stamp(p *Plan, cfg *config.Config)
	// DRGroup is the DR group a run commits group's offsets to.
	DRGroup(run int64, group string) string
	// RestoreArgs are the program arguments the restore of s submits.
	RestoreArgs(r *Run, s Step) []string
}

// asPlanned is the default of a plan kind that runs its steps as written:
// no stamp, the plan's own groups and job arguments.
type asPlanned struct{}

func (asPlanned) Stamp(*Plan, *config.Config)          {}
func (asPlanned) DRGroup(_ int64, group string) string { return group }
func (asPlanned) RestoreArgs(_ *Run, s Step) []string  { return s.Args }

var planTypes = map[PlanKind]PlanType{
	PlanFailover: failoverKind{},
	PlanDrill:    drillKind{},
	PlanFailback: failbackKind{},
}

// kind is the plan's kind; Validate refuses a plan whose kind is not
// registered, so every stored plan has one.
func (p Plan) kind() PlanType {
	if k, ok := planTypes[p.Kind]; ok {
		return k
	}
	return failoverKind{}
}

// step is step kind k of a failover plan; nil for a kind that exists only
// in another plan kind.
func step(k StepKind) stepKind { return stepKinds[k] }

// failoverKind runs each step as its kind says.
type failoverKind struct{ asPlanned }

func (failoverKind) Title(Plan, int, *config.Flow) string { return "" }
func (failoverKind) Problems(cfg *config.Config, p Plan) []error {
	return failbackStepsElsewhere(p)
}
func (failoverKind) Running(context.Context, *Runbook) func() { return func() {} }
func (failoverKind) RestsOn(p Plan, i int) RestingStep        { return RestingStepOf(p.Steps[i].Kind) }
func (failoverKind) SwitchesSides() bool                      { return true }
func (failoverKind) CutsForward() bool                        { return true }
func (failoverKind) Target() model.Side                       { return model.SideDR }
func (failoverKind) Rules(ctx context.Context, rb *Runbook, r *Run, i int, override string) []RuleResult {
	if k := step(r.Plan.Steps[i].Kind); k != nil {
		return k.rules(ctx, rb, r, i, override)
	}
	return nil
}
func (failoverKind) Preview(ctx context.Context, rb *Runbook, r *Run, i int) ([]RuleResult, []string, error) {
	k := step(r.Plan.Steps[i].Kind)
	if k == nil {
		return nil, nil, nil
	}
	rules := k.rules(ctx, rb, r, i, "")
	lines, err := k.preview(ctx, rb, r, i)
	return rules, lines, err
}
func (failoverKind) Do(ctx context.Context, w audit.Written, e *Execution) (any, error) {
	if k := step(e.Step.Kind); k != nil {
		return k.do(ctx, w, e)
	}
	return nil, fmt.Errorf("unknown step kind %q", e.Step.Kind)
}

// drillKind runs a failover's steps as a rehearsal (drill.go).
type drillKind struct{}

func (drillKind) Title(p Plan, i int, _ *config.Flow) string {
	if k, ok := drillSteps[p.Steps[i].Kind]; ok {
		return k.title(p.Steps[i])
	}
	return ""
}
func (drillKind) Problems(cfg *config.Config, p Plan) []error {
	return append(drillProblems(cfg, p), failbackStepsElsewhere(p)...)
}
func (drillKind) Running(context.Context, *Runbook) func() { return func() {} }
func (drillKind) RestsOn(p Plan, i int) RestingStep        { return RestingStepOf(p.Steps[i].Kind) }
func (drillKind) SwitchesSides() bool                      { return false }
func (drillKind) CutsForward() bool                        { return false }
func (drillKind) Target() model.Side                       { return model.SideDR }
func (drillKind) Stamp(p *Plan, cfg *config.Config)        { stampDrill(p, cfg) }
func (drillKind) DRGroup(run int64, group string) string   { return DrillGroup(run, group) }
func (drillKind) RestoreArgs(r *Run, s Step) []string      { return drillArgs(r, s) }

// Rules: a failover's Rules do not stop a drill (its preflight records
// the ones that would fail); the drill's guards, a rewrite's correctness
// Rules among them, do.
func (drillKind) Rules(ctx context.Context, rb *Runbook, r *Run, i int, _ string) []RuleResult {
	return rb.drillGuards(ctx, r, i)
}
func (drillKind) Preview(ctx context.Context, rb *Runbook, r *Run, i int) ([]RuleResult, []string, error) {
	rules, lines, err := failoverKind{}.Preview(ctx, rb, r, i)
	if k, ok := drillSteps[r.Plan.Steps[i].Kind]; ok {
		lines = append(k.preview(r, i, rb.Config.Drill.Timeout.D()), lines...)
	}
	return rules, lines, err
}
func (drillKind) Do(ctx context.Context, w audit.Written, e *Execution) (any, error) {
	if k, ok := drillSteps[e.Step.Kind]; ok {
		return k.do(ctx, w, e)
	}
	return nil, fmt.Errorf("step kind %q is not part of a drill", e.Step.Kind)
}

// failbackKind returns a flow to the primary (failback.go).
type failbackKind struct{ asPlanned }

func (failbackKind) Title(p Plan, i int, flow *config.Flow) string {
	return failbackTitle(p, p.Steps[i], flow)
}
func (failbackKind) Problems(cfg *config.Config, p Plan) []error { return failbackProblems(cfg, p) }
func (failbackKind) RestsOn(p Plan, i int) RestingStep {
	rs, _ := backSteps[p.Steps[i].Kind].(RestingStep)
	return rs
}
func (failbackKind) SwitchesSides() bool { return true }
func (failbackKind) CutsForward() bool   { return false }
func (failbackKind) Target() model.Side  { return model.SidePrimary }

// Running: the reverse flow shows on the pages from the moment its
// connectors may exist to the moment they are stopped, not at the next
// pass of WatchReverseFlowsEvery.
func (failbackKind) Running(ctx context.Context, rb *Runbook) func() {
	rb.watchReverse(ctx)
	return func() { rb.watchReverse(context.WithoutCancel(ctx)) }
}
func (failbackKind) Rules(ctx context.Context, rb *Runbook, r *Run, i int, _ string) []RuleResult {
	return rb.failbackRules(ctx, r, i)
}
func (failbackKind) Preview(ctx context.Context, rb *Runbook, r *Run, i int) ([]RuleResult, []string, error) {
	rules := rb.failbackRules(ctx, r, i)
	lines, err := rb.previewFailback(ctx, r, i)
	return rules, lines, err
}
func (failbackKind) Do(ctx context.Context, _ audit.Written, e *Execution) (any, error) {
	return e.failbackEffect(ctx)
}
