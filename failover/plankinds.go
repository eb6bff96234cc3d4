package failover

import (
	"context"
	"fmt"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/model"
)

// planKind is how one kind of plan titles, checks, previews and runs its
// steps. The engine asks planKinds and knows no kind by name.
type planKind interface {
	// title of step i; "" when its step kind's title says it.
	title(p Plan, i int, flow *config.Flow) string
	// problems says what makes p unfit as a plan of this kind.
	problems(cfg *config.Config, p Plan) []error
	// rules are checked when step i starts; override is the operator's
	// reason to pass the overridable ones.
	rules(ctx context.Context, rb *Runbook, r *Run, i int, override string) []RuleResult
	// preview is step i's rules and what it will change, computed now.
	preview(ctx context.Context, rb *Runbook, r *Run, i int) ([]RuleResult, []string, error)
	// do performs step i of the execution.
	do(ctx context.Context, w audit.Written, e *Execution) (any, error)
	// running is called before a step runs; the func it returns after.
	running(ctx context.Context, rb *Runbook) func()
	// switchesSides: a completed run makes the other side active.
	switchesSides() bool
	// restsOn is step i's kind when it may rest on inputs; nil if not.
	restsOn(p Plan, i int) restingStep
	// cutsForward: a run cuts the forward mirror for good, so what it
	// would lose, or lost, at the cut is the operator's question.
	cutsForward() bool
	// target is the side a run moves work to: its rules judge that side,
	// and a completed one leaves it active (drills are not read).
	target() model.Side
	// stamp copies into p what its approval must cover besides the form.
	stamp(p *Plan, cfg *config.Config)
	// drGroup is the DR group a run commits group's offsets to.
	drGroup(run int64, group string) string
	// restoreArgs are the program arguments the restore of s submits.
	restoreArgs(r *Run, s Step) []string
}

// asPlanned is the default of a plan kind that runs its steps as written:
// no stamp, the plan's own groups and job arguments.
type asPlanned struct{}

func (asPlanned) stamp(*Plan, *config.Config)          {}
func (asPlanned) drGroup(_ int64, group string) string { return group }
func (asPlanned) restoreArgs(_ *Run, s Step) []string  { return s.Args }

var planKinds = map[PlanKind]planKind{
	PlanFailover: failoverKind{},
	PlanDrill:    drillKind{},
	PlanFailback: failbackKind{},
}

// kind is the plan's kind; Validate refuses a plan whose kind is not
// registered, so every stored plan has one.
func (p Plan) kind() planKind {
	if k, ok := planKinds[p.Kind]; ok {
		return k
	}
	return failoverKind{}
}

// step is step kind k of a failover plan; nil for a kind that exists only
// in another plan kind.
func step(k StepKind) stepKind { return stepKinds[k] }

// failoverKind runs each step as its kind says.
type failoverKind struct{ asPlanned }

func (failoverKind) title(Plan, int, *config.Flow) string { return "" }
func (failoverKind) problems(cfg *config.Config, p Plan) []error {
	return failbackStepsElsewhere(p)
}
func (failoverKind) running(context.Context, *Runbook) func() { return func() {} }
func (failoverKind) restsOn(p Plan, i int) restingStep        { return restingStepOf(p.Steps[i].Kind) }
func (failoverKind) switchesSides() bool                      { return true }
func (failoverKind) cutsForward() bool                        { return true }
func (failoverKind) target() model.Side                       { return model.SideDR }
func (failoverKind) rules(ctx context.Context, rb *Runbook, r *Run, i int, override string) []RuleResult {
	if k := step(r.Plan.Steps[i].Kind); k != nil {
		return k.rules(ctx, rb, r, i, override)
	}
	return nil
}
func (failoverKind) preview(ctx context.Context, rb *Runbook, r *Run, i int) ([]RuleResult, []string, error) {
	k := step(r.Plan.Steps[i].Kind)
	if k == nil {
		return nil, nil, nil
	}
	rules := k.rules(ctx, rb, r, i, "")
	lines, err := k.preview(ctx, rb, r, i)
	return rules, lines, err
}
func (failoverKind) do(ctx context.Context, w audit.Written, e *Execution) (any, error) {
	if k := step(e.Step.Kind); k != nil {
		return k.do(ctx, w, e)
	}
	return nil, fmt.Errorf("unknown step kind %q", e.Step.Kind)
}

