package failover

import (
	"testing"

	"github.com/drconsole/drconsole/runbook"
)

// A failover asks for the typed flow name once: at the step that cuts the
// mirror, or, without one, at its first step that changes anything.
func TestTypedConfirmationOncePerRun(t *testing.T) {
	for _, c := range []struct {
		name  string
		steps []runbook.StepKind
		at    int
	}{
		{"stop, translate, restore", []runbook.StepKind{KindPreflight, KindStopMirror, KindTranslateGroup, KindRestoreFlink}, 1},
		{"promote, restore", []runbook.StepKind{KindPreflight, KindPromoteMirrors, KindRestoreFlink}, 1},
		{"fail over the link", []runbook.StepKind{KindFailoverMirrors, KindRewriteSavepoint, KindRestoreFlink}, 0},
		{"translate only", []runbook.StepKind{KindPreflight, KindTranslateGroup, KindTranslateGroup}, 1},
		{"pre-flight only", []runbook.StepKind{KindPreflight}, -1},
	} {
		p := runbook.Plan{Flow: "primary->dr"}
		for _, k := range c.steps {
			p.Steps = append(p.Steps, runbook.Step{Kind: k})
		}
		for i := range p.Steps {
			if got := p.StepIrreversible(i); got != (i == c.at) {
				t.Errorf("%s: step %d (%s) asks for the flow name: %v, want %v", c.name, i+1, p.Steps[i].Kind, got, i == c.at)
			}
		}
	}
}
