package runbook

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/model"
)

// PlanType is one kind of plan: how it is built, checked, titled,
// previewed and run. Each registers once (Register) under its wire name;
// the engine reaches a kind only through its PlanType.
type PlanType interface {
	// Build is the plan q asks for, by this kind's rules.
	Build(cfg *config.Config, q Request) Plan
	// Stamp copies into p what its approval must cover besides the form;
	// an error refuses the plan.
	Stamp(ctx context.Context, rb *Runbook, p *Plan) error
	// Problems says what makes p unfit as a plan of this kind, every
	// step included.
	Problems(cfg *config.Config, p Plan) []error
	// Refusals are the rules a step of p would fail now that no override
	// passes (a planned promote with lag, say), each a *StepRefusal:
	// Create refuses such a plan instead of storing one that cannot run.
	Refusals(ctx context.Context, rb *Runbook, p Plan) []error
	// Title says what step i does, for pages and the audit log.
	Title(p Plan, i int, flow *config.Flow) string
	// Irreversible steps need the typed confirmation to run.
	Irreversible(p Plan, i int) bool
	// Rules are checked when step i starts; override is the operator's
	// reason to pass the overridable ones.
	Rules(ctx context.Context, rb *Runbook, r *Run, i int, override string) []RuleResult
	// Preview is step i's rules and what it will change, computed now.
	Preview(ctx context.Context, rb *Runbook, r *Run, i int) ([]RuleResult, []string, error)
	// Inputs are what step i's preview reads that the console holds, to
	// tell a stale preview without asking a cluster.
	Inputs(ctx context.Context, rb *Runbook, r *Run, i int) []PreviewInput
	// RestsOn is step i's kind when it may rest on inputs; nil if not.
	RestsOn(p Plan, i int) RestingStep
	// Target is the side a run moves work to: its input checks judge
	// that side.
	Target() model.Side
	// PartOf is the part of this kind's Request that asks for steps of
	// kind k ("" when none does).
	PartOf(k StepKind) Part
	// Do performs step i of the execution; w is its start record.
	Do(ctx context.Context, w audit.Written, e *Execution) (any, error)
	// Running is called before a step runs; the func it returns after.
	Running(ctx context.Context, rb *Runbook) func()
	// Finished is called once a run of this kind has completed.
	Finished(ctx context.Context, rb *Runbook)
}

var (
	planTypesMu sync.RWMutex
	planTypes   = map[PlanKind]PlanType{}
)

// Register makes plan kind k known under its PlanType; a package of plan
// kinds calls it once per kind, from init.
func Register(k PlanKind, t PlanType) {
	planTypesMu.Lock()
	defer planTypesMu.Unlock()
	if _, dup := planTypes[k]; dup {
		panic(fmt.Sprintf("failover: plan kind %q registered twice", k))
	}
	planTypes[k] = t
}

// typeOf is plan kind k's type; ok false when no package registered it.
func typeOf(k PlanKind) (PlanType, bool) {
	planTypesMu.RLock()
	defer planTypesMu.RUnlock()
	t, ok := planTypes[k]
	return t, ok
}

// kind is the plan's type. A plan of a kind this binary does not know is
// refused at every turn (unknownKind), never run as another kind.
func (p Plan) kind() PlanType {
	if t, ok := typeOf(p.Kind); ok {
		return t
	}
	return unknownKind{p.Kind}
}

// unknownKind stands for a plan kind no package registered: it fails
// closed, so a stored plan of a newer binary's kind never runs.
type unknownKind struct{ k PlanKind }

func (u unknownKind) err() error { return fmt.Errorf("unknown plan kind %q", u.k) }

