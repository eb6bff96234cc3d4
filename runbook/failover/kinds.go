package failover

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/runbook"
)

// stepKind is one kind of step: its title, its checks against the
// configuration, the safety rules it re-checks when it starts, its preview
// and its effect. Each registers once, in stepKinds, under its wire name;
// the engine (Begin, Run, Preview, Validate) reaches a kind only through it.
type stepKind interface {
	title(s runbook.Step, flow *config.Flow) string
	irreversible() bool
	// problems says what makes step i of p unfit for cfg's flow.
	problems(cfg *config.Config, flow *config.Flow, p runbook.Plan, i int) []string
	// rules are checked again at the step's start, and shown beside its
	// preview (override "" there).
	rules(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int, override string) []runbook.RuleResult
	// preview says what step i will change, computed now; it never writes.
	preview(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int) ([]string, error)
	// do performs the step; w is its start record, the effect's proof.
	do(ctx context.Context, w audit.Written, e *runbook.Execution) (any, error)
	// inputs are what its preview reads that the console holds
	// (previewInputs), to tell a stale preview without asking a cluster.
	inputs(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int) []runbook.PreviewInput
}

// stepKinds are the steps of a failover plan; a drill and a failback run
// them their own way (planTypes).
var stepKinds = map[runbook.StepKind]stepKind{
	KindPreflight:        preflightStep{},
	KindStopMirror:       stopMirrorStep{},
	KindTranslateGroup:   translateGroupStep{},
	KindRestoreFlink:     restoreFlinkStep{},
	KindPromoteMirrors:   mirrorsStep{planned: true, verb: "Promote", how: " (planned: only with zero lag)"},
	KindFailoverMirrors:  mirrorsStep{verb: "Fail over", how: " now, whatever their lag (unreplicated records are lost)"},
	KindRewriteSavepoint: rewriteSavepointStep{},
}

// StepTrait is what the plan checks, other steps and the pages ask of a
// step kind without running it: which step is the restore, the cut, a
// translation. Each kind states its traits once, in stepTraits (another
// package's kinds through RegisterSteps).
type StepTrait uint16

const (
	cutsMirror          StepTrait = 1 << iota // stops the forward mirror: its evidence is the cut
	countsLoss                                // records what the failover lost at the cut
	translates                                // commits a primary group's translated offsets to DR
	TranslatesBack                            // moves a DR group back to the primary
	restores                                  // starts the Flink job
	Rewrites                                  // writes a rewritten savepoint
	RewritesDRSavepoint                       // rewrites the savepoint savepoint-dr took
	RestartsForward                           // restarts the forward flow, ending a failback
	LeavesMirrorsPaused                       // may leave the primary's mirror topics paused
)

var stepTraits = map[runbook.StepKind]StepTrait{
	KindStopMirror:       cutsMirror | countsLoss,
	KindPromoteMirrors:   cutsMirror,
	KindFailoverMirrors:  cutsMirror,
	KindTranslateGroup:   translates,
	KindRestoreFlink:     restores,
	KindRewriteSavepoint: Rewrites,
}

// onlyIn is the plan kind each step kind another package registered
// belongs to: this package's plans refuse them (stepsElsewhere).
var onlyIn = map[runbook.StepKind]runbook.PlanKind{}

// rewriteSources say where a rewrite step kind of another package reads
// its savepoint from, when not from its RewriteFrom (rewriteDone).
var rewriteSources = map[runbook.StepKind]func(context.Context, *runbook.Runbook, *runbook.Run) (string, error){}

// RegisterSteps registers plan kind kind's own step kinds with their
// traits, from the registering package's init: the shared step machinery
// here (first, StepsThat, the plan checks) reads the traits, and the
// other plan kinds refuse the steps.
func RegisterSteps(kind runbook.PlanKind, traits map[runbook.StepKind]StepTrait) {
	for k, t := range traits {
		if t != 0 {
			stepTraits[k] = t
		}
		onlyIn[k] = kind
	}
}

// RegisterRewriteSource says where rewrite step kind k's savepoint comes
// from (a rewrite of a savepoint the run itself took), so a later step's
// check of the rewrite compares against it.
func RegisterRewriteSource(k runbook.StepKind, source func(context.Context, *runbook.Runbook, *runbook.Run) (string, error)) {
	rewriteSources[k] = source
}

