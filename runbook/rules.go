package runbook

import "github.com/drconsole/drconsole/model"

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

func ReachText(r model.Reachability, name string) string {
	switch {
	case !r.Checked:
		return "not checked yet"
	case r.OK:
		return "reachable"
	}
	return r.Words(name)
}

// Evidence is the flow's state at a decision, for the audit log.
func (rb *Runbook) Evidence(flow string) map[string]any {
	s := rb.Monitor.Snapshot(flow)
	if s == nil {
		return nil
	}
	// as_of: the read the figures rest on (flowstate.FlowSnapshot.FiguresAt),
	// not the last refresh attempt; rpo_at_least: they are lower bounds.
	ev := map[string]any{"as_of": s.FiguresAt.UTC(), "status": s.Status, "reason": s.Reason, "rpo_ms": s.RPOMs,
		"rpo_at_least": s.RPOAtLeast, "lag_messages": s.TotalLagMessages, "source_reachable": s.Source.OK, "target_reachable": s.Target.OK,
		"unknown_partitions": s.Unknown, "data_lost_partitions": s.DataLost}
	if s.Bound != "" {
		ev["figures_bound"] = s.Bound
	}
	if s.HeartbeatAge != nil {
		ev["heartbeat_age_ms"] = s.HeartbeatAge.Milliseconds()
	}
	if a, ok := rb.AtRisk(flow); ok {
		ev["at_risk"] = a.Record(rb.Now())
	}
	return ev
}