func (u unknownKind) Build(_ *config.Config, q Request) Plan       { return Plan{Flow: q.Flow, Kind: u.k} }
func (u unknownKind) Stamp(context.Context, *Runbook, *Plan) error { return u.err() }
func (u unknownKind) Problems(*config.Config, Plan) []error        { return []error{u.err()} }
func (u unknownKind) Refusals(context.Context, *Runbook, Plan) []error {
	return []error{u.err()}
}
func (u unknownKind) Title(p Plan, i int, _ *config.Flow) string { return string(p.Steps[i].Kind) }
func (unknownKind) Irreversible(Plan, int) bool                  { return true }
func (u unknownKind) Rules(context.Context, *Runbook, *Run, int, string) []RuleResult {
	return []RuleResult{{Name: "the plan's kind is known to this console", Evidence: u.err().Error()}}
}
func (u unknownKind) Preview(context.Context, *Runbook, *Run, int) ([]RuleResult, []string, error) {
	return nil, nil, u.err()
}
func (unknownKind) Inputs(context.Context, *Runbook, *Run, int) []PreviewInput { return nil }
func (unknownKind) RestsOn(Plan, int) RestingStep                              { return nil }
func (unknownKind) Target() model.Side                                         { return model.SideDR }
func (unknownKind) PartOf(StepKind) Part                                       { return "" }
func (u unknownKind) Do(context.Context, audit.Written, *Execution) (any, error) {
	return nil, u.err()
}
func (unknownKind) Running(context.Context, *Runbook) func() { return func() {} }
func (unknownKind) Finished(context.Context, *Runbook)       {}

// Part names a part of a Request that asks for steps, so a form shows
// what the runbook says of a step beside the field that asked for it.
type Part string

// The parts of a Request that ask for steps.
const (
	PartStop      Part = "stop"       // Request.Stop: the mirror's stop (or its topics' promotion)
	PartGroups    Part = "groups"     // Request.Groups: the groups' moves
	PartRestore   Part = "restore"    // Request.Restore: the job's restore
	PartRewrite   Part = "rewrite"    // Request.RewriteTo: the savepoint's rewrite
	PartFlinkBack Part = "flink-back" // Request.FlinkBack: a failback's restore on the primary
)

// PartOf is the part of a request of plan kind pk that asks for steps of
// kind k; "" when none does or the kind is unknown to this binary.
func PartOf(pk PlanKind, k StepKind) Part {
	if t, ok := typeOf(pk); ok {
		return t.PartOf(k)
	}
	return ""
}

// StepRefusal is a rule step Step (0-based) of kind Kind would fail if it
// started now, that no override passes.
type StepRefusal struct {
	Step int
	Kind StepKind
	Rule RuleResult
}

func (e *StepRefusal) Error() string {
	return fmt.Sprintf("step %d (%s) would be refused now: %s: %s", e.Step+1, e.Kind, e.Rule.Name, e.Rule.Evidence)
}

// StepProblem is what makes step Step (0-based) of kind Kind unfit as
// planned (a plan kind's Problems), so a form can show it beside the
// field that asks for the step.
type StepProblem struct {
	Step int
	Kind StepKind
	Why  string
}

func (e *StepProblem) Error() string { return fmt.Sprintf("step %d (%s): %s", e.Step+1, e.Kind, e.Why) }

// Refusals says why the runbook would refuse p now (its kind's
// Refusals, joined); nil when nothing it can tell refuses it.
func (rb *Runbook) Refusals(ctx context.Context, p Plan) error {
	return errors.Join(p.kind().Refusals(ctx, rb, p)...)
}

// StepTitle says what step i does, as the plan's kind runs it.
func (p Plan) StepTitle(i int, flow *config.Flow) string { return p.kind().Title(p, i, flow) }

// StepIrreversible: step i needs the typed confirmation to run.
func (p Plan) StepIrreversible(i int) bool { return p.kind().Irreversible(p, i) }

// Plan is the plan q asks for under cfg, built by its kind's rules, so
// every door that plans a run plans it the same way.
func (q Request) Plan(cfg *config.Config) Plan {
	t, _ := typeOf(q.Kind)
	if t == nil {
		t = unknownKind{q.Kind}
	}
	return t.Build(cfg, q)
}
