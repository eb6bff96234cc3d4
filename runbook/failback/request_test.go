package failback

import (
	"slices"
	"testing"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/runbook"
)

// The runbook, not the form, decides a plan's steps: a failback is the
// failback's one order.
func TestRequestPlansByTheRunbooksRules(t *testing.T) {
	cfg := &config.Config{Flows: []*config.Flow{{Name: "mm2"}, {Name: "link", Kind: "cluster-link"}}}
	for _, c := range []struct {
		name string
		q    runbook.Request
		want []runbook.StepKind
	}{
		{"failback", runbook.Request{Flow: "mm2", Kind: runbook.PlanFailback, Stop: "auto", Groups: []string{"g"}}, kindsOf(FailbackPlan("mm2", "g"))},
	} {
		if got := kindsOf(c.q.Plan(cfg)); !slices.Equal(got, c.want) {
			t.Errorf("%s: steps %v, want %v", c.name, got, c.want)
		}
	}
}
