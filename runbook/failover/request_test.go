package failover

import (
	"slices"
	"testing"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/runbook"
)

// The runbook, not the form, decides a plan's steps: a drill never stops
// or promotes production's mirror, a Cluster Linking flow's mirrors are
// promoted instead of stopped, and a failback is the failback's one order.
func TestRequestPlansByTheRunbooksRules(t *testing.T) {
	cfg := &config.Config{Flows: []*config.Flow{{Name: "mm2"}, {Name: "link", Kind: "cluster-link"}}}
	for _, c := range []struct {
		name string
		q    runbook.Request
		want []runbook.StepKind
	}{
		{"failover", runbook.Request{Flow: "mm2", Preflight: true, Stop: "auto", Groups: []string{"g"}}, []runbook.StepKind{KindPreflight, KindStopMirror, KindTranslateGroup}},
		{"drill", runbook.Request{Flow: "mm2", Kind: runbook.PlanDrill, Preflight: true, Stop: "auto", Groups: []string{"g"}}, []runbook.StepKind{KindPreflight, KindTranslateGroup}},
		{"drill of a link", runbook.Request{Flow: "link", Kind: runbook.PlanDrill, Stop: "failover"}, nil},
		{"link", runbook.Request{Flow: "link", Stop: "auto"}, []runbook.StepKind{KindPromoteMirrors}},
		{"failback", runbook.Request{Flow: "mm2", Kind: runbook.PlanFailback, Stop: "auto", Groups: []string{"g"}}, kindsOf(FailbackPlan("mm2", "g"))},
	} {
		if got := kindsOf(c.q.Plan(cfg)); !slices.Equal(got, c.want) {
			t.Errorf("%s: steps %v, want %v", c.name, got, c.want)
		}
	}
}