// Is says whether kind k has trait t.
func Is(k runbook.StepKind, t StepTrait) bool { return stepTraits[k]&t != 0 }

// First is the index of p's first step with trait t; -1 when none has it.
func First(p runbook.Plan, t StepTrait) int {
	return slices.IndexFunc(p.Steps, func(s runbook.Step) bool { return Is(s.Kind, t) })
}

// StepsThat are p's steps with trait t, in plan order.
func StepsThat(p runbook.Plan, t StepTrait) []runbook.Step {
	var out []runbook.Step
	for _, s := range p.Steps {
		if Is(s.Kind, t) {
			out = append(out, s)
		}
	}
	return out
}

// noRules is the default of a step that re-checks nothing at its start.
type noRules struct{}

func (noRules) rules(context.Context, *runbook.Runbook, *runbook.Run, int, string) []runbook.RuleResult {
	return nil
}

// noInputs is the default of a step whose preview reads only clusters.
type noInputs struct{}

func (noInputs) inputs(context.Context, *runbook.Runbook, *runbook.Run, int) []runbook.PreviewInput {
	return nil
}

// byRules: a step judged by the safety rules is stale when their inputs moved.
type byRules struct{}

func (byRules) inputs(_ context.Context, rb *runbook.Runbook, r *runbook.Run, _ int) []runbook.PreviewInput {
	return book(rb).statusInputs(r.Flow)
}

// changes marks a step that needs the typed confirmation.
type changes struct{}

func (changes) irreversible() bool { return true }

type preflightStep struct{ byRules }

func (preflightStep) title(runbook.Step, *config.Flow) string {
	return "Pre-flight checks (changes nothing)"
}
func (preflightStep) irreversible() bool { return false }
func (preflightStep) problems(*config.Config, *config.Flow, runbook.Plan, int) []string {
	return nil
}
func (preflightStep) rules(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, _ int, override string) []runbook.RuleResult {
	return book(rb).CheckRules(ctx, r.Plan, override)
}
func (preflightStep) preview(context.Context, *runbook.Runbook, *runbook.Run, int) ([]string, error) {
	return []string{"Evaluates the safety rules below and records them; changes nothing."}, nil
}
func (preflightStep) do(_ context.Context, _ audit.Written, e *runbook.Execution) (any, error) {
	return rulesChecked{Rules: e.Rules}, nil
}

// rulesChecked is preflight's result: the safety rules it evaluated. V is
// the shape's version (absent: the first, the map every earlier binary
// wrote with the same key).
type rulesChecked struct {
	Rules []runbook.RuleResult `json:"rules"`
	V     int                  `json:"v,omitempty"`
}

type stopMirrorStep struct {
	changes
	byRules
}

func (stopMirrorStep) title(_ runbook.Step, flow *config.Flow) string {
	if flow != nil && flow.ConnectURL != "" {
		return "Stop MirrorMaker 2 connectors " + strings.Join(flow.Connectors, ", ") + " on " + flow.ConnectURL
	}
	return "Stop MirrorMaker 2 (dedicated mode: by hand), then verify heartbeats and offset syncs stopped"
}
func (stopMirrorStep) problems(_ *config.Config, flow *config.Flow, _ runbook.Plan, _ int) []string {
	if flow.IsClusterLink() {
		return []string{"a Cluster Linking flow has no MirrorMaker to stop: promote or fail over its mirrors"}
	}
	return nil
}
func (stopMirrorStep) rules(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, _ int, override string) []runbook.RuleResult {
	return book(rb).CheckRules(ctx, r.Plan, override)
}
func (stopMirrorStep) preview(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, _ int) ([]string, error) {
	return book(rb).previewStop(ctx, rb.Config.Flow(r.Flow))
}
func (stopMirrorStep) do(ctx context.Context, w audit.Written, e *runbook.Execution) (any, error) {
	res, states, err := book(e.Runbook).stopMirror(ctx, w, e.Run.Flow)
	if err != nil {
		if states != nil {
			return states, err
		}
		return nil, err
	}
	return mirrorStopped{Stopped: res, Cut: book(e.Runbook).recordCut(ctx, e.Run.ID, e.Run.Flow), LostAtCut: book(e.Runbook).lostAtCut(e.Run.Flow)}, nil
}

