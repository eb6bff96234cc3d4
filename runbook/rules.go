package runbook

import (
	"github.com/drconsole/drconsole/model"
)

// RuleResult is a safety rule evaluated at execution time, with the
// evidence it was judged on.
type RuleResult struct {
	Name        string `json:"name"`
	OK          bool   `json:"ok"`
	Overridable bool   `json:"overridable"`
	Overridden  string `json:"overridden,omitempty"` // the operator's reason
	Evidence    string `json:"evidence"`
	// SecondOperator: a check of what the step rests on (inputs.go), which
	// only an operator other than the requester may override.
	SecondOperator bool `json:"second_operator,omitempty"`
}

// Failed lists the rules that stop a step: failed and not overridden.
func Failed(rules []RuleResult) []string {
	var out []string
	for _, r := range rules {
		if !r.OK && r.Overridden == "" {
			out = append(out, r.Name+": "+r.Evidence)
		}
	}
	return out
}

// Evidence is the flow's state at a decision, for the audit log; nil
// when the flow was never read.
func (rb *Runbook) Evidence(flow string) map[string]any {
	if rb.Flows == nil {
		return nil
	}
	return rb.Flows.Evidence(flow)
}

// Flows is what the engine reads of the flows its plans change: their
// state at a decision, for the audit log, and whether each side answered
// at the last read. The plan kinds' package supplies it with what it reads
// them from (failover.Equip).
type Flows interface {
	// Evidence is flow's state now, for the audit log; nil when it was
	// never read.
	Evidence(flow string) map[string]any
	// Reach is side of flow as last read.
	Reach(flow string, side model.Side) Reach
}

// Reach is one side of a flow as last read.
type Reach struct {
	// Read is false when the side was never read: nothing is known.
	Read bool
	// OK: it answered at the last read; Text says how it stands.
	OK   bool
	Text string
}