// drillKind runs a failover's steps as a rehearsal (drill.go).
type drillKind struct{}

func (drillKind) title(p Plan, i int, _ *config.Flow) string {
	if k, ok := drillSteps[p.Steps[i].Kind]; ok {
		return k.title(p.Steps[i])
	}
	return ""
}
func (drillKind) problems(cfg *config.Config, p Plan) []error {
	return append(drillProblems(cfg, p), failbackStepsElsewhere(p)...)
}
func (drillKind) running(context.Context, *Runbook) func() { return func() {} }
func (drillKind) restsOn(p Plan, i int) restingStep        { return restingStepOf(p.Steps[i].Kind) }
func (drillKind) switchesSides() bool                      { return false }
func (drillKind) cutsForward() bool                        { return false }
func (drillKind) target() model.Side                       { return model.SideDR }
func (drillKind) stamp(p *Plan, cfg *config.Config)        { stampDrill(p, cfg) }
func (drillKind) drGroup(run int64, group string) string   { return DrillGroup(run, group) }
func (drillKind) restoreArgs(r *Run, s Step) []string      { return drillArgs(r, s) }

// rules: a failover's rules do not stop a drill (its preflight records
// the ones that would fail); the drill's guards, a rewrite's correctness
// rules among them, do.
func (drillKind) rules(ctx context.Context, rb *Runbook, r *Run, i int, _ string) []RuleResult {
	return rb.drillGuards(ctx, r, i)
}
func (drillKind) preview(ctx context.Context, rb *Runbook, r *Run, i int) ([]RuleResult, []string, error) {
	rules, lines, err := failoverKind{}.preview(ctx, rb, r, i)
	if k, ok := drillSteps[r.Plan.Steps[i].Kind]; ok {
		lines = append(k.preview(r, i, rb.Config.Drill.Timeout.D()), lines...)
	}
	return rules, lines, err
}
func (drillKind) do(ctx context.Context, w audit.Written, e *Execution) (any, error) {
	if k, ok := drillSteps[e.Step.Kind]; ok {
		return k.do(ctx, w, e)
	}
	return nil, fmt.Errorf("step kind %q is not part of a drill", e.Step.Kind)
}

// failbackKind returns a flow to the primary (failback.go).
type failbackKind struct{ asPlanned }

func (failbackKind) title(p Plan, i int, flow *config.Flow) string {
	return failbackTitle(p, p.Steps[i], flow)
}
func (failbackKind) problems(cfg *config.Config, p Plan) []error { return failbackProblems(cfg, p) }
func (failbackKind) restsOn(p Plan, i int) restingStep {
	rs, _ := backSteps[p.Steps[i].Kind].(restingStep)
	return rs
}
func (failbackKind) switchesSides() bool { return true }
func (failbackKind) cutsForward() bool   { return false }
func (failbackKind) target() model.Side  { return model.SidePrimary }

// running: the reverse flow shows on the pages from the moment its
// connectors may exist to the moment they are stopped, not at the next
// pass of WatchReverseFlowsEvery.
func (failbackKind) running(ctx context.Context, rb *Runbook) func() {
	rb.watchReverse(ctx)
	return func() { rb.watchReverse(context.WithoutCancel(ctx)) }
}
func (failbackKind) rules(ctx context.Context, rb *Runbook, r *Run, i int, _ string) []RuleResult {
	return rb.failbackRules(ctx, r, i)
}
func (failbackKind) preview(ctx context.Context, rb *Runbook, r *Run, i int) ([]RuleResult, []string, error) {
	rules := rb.failbackRules(ctx, r, i)
	lines, err := rb.previewFailback(ctx, r, i)
	return rules, lines, err
}
func (failbackKind) do(ctx context.Context, _ audit.Written, e *Execution) (any, error) {
	return e.failbackEffect(ctx)
}
