package failback

import (
	"slices"
	"testing"

	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
)

// A failback asks for the typed flow name where the operators commit to
// it, stop-writers, and before it only where it destroys something (a
// Cluster Linking failback's truncation of the primary's topics): once in
// an MM2 failback, with its Flink steps too, not at each of its steps.
func TestFailbackAsksForTheFlowNameWhereItCommits(t *testing.T) {
	asked := func(p runbook.Plan) []runbook.StepKind {
		var out []runbook.StepKind
		for i, s := range p.Steps {
			if p.StepIrreversible(i) {
				out = append(out, s.Kind)
			}
		}
		return out
	}
	mm2 := WithFlinkBack(FailbackPlan("primary->dr", "billing", "flink-events"), runbook.FlinkBack{
		DRTarget: "flink-dr", DRJob: "0123456789abcdef0123456789abcdef", RewriteTo: "file:/sp/back",
		Restore: runbook.Step{FlinkTarget: "flink-primary", JarID: "job.jar"}})
	if got := asked(mm2); !slices.Equal(got, []runbook.StepKind{KindStopWriters}) {
		t.Errorf("an MM2 failback asks at %v, want only at stop-writers", got)
	}
	if got := asked(LinkFailbackPlan("primary->dr-link", false)); !slices.Equal(got, []runbook.StepKind{KindRestorePrimary, KindStopWriters}) {
		t.Errorf("a Cluster Linking failback asks at %v, want at the truncation and at stop-writers", got)
	}
	// Without stop-writers (a plan the checks refuse): every step that
	// changes something asks, failing closed.
	bare := runbook.Plan{Flow: "primary->dr", Kind: runbook.PlanFailback, Steps: []runbook.Step{{Kind: KindSetUpReverse}, {Kind: failover.KindPreflight}, {Kind: KindRestartForward}}}
	if got := asked(bare); !slices.Equal(got, []runbook.StepKind{KindSetUpReverse, KindRestartForward}) {
		t.Errorf("a failback without stop-writers asks at %v", got)
	}
}
