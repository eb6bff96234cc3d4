package failover

import (
	"slices"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/runbook"
)

// The runbook, not the form, decides a plan's steps: a drill never stops
// or promotes production's mirror, and a Cluster Linking flow's mirrors
// are promoted instead of stopped (a failback's: runbook/failback).
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
	} {
		if got := kindsOf(c.q.Plan(cfg)); !slices.Equal(got, c.want) {
			t.Errorf("%s: steps %v, want %v", c.name, got, c.want)
		}
	}
}

// kindsOf are p's step kinds in order.
func kindsOf(p runbook.Plan) []runbook.StepKind {
	out := make([]runbook.StepKind, len(p.Steps))
	for i, s := range p.Steps {
		out[i] = s.Kind
	}
	return out
}

// A failback plan in a binary without runbook/failback (as this package's
// tests are) is refused as an unknown plan kind, never run as a failover:
// every binary that runs plans imports it (cli, handlers).
func TestFailbackPlanWithoutItsPackageIsRefused(t *testing.T) {
	cfg := &config.Config{Flows: []*config.Flow{{Name: "mm2"}}}
	p := runbook.Plan{Flow: "mm2", Kind: runbook.PlanFailback, Steps: []runbook.Step{{Kind: "set-up-reverse"}}}
	if err := p.Validate(cfg); err == nil || !strings.Contains(err.Error(), `unknown plan kind "failback"`) {
		t.Fatalf("a failback plan without its package: %v", err)
	}
}
