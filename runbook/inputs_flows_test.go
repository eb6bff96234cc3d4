package runbook

import (
	"context"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/model"
)

// restingKind is a plan kind whose every step rests on inputs and has no
// rules of its own: only the engine's reachability check is left.
type restingKind struct{ unknownKind }

func (restingKind) RestsOn(Plan, int) RestingStep { return restingStep{} }
func (restingKind) Target() model.Side            { return model.SideDR }

type restingStep struct{}

func (restingStep) RestsOnInputs(Step) bool { return true }
func (restingStep) InputRules(context.Context, *Runbook, *Run, int) []RuleResult {
	return nil
}

const planResting PlanKind = "test-resting"

func init() { Register(planResting, restingKind{unknownKind{planResting}}) }

// flowsAt answers every side with reach.
type flowsAt struct{ reach Reach }

func (flowsAt) Evidence(string) map[string]any   { return nil }
func (f flowsAt) Reach(string, model.Side) Reach { return f.reach }

// A step's input checks judge the side its run moves to as the plan
// kinds' Flows last read it; a runbook that reads no flow state cannot
// tell, and says so as a failing check rather than skipping it.
func TestInputChecksReachability(t *testing.T) {
	r := &Run{Plan: Plan{Flow: "f", Kind: planResting, Steps: []Step{{Kind: "x"}}}}
	ctx := context.Background()

	rules := (&Runbook{}).InputChecks(ctx, r, 0)
	if len(rules) != 1 || rules[0].OK || !strings.Contains(rules[0].Evidence, "unknown") || !rules[0].SecondOperator {
		t.Fatalf("no Flows: %+v, want one failing check saying unknown", rules)
	}
	if rules := (&Runbook{Flows: flowsAt{}}).InputChecks(ctx, r, 0); len(rules) != 0 {
		t.Fatalf("a side never read: %+v, want no check (nothing is known to judge)", rules)
	}
	down := Reach{Read: true, OK: false, Text: "DR unreachable since 10:00"}
	rules = (&Runbook{Flows: flowsAt{down}}).InputChecks(ctx, r, 0)
	if len(rules) != 1 || rules[0].OK || rules[0].Evidence != down.Text || rules[0].Name != "DR cluster reachable now" {
		t.Fatalf("DR down: %+v", rules)
	}
	rules = (&Runbook{Flows: flowsAt{Reach{Read: true, OK: true, Text: "reachable"}}}).InputChecks(ctx, r, 0)
	if len(rules) != 1 || !rules[0].OK {
		t.Fatalf("DR up: %+v", rules)
	}
}