// mirrorStopped is stop-mirror's result: how the mirror stopped, where
// it stood then (the cut) and what the failover lost there; LostAtCut
// reads it back. Its fields are in the order the map it replaced was
// written, so the stored bytes are the same; V is the shape's version
// (absent: the first, the one every earlier binary wrote).
type mirrorStopped struct {
	Cut       cutRecorded `json:"cut"`
	LostAtCut *LossRecord `json:"lost_at_cut"`
	Stopped   *mirrorStop `json:"stopped"`
	V         int         `json:"v,omitempty"`
}

type translateGroupStep struct {
	changes
	noRules
}

func (translateGroupStep) title(s runbook.Step, _ *config.Flow) string {
	if s.FromSavepoint != "" {
		return "Translate the Kafka offsets of savepoint " + s.FromSavepoint + " and commit them to DR consumer group " + s.Group
	}
	return "Translate consumer group " + s.Group + " and commit its offsets to the DR group"
}
func (translateGroupStep) problems(_ *config.Config, flow *config.Flow, p runbook.Plan, i int) []string {
	var out []string
	if flow.IsClusterLink() {
		out = append(out, "not needed: Cluster Linking keeps offsets identical, and consumer offsets sync with the link")
	}
	if strings.TrimSpace(p.Steps[i].Group) == "" {
		out = append(out, "name the consumer group")
	}
	return out
}
func (translateGroupStep) preview(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int) ([]string, error) {
	return book(rb).previewGroup(ctx, r.Flow, r.Plan.Steps[i])
}
func (translateGroupStep) inputs(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int) []runbook.PreviewInput {
	in := []runbook.PreviewInput{book(rb).syncsInput(r.Flow)}
	if s := r.Plan.Steps[i]; s.FromSavepoint != "" {
		in = append(in, runbook.PreviewInput{Name: "savepoint catalog entry", Value: book(rb).savepointInput(ctx, s.FromSavepoint)})
	}
	return in
}
func (translateGroupStep) do(ctx context.Context, w audit.Written, e *runbook.Execution) (any, error) {
	return book(e.Runbook).translateGroup(ctx, w, e.Run, e.Idx, e.Step, e.Who)
}

type restoreFlinkStep struct {
	changes
	noInputs
}

func (restoreFlinkStep) title(s runbook.Step, _ *config.Flow) string {
	sp := s.SavepointPath
	if sp == "" {
		sp = "no savepoint (fresh start)"
	}
	return fmt.Sprintf("Start the Flink job on %s from %s", s.FlinkTarget, sp)
}
func (restoreFlinkStep) problems(cfg *config.Config, _ *config.Flow, p runbook.Plan, i int) []string {
	if p.Kind == runbook.PlanFailback {
		return nil // runbook/failback checks it (flinkBackProblems): it goes to the primary
	}
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	s := p.Steps[i]
	t := FlinkTarget(cfg, s.FlinkTarget)
	switch {
	case t == nil:
		bad("no Flink target named %q in flink_targets", s.FlinkTarget)
	case t.Region != config.RegionDR:
		bad("Flink target %q is in the %s region: restore goes to DR", t.Name, t.Region)
	}
	if t != nil && t.Kubernetes != nil {
		// The FlinkDeployment's spec decides the jar, entry class,
		// parallelism and restore mode (execution.savepoint-restore-mode
		// in its flinkConfiguration).
		switch {
		case s.SavepointPath == "":
			bad("a Kubernetes redeploy needs a savepoint (the operator refuses an empty initialSavepointPath)")
		case s.JarID != "" || s.EntryClass != "" || s.Parallelism != 0:
			bad("Flink target %q is a FlinkDeployment: its spec names the jar, entry class and parallelism; leave them empty", t.Name)
		case s.ClaimMode != "" && s.ClaimMode != "NO_CLAIM":
			bad("claim mode %s: on Kubernetes the deployment's flinkConfiguration sets execution.savepoint-restore-mode", s.ClaimMode)
		}
	} else if s.JarID == "" {
		bad("name the uploaded jar (jar id)")
	}
	switch s.ClaimMode {
	case "", "NO_CLAIM", "CLAIM", "LEGACY":
	default:
		bad("claim mode %q: want NO_CLAIM, CLAIM or LEGACY", s.ClaimMode)
	}
	return append(out, restoredRewriteProblems(p, i)...)
}
func (restoreFlinkStep) rules(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int, _ string) []runbook.RuleResult {
	return book(rb).RestoreRewrittenRule(ctx, r, i)
}
func (restoreFlinkStep) preview(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int) ([]string, error) {
	return book(rb).PreviewRestore(ctx, r, i, r.Plan.Steps[i]), nil
}
func (restoreFlinkStep) do(ctx context.Context, w audit.Written, e *runbook.Execution) (any, error) {
	if err := book(e.Runbook).RewrittenReady(ctx, e.Run, e.Step); err != nil {
		return nil, err
	}
	if t := FlinkTarget(e.Runbook.Config, e.Step.FlinkTarget); t != nil && t.Kubernetes != nil {
		return book(e.Runbook).restoreKubernetes(ctx, w, e.Run, e.Idx, e.Step, t, e.Progress)
	}
	return book(e.Runbook).RestoreFlink(ctx, w, e.Run, e.Idx, e.Step)
}

