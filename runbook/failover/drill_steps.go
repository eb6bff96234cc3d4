package failover

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/internal/effect"
	"github.com/drconsole/drconsole/storage"
)

// drillStep is how a drill runs one kind of step: as a failover would,
// but to temporary groups and a timed copy of the job. A kind missing
// from drillSteps has no place in a drill.
type drillStep interface {
	// title says what the step does in a drill; "" when as in a failover.
	title(s runbook.Step) string
	problems(cfg *config.Config, p runbook.Plan, i int) []string
	// guards are the rules of the step itself, after drillGuards' own.
	guards(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int) []runbook.RuleResult
	// preview is what the step does differently, said first.
	preview(r *runbook.Run, i int, timeout time.Duration) []string
	do(ctx context.Context, w audit.Written, e *runbook.Execution) (any, error)
}

var drillSteps = map[runbook.StepKind]drillStep{
	KindPreflight:        drillPreflightStep{},
	KindTranslateGroup:   drillTranslateStep{},
	KindRewriteSavepoint: drillRewriteStep{},
	KindRestoreFlink:     drillRestoreStep{},
}

// noGuards is the default of a drill step kept from production by
// drillGuards alone.
type noGuards struct{}

func (noGuards) guards(context.Context, *runbook.Runbook, *runbook.Run, int) []runbook.RuleResult {
	return nil
}

type drillPreflightStep struct{ noGuards }

func (drillPreflightStep) title(runbook.Step) string {
	return "Evaluate the safety rules a failover would check, and record the ones that would fail (the drill does not stop for them)"
}
func (drillPreflightStep) problems(*config.Config, runbook.Plan, int) []string { return nil }
func (drillPreflightStep) preview(*runbook.Run, int, time.Duration) []string {
	return []string{"DRILL: the rules below are recorded as the ones a failover would have failed; the drill does not stop for them."}
}
func (drillPreflightStep) do(ctx context.Context, _ audit.Written, e *runbook.Execution) (any, error) {
	rules := book(e.Runbook).CheckRules(ctx, e.Run.Plan, "")
	return drillRulesChecked{Guards: e.Rules, Rules: rules, WouldHaveFailed: runbook.Failed(rules)}, nil
}

// drillRulesChecked is a drill's preflight result: its own guards, and
// the failover's rules with the ones that would have stopped a failover.
// Its fields are in the order the map it replaced was written, so the
// stored bytes are the same; V is the shape's version (absent: the first).
type drillRulesChecked struct {
	Guards          []runbook.RuleResult `json:"guards"`
	Rules           []runbook.RuleResult `json:"rules"`
	WouldHaveFailed []string             `json:"would_have_failed"`
	V               int                  `json:"v,omitempty"`
}

type drillTranslateStep struct{}

func (drillTranslateStep) title(s runbook.Step) string {
	from := ""
	if s.FromSavepoint != "" {
		from = " (from savepoint " + s.FromSavepoint + ")"
	}
	return "Translate consumer group " + s.Group + from + " and commit the offsets to the temporary DR group " +
		effect.DrillGroupPrefix + "<run>-" + s.Group + " (the group " + s.Group + " itself is not touched)"
}
func (drillTranslateStep) problems(_ *config.Config, p runbook.Plan, i int) []string {
	if strings.HasPrefix(p.Steps[i].Group, effect.DrillGroupPrefix) {
		return []string{"name the production group whose offsets the drill translates, not a drill's temporary group"}
	}
	return nil
}
func (drillTranslateStep) guards(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int) []runbook.RuleResult {
	return []runbook.RuleResult{book(rb).freshGroup(ctx, r, r.Plan.Steps[i])}
}
func (drillTranslateStep) preview(r *runbook.Run, i int, _ time.Duration) []string {
	s := r.Plan.Steps[i]
	g := DrillGroup(r.ID, s.Group)
	return []string{fmt.Sprintf("DRILL: the offsets below go to the temporary DR group %s, which must not exist yet; the current offsets shown are those of %s, which is not touched. The cleanup deletes %s.", g, s.Group, g)}
}
func (drillTranslateStep) do(ctx context.Context, w audit.Written, e *runbook.Execution) (any, error) {
	return drillReread(ctx, e)(book(e.Runbook).translateGroup(ctx, w, e.Run, e.Idx, e.Step, e.Who))
}

type drillRewriteStep struct{}

func (drillRewriteStep) title(runbook.Step) string                           { return "" }
func (drillRewriteStep) problems(*config.Config, runbook.Plan, int) []string { return nil }
func (drillRewriteStep) preview(*runbook.Run, int, time.Duration) []string   { return nil }
func (drillRewriteStep) guards(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int) []runbook.RuleResult {
	return book(rb).rewriteRule(ctx, r, i)
}
func (drillRewriteStep) do(ctx context.Context, w audit.Written, e *runbook.Execution) (any, error) {
	return drillReread(ctx, e)(book(e.Runbook).rewriteSavepoint(ctx, w, e.Run, e.Step))
}

