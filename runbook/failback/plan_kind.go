package failback

import (
	"context"
	"slices"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
)

// The failback registers itself: a binary that does not import this
// package refuses a failback plan (an unknown plan kind).
func init() {
	failover.RegisterKind(runbook.PlanFailback, failbackKind{})
	// The failover's step machinery and plan checks know the failback's
	// step kinds only from here.
	failover.RegisterSteps(runbook.PlanFailback, failbackKinds)
	// rewrite-back rewrites the savepoint savepoint-dr took, not its
	// RewriteFrom: the restore's check of the rewrite compares with it.
	failover.RegisterRewriteSource(KindRewriteBack, func(ctx context.Context, rb *runbook.Runbook, r *runbook.Run) (string, error) {
		sp, err := book(rb).drSavepoint(ctx, r)
		return sp.Path, err
	})
}

// failbackKind returns a flow to the primary (failback.go).
type failbackKind struct{ failover.AsPlanned }

// PartOf: of a failback's steps only the restore on the primary is
// asked for by a part of the request (FlinkBack); the others follow from
// the failover it reverses.
func (failbackKind) PartOf(k runbook.StepKind) runbook.Part {
	if k == failover.KindRestoreFlink {
		return runbook.PartFlinkBack
	}
	return ""
}

// Irreversible: a failback asks for the typed flow name where the
// operators commit to it: stop-writers, their word that nothing writes to
// DR any more (after it the reverse flow stops, the groups move and the
// forward mirror restarts, carrying out what was confirmed); and, in a
// Cluster Linking failback, the truncation of the primary's topics that
// comes before it. The steps before stop-writers copy DR's records to the
// primary and wait for them, which takes nothing away. A plan without
// stop-writers asks at every step that changes something.
func (k failbackKind) Irreversible(p runbook.Plan, i int) bool {
	if !slices.ContainsFunc(p.Steps, func(s runbook.Step) bool { return s.Kind == KindStopWriters }) {
		return k.AsPlanned.Irreversible(p, i)
	}
	return p.Steps[i].Kind == KindStopWriters || p.Steps[i].Kind == KindRestorePrimary
}

func (failbackKind) Build(cfg *config.Config, q runbook.Request) runbook.Plan {
	if f := cfg.Flow(q.Flow); f != nil && f.IsClusterLink() {
		return LinkFailbackPlan(q.Flow, q.PauseMirrors)
	}
	p := FailbackPlan(q.Flow, q.Groups...)
	if q.FlinkBack != nil {
		p = WithFlinkBack(p, *q.FlinkBack)
	}
	return p
}

func (failbackKind) Stamp(ctx context.Context, rb *runbook.Runbook, p *runbook.Plan) error {
	return book(rb).StampFailback(ctx, p)
}

func (failbackKind) Title(p runbook.Plan, i int, flow *config.Flow) string {
	if t := failbackTitle(p, p.Steps[i], flow); t != "" {
		return t
	}
	return failover.StepTitle(p.Steps[i], flow)
}

func (failbackKind) Problems(cfg *config.Config, p runbook.Plan) []error {
	return append(failbackProblems(cfg, p), failover.StepProblems(cfg, p)...)
}

func (failbackKind) RestsOn(p runbook.Plan, i int) runbook.RestingStep {
	rs, _ := backSteps[p.Steps[i].Kind].(runbook.RestingStep)
	return rs
}

func (failbackKind) SwitchesSides() bool { return true }

func (failbackKind) CutsForward() bool { return false }

func (failbackKind) Target() model.Side { return model.SidePrimary }

func (failbackKind) Finished(ctx context.Context, rb *runbook.Runbook) {
	book(rb).markFailedOver(ctx) // the primary is active again from now
}

// Running: the reverse flow shows on the pages from the moment its
// connectors may exist to the moment they are stopped, not at the next
// pass of WatchReverseFlowsEvery.
func (failbackKind) Running(ctx context.Context, rb *runbook.Runbook) func() {
	book(rb).watchReverse(ctx)
	return func() { book(rb).watchReverse(context.WithoutCancel(ctx)) }
}

func (failbackKind) Rules(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int, _ string) []runbook.RuleResult {
	return book(rb).failbackRules(ctx, r, i)
}

func (failbackKind) Preview(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int) ([]runbook.RuleResult, []string, error) {
	rules := book(rb).failbackRules(ctx, r, i)
	lines, err := book(rb).previewFailback(ctx, r, i)
	return rules, lines, err
}

func (failbackKind) Do(ctx context.Context, _ audit.Written, e *runbook.Execution) (any, error) {
	return failbackEffect(ctx, e)
}
