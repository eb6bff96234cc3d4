package switchover

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
)

// The switchover's own step kinds.
const (
	// KindFence stops the primary's writers to the mirrored topics.
	KindFence runbook.StepKind = "fence"
	// KindVerifyFence watches the primary's log ends over the quiet period.
	KindVerifyFence runbook.StepKind = "verify-fence"
	// KindWaitCaughtUp waits until DR holds every record up to the
	// fenced ends.
	KindWaitCaughtUp runbook.StepKind = "wait-caught-up"
	// KindUnfenceDR removes the DENY WRITE entries of the fence's
	// principals on DR's copies of the mirrored topics (an ACL fence
	// only): the writers may write to DR from now on.
	KindUnfenceDR runbook.StepKind = "unfence-dr"
	// KindVerdict states what the switchover lost: nothing, verified, or
	// exactly what was not.
	KindVerdict runbook.StepKind = "verdict"
)

func init() {
	failover.RegisterKind(runbook.PlanSwitchover, kind{})
	failover.RegisterSteps(runbook.PlanSwitchover, map[runbook.StepKind]failover.StepTrait{
		KindFence: 0, KindVerifyFence: 0, KindWaitCaughtUp: 0, KindUnfenceDR: 0, KindVerdict: 0})
}

// fo runs the failover's steps of a switchover as a failover runs them.
var fo = failover.Failover()

// kind is the planned switchover.
type kind struct{ failover.AsPlanned }

// FenceOf is the fence flow's configuration asks for; nil when it has no
// switchover.
func FenceOf(f *config.Flow) *runbook.Fence {
	if f == nil || f.Switchover == nil {
		return nil
	}
	s := f.Switchover
	return &runbook.Fence{Method: s.Fence, Principals: slices.Clone(s.Principals), Command: slices.Clone(s.Command),
		CommandTimeoutMs: s.CommandTimeout.D().Milliseconds(), QuietPeriodMs: s.QuietPeriod.D().Milliseconds(),
		CatchUpTimeoutMs: s.CatchUpTimeout.D().Milliseconds()}
}

// Build: the fence, its check and the wait first, then the failover's
// steps as q asks for them (the mirror always stopped), then the verdict.
func (kind) Build(cfg *config.Config, q runbook.Request) runbook.Plan {
	fq := q
	fq.Kind, fq.Stop, fq.Preflight = runbook.PlanFailover, "auto", false
	base := fq.Plan(cfg)
	p := runbook.Plan{Flow: q.Flow, Kind: runbook.PlanSwitchover}
	p.Steps = append(p.Steps, runbook.Step{Kind: KindFence, Fence: FenceOf(cfg.Flow(q.Flow))},
		runbook.Step{Kind: KindVerifyFence}, runbook.Step{Kind: KindWaitCaughtUp})
	p.Steps = append(p.Steps, base.Steps...)
	if f := p.Steps[0].Fence; f != nil && f.Method == config.FenceACL {
		p.Steps = append(p.Steps, runbook.Step{Kind: KindUnfenceDR})
	}
	p.Steps = append(p.Steps, runbook.Step{Kind: KindVerdict})
	return p
}

func (kind) Stamp(context.Context, *runbook.Runbook, *runbook.Plan) error { return nil }

// order is the one order of a switchover's own steps and the mirror's stop.
var order = []runbook.StepKind{KindFence, KindVerifyFence, KindWaitCaughtUp, failover.KindStopMirror}

// Problems: a flow with a switchover configured, over MirrorMaker 2; the
// steps in their one order, the fence as configured, the verdict last;
// and the failover's own checks of its steps.
func (kind) Problems(cfg *config.Config, p runbook.Plan) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("switchover: "+format, args...)) }
	f := cfg.Flow(p.Flow)
	switch {
	case f == nil:
		bad("no flow named %q", p.Flow)
		return errs
	case f.IsClusterLink():
		bad("flow %s is a Cluster Linking flow: its planned promote waits for zero lag already", p.Flow)
	case f.Switchover == nil:
		bad("flow %s has no switchover configured (flows[].switchover: fence acl, command or manual)", p.Flow)
	}
	if len(p.Steps) < len(order)+1 {
		bad("a switchover's steps are %v, the failover's, then %s", order, KindVerdict)
		return errs
	}
	for i, k := range order {
		if p.Steps[i].Kind != k {
			errs = append(errs, &runbook.StepProblem{Step: i, Kind: p.Steps[i].Kind, Why: fmt.Sprintf("a switchover's step %d is %s", i+1, k)})
		}
	}
	last := len(p.Steps) - 1
	if p.Steps[last].Kind != KindVerdict {
		errs = append(errs, &runbook.StepProblem{Step: last, Kind: p.Steps[last].Kind, Why: "a switchover ends with its verdict"})
	}
	middle := p.Steps[len(order):last]
	if n := len(middle); n > 0 && middle[n-1].Kind == KindUnfenceDR {
		if f := p.Steps[0].Fence; f == nil || f.Method != config.FenceACL {
			errs = append(errs, &runbook.StepProblem{Step: last - 1, Kind: KindUnfenceDR, Why: "only after an ACL fence"})
		}
		middle = middle[:n-1]
	}
	for i, s := range middle {
		if !slices.Contains([]runbook.StepKind{failover.KindTranslateGroup, failover.KindRewriteSavepoint, failover.KindRestoreFlink}, s.Kind) {
			errs = append(errs, &runbook.StepProblem{Step: i + len(order), Kind: s.Kind, Why: "not a step of a switchover"})
		}
	}
	if f.Switchover != nil && !sameFence(p.Steps[0].Fence, FenceOf(f)) {
		errs = append(errs, &runbook.StepProblem{Step: 0, Kind: KindFence, Why: "the fence is not the flow's configured one"})
	}
	own := runbook.Plan{Flow: p.Flow, Kind: p.Kind, Steps: p.Steps[len(order)-1 : len(order)+len(middle)]}
	for _, err := range failover.StepProblems(cfg, own) {
		var sp *runbook.StepProblem
		if errors.As(err, &sp) {
			sp.Step += len(order) - 1
		}
		errs = append(errs, err)
	}
	return errs
}