// drillReread records the re-read bound a step's result states. A bound
// not on record (a step resumed after a crash) leaves the drill's re-read
// count unknown, never 0.
func drillReread(ctx context.Context, e *runbook.Execution) func(any, error) (any, error) {
	return func(res any, err error) (any, error) {
		if b, ok := res.(rereadStater); ok && err == nil {
			if n, ok := b.rereadBound(); ok {
				err = e.Runbook.Store.DrillReread(ctx, e.Run.ID, e.Idx, n)
			}
		}
		return res, err
	}
}

// rereadStater is a step result that may state how many records at most
// the restored job reads twice.
type rereadStater interface {
	rereadBound() (int64, bool)
}

func (g groupTranslated) rereadBound() (int64, bool) { return g.RereadMax, true }

func (s *SavepointRewritten) rereadBound() (int64, bool) {
	if s == nil || s.RewroteForward == nil {
		return 0, false
	}
	return s.RereadMax, true
}

type drillRestoreStep struct{}

func (drillRestoreStep) title(s runbook.Step) string {
	sp := s.SavepointPath
	if sp == "" {
		sp = "no savepoint (fresh start)"
	}
	return fmt.Sprintf("Start a drill copy of the Flink job on %s from %s with its own job id and the drill arguments %q; time it to RUNNING and to its first record",
		s.FlinkTarget, sp, s.DrillArgs)
}
func (drillRestoreStep) problems(cfg *config.Config, p runbook.Plan, i int) []string {
	s := p.Steps[i]
	var out []string
	if i != len(p.Steps)-1 {
		out = append(out, "the drill's restore is its last step")
	}
	if t := FlinkTarget(cfg, s.FlinkTarget); t != nil && t.Kubernetes != nil {
		out = append(out, fmt.Sprintf("Flink target %q is a FlinkDeployment: a drill submits a copy of the job through Flink REST, and redeploying the deployment is not a copy", t.Name))
	}
	if len(s.DrillArgs) == 0 {
		out = append(out, "no drill job arguments (drill.job_args): the copy would write where production's job writes; configure arguments that keep its output apart")
	}
	if slices.ContainsFunc(s.DrillArgs, func(a string) bool { return strings.Contains(a, "{group}") }) && len(StepsThat(p, translates)) != 1 {
		out = append(out, "the drill arguments name {group}: the plan needs exactly one translate-group step")
	}
	return out
}
func (drillRestoreStep) guards(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int) []runbook.RuleResult {
	return book(rb).RestoreRewrittenRule(ctx, r, i)
}
func (drillRestoreStep) preview(_ *runbook.Run, _ int, timeout time.Duration) []string {
	return []string{fmt.Sprintf("DRILL: a copy of the job with its own job id, timed to RUNNING and to its first record (at most %s), then cancelled by the cleanup.", timeout)}
}
func (drillRestoreStep) do(ctx context.Context, w audit.Written, e *runbook.Execution) (any, error) {
	rb, r, s := e.Runbook, e.Run, e.Step
	if err := book(rb).RewrittenReady(ctx, r, s); err != nil {
		return nil, err
	}
	d, err := rb.Store.Drill(ctx, r.ID)
	if err != nil {
		return nil, fmt.Errorf("the drill was not started (Runbook.StartDrill): %w", err)
	}
	api := rb.Flink(FlinkTarget(rb.Config, s.FlinkTarget).RestURL)
	jobID := restoreJobID(r, e.Idx)
	if d.SubmittedMs == nil {
		if _, err := api.Job(ctx, jobID); err == nil {
			return nil, fmt.Errorf("a job %s exists on %s already and this drill did not submit it: it is not touched", jobID, s.FlinkTarget)
		}
		if err := rb.Store.DrillMoment(ctx, r.ID, storage.MomentSubmitted, rb.Now().UnixMilli()); err != nil {
			return nil, err
		}
	}
	res, err := book(rb).RestoreFlink(ctx, w, r, e.Idx, s)
	if err != nil {
		return res, err
	}
	m, err := book(rb).measureDrill(ctx, r, api, jobID, e.Progress)
	return drillRestored{Restore: res, Measured: m}, err
}

// drillRestored is a drill's restore-flink result: restore-flink's own
// (jobStarted or jobFound) and what the drill measured. Its fields are in
// the order the map it replaced was written, so the stored bytes are the
// same; V is the shape's version (absent: the first).
type drillRestored struct {
	Measured *drillMeasured `json:"measured"`
	Restore  any            `json:"restore"`
	V        int            `json:"v,omitempty"`
}