// mirrorsStep promotes a Cluster Linking flow's mirror topics (the
// planned path) or fails them over at once (the unplanned one).
type mirrorsStep struct {
	changes
	byRules
	planned   bool
	verb, how string
}

func (m mirrorsStep) title(_ runbook.Step, flow *config.Flow) string {
	return m.verb + " the mirror topics of link " + LinkName(flow) + m.how
}
func (mirrorsStep) problems(_ *config.Config, flow *config.Flow, _ runbook.Plan, _ int) []string {
	if !flow.IsClusterLink() {
		return []string{"only for Cluster Linking flows"}
	}
	return nil
}
func (m mirrorsStep) rules(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, _ int, _ string) []runbook.RuleResult {
	return book(rb).linkRules(ctx, rb.Config.Flow(r.Flow), m.planned)
}
func (m mirrorsStep) preview(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, _ int) ([]string, error) {
	return book(rb).previewLink(ctx, rb.Config.Flow(r.Flow), m.planned)
}
func (m mirrorsStep) do(ctx context.Context, w audit.Written, e *runbook.Execution) (any, error) {
	return book(e.Runbook).alterMirrors(ctx, w, e.Run.Flow, m.planned)
}

type rewriteSavepointStep struct{ changes }

func (rewriteSavepointStep) title(s runbook.Step, _ *config.Flow) string {
	return "Rewrite savepoint " + s.RewriteFrom + " for DR (translated offsets, DR topic names) into " + s.RewriteTo
}
func (rewriteSavepointStep) problems(cfg *config.Config, _ *config.Flow, p runbook.Plan, i int) []string {
	return rewriteProblems(cfg, p, i)
}
func (rewriteSavepointStep) rules(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int, _ string) []runbook.RuleResult {
	return book(rb).rewriteRule(ctx, r, i)
}
func (rewriteSavepointStep) preview(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int) ([]string, error) {
	return book(rb).previewRewrite(ctx, r.Flow, r.Plan.Steps[i])
}
func (rewriteSavepointStep) inputs(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int) []runbook.PreviewInput {
	s := r.Plan.Steps[i]
	return []runbook.PreviewInput{book(rb).syncsInput(r.Flow),
		{Name: "savepoint catalog entry", Value: book(rb).savepointInput(ctx, s.RewriteFrom)},
		{Name: "new savepoint in the catalog", Value: book(rb).savepointInput(ctx, s.RewriteTo)}}
}
func (rewriteSavepointStep) do(ctx context.Context, w audit.Written, e *runbook.Execution) (any, error) {
	return book(e.Runbook).rewriteSavepoint(ctx, w, e.Run, e.Step)
}

func LinkName(f *config.Flow) string {
	if f == nil || f.ClusterLink == nil {
		return "?"
	}
	return f.ClusterLink.Link
}

func FlinkTarget(cfg *config.Config, name string) *config.FlinkTarget {
	for _, t := range cfg.FlinkTargets {
		if t.Name == name {
			return t
		}
	}
	return nil
}