func sameFence(a, b *runbook.Fence) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Method == b.Method && slices.Equal(a.Principals, b.Principals) && slices.Equal(a.Command, b.Command) &&
		a.CommandTimeoutMs == b.CommandTimeoutMs && a.QuietPeriodMs == b.QuietPeriodMs && a.CatchUpTimeoutMs == b.CatchUpTimeoutMs
}

// Refusals: what a fence's step would refuse is judged when it starts.
func (kind) Refusals(context.Context, *runbook.Runbook, runbook.Plan) []error { return nil }

func (kind) Title(p runbook.Plan, i int, flow *config.Flow) string {
	if t := title(p, i); t != "" {
		return t
	}
	return fo.Title(p, i, flow)
}

// Irreversible: the typed flow name where the operators commit: the fence
// (a manual fence is the operator's word that the writers are stopped)
// and the mirror's stop, the point of no return.
func (kind) Irreversible(p runbook.Plan, i int) bool {
	k := p.Steps[i].Kind
	return k == KindFence || k == failover.KindStopMirror
}

func (kind) Rules(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int, override string) []runbook.RuleResult {
	rules := book{failover.BookOf(rb)}.rules(ctx, r, i)
	if own(r.Plan.Steps[i].Kind) {
		return rules
	}
	return append(rules, fo.Rules(ctx, rb, r, i, override)...)
}

func (k kind) Preview(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int) ([]runbook.RuleResult, []string, error) {
	if !own(r.Plan.Steps[i].Kind) {
		rules, lines, err := fo.Preview(ctx, rb, r, i)
		return append(book{failover.BookOf(rb)}.rules(ctx, r, i), rules...), lines, err
	}
	return k.Rules(ctx, rb, r, i, ""), book{failover.BookOf(rb)}.preview(ctx, r, i), nil
}

func (kind) Inputs(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int) []runbook.PreviewInput {
	if own(r.Plan.Steps[i].Kind) {
		return nil
	}
	return fo.Inputs(ctx, rb, r, i)
}

func (kind) RestsOn(p runbook.Plan, i int) runbook.RestingStep {
	if own(p.Steps[i].Kind) {
		return nil
	}
	return fo.RestsOn(p, i)
}

func (kind) Do(ctx context.Context, w audit.Written, e *runbook.Execution) (any, error) {
	b := book{failover.BookOf(e.Runbook)}
	switch e.Step.Kind {
	case KindFence:
		return b.fence(ctx, w, e)
	case KindVerifyFence:
		return b.verifyFence(ctx, e)
	case KindWaitCaughtUp:
		return b.waitCaughtUp(ctx, e)
	case KindUnfenceDR:
		return b.unfenceDR(ctx, w, e.Run)
	case KindVerdict:
		return b.verdict(ctx, e.Run)
	}
	return fo.Do(ctx, w, e)
}

func (kind) Running(ctx context.Context, rb *runbook.Runbook) func() { return fo.Running(ctx, rb) }

// Finished: DR is active from now, as after a failover.
func (kind) Finished(ctx context.Context, rb *runbook.Runbook) { fo.Finished(ctx, rb) }

func (kind) SwitchesSides() bool { return true }
func (kind) CutsForward() bool   { return true }
func (kind) Target() model.Side  { return model.SideDR }

func own(k runbook.StepKind) bool {
	return k == KindFence || k == KindVerifyFence || k == KindWaitCaughtUp || k == KindUnfenceDR || k == KindVerdict
}

// book is the runbook as the switchover's steps use it.
type book struct{ failover.Book }

func (b book) now() time.Time { return b.Runbook.Now() }
