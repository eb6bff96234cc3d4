package failback

import (
	"context"
	"strings"

	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
)

// The failback step kinds that rest on inputs; a method renamed on one
// side only would otherwise drop its checks without a word.
var (
	_ runbook.RestingStep = translateGroupBackStep{}
	_ runbook.RestingStep = rewriteBackStep{}
	_ runbook.RestingStep = restoreBackStep{}
)

func (translateGroupBackStep) RestsOnInputs(runbook.Step) bool { return true }

func (translateGroupBackStep) InputRules(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int) []runbook.RuleResult {
	s := r.Plan.Steps[i]
	name := "the positions group " + s.Group + " moves back to are still on the primary"
	b, err := book(rb).groupBack(ctx, r, s.Group)
	if err != nil {
		return []runbook.RuleResult{{Name: name, Evidence: "unknown: " + err.Error()}}
	}
	return []runbook.RuleResult{book(rb).PositionsRule(ctx, r.Flow, name, failover.SidePrimary, b.Primary)}
}

func (rewriteBackStep) RestsOnInputs(runbook.Step) bool { return true }

func (rewriteBackStep) InputRules(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int) []runbook.RuleResult {
	name := "the positions the savepoint is rewritten back to are still on the primary"
	if book(rb).Catalog == nil {
		return []runbook.RuleResult{{Name: name, Evidence: "unknown: no savepoint catalog to read the savepoint"}}
	}
	p, err := book(rb).backTargets(ctx, r, r.Plan.Steps[i])
	if err != nil {
		return []runbook.RuleResult{{Name: name, Evidence: "unknown: " + err.Error()}}
	}
	return []runbook.RuleResult{book(rb).PositionsRule(ctx, r.Flow, name, failover.SidePrimary, p.Primary)}
}

// A failback restores only its rewritten-back copy.
func (restoreBackStep) RestsOnInputs(s runbook.Step) bool {
	return strings.TrimSpace(s.SavepointPath) != ""
}

func (restoreBackStep) InputRules(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int) []runbook.RuleResult {
	return []runbook.RuleResult{book(rb).RewrittenPositionsRule(ctx, r.Flow, r.Plan.Steps[i].SavepointPath, failover.SidePrimary)}
}
