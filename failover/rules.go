package failover

import (
	"context"
	"fmt"
	"time"

	"github.com/drconsole/drconsole/monitor"
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

// CheckRules evaluates the rules that guard stopping the mirror, now.
// override, when given, overrides the overridable ones that fail.
func (rb *Runbook) CheckRules(ctx context.Context, plan Plan, override string) []RuleResult {
	s := rb.Monitor.Snapshot(plan.Flow)
	var rules []RuleResult
	add := func(r RuleResult) {
		if !r.OK && r.Overridable && override != "" {
			r.Overridden = override
		}
		rules = append(rules, r)
	}
	primaryGone := s.Source.Checked && !s.Source.OK
	add(RuleResult{Name: "DR cluster reachable", OK: s.Target.OK, Evidence: reach(s.Target, "DR")})

	maxLag := rb.Config.Failover.PromoteMaxLag.D()
	lag := RuleResult{Name: fmt.Sprintf("lag within %s, or the primary unreachable", maxLag), Overridable: true}
	switch {
	case primaryGone:
		lag.OK, lag.Evidence = true, reach(s.Source, "the primary")+"; data at risk: "+AtRiskOf(s).Text(rb.Now())
	case s.RPOMs == nil || s.RPOAtLeast:
		// Fail closed: a partition of unknown age may hold any amount.
		lag.Evidence = "RPO " + s.RPOText()
	default:
		d := time.Duration(*s.RPOMs) * time.Millisecond
		lag.OK = d <= maxLag
		lag.Evidence = fmt.Sprintf("RPO %s (%s messages) as of %s", d, count(s.TotalLagMessages), s.FiguresAt.UTC().Format(time.RFC3339))
	}
	add(lag)
	if flow := rb.Config.Flow(plan.Flow); flow != nil && !flow.IsClusterLink() {
		// What the failover loses, stated where it is decided (a Cluster
		// Linking flow's step states its mirrors' own).
		add(RuleResult{Name: "data at risk stated", OK: true, Evidence: "the failover loses " + AtRiskOf(s).Text(rb.Now())})
	}

	timeout := rb.Config.Thresholds.HeartbeatTimeout.D()
	hb := RuleResult{Name: "replicated heartbeats fresh, or the primary unreachable", Overridable: true}
	flow := rb.Config.Flow(plan.Flow)
	switch {
	case flow != nil && flow.IsClusterLink():
		// No MM2 heartbeats: the link's own health stands in.
		hb.Name = "cluster link healthy (mirrors not failed), or the primary unreachable"
		why := s.Link.Unhealthy()
		hb.OK = primaryGone || (s.Link != nil && why == "")
		hb.Evidence = map[bool]string{true: "link ACTIVE, no failed mirror", false: "link: " + why}[why == ""]
		if s.Link == nil {
			hb.Evidence = "no answer from the cluster link REST API yet"
		}
	case primaryGone:
		hb.OK, hb.Evidence = true, "primary unreachable"
	case s.HeartbeatAge == nil:
		hb.Evidence = "no replicated heartbeat ever seen"
	default:
		hb.OK = *s.HeartbeatAge <= timeout
		hb.Evidence = fmt.Sprintf("last heartbeat %s ago (timeout %s)", s.HeartbeatAge.Round(time.Second), timeout)
	}
	add(hb)

	// Consumer groups the plan moves must have no members in DR: Kafka
	// refuses the commit otherwise, and running consumers would overwrite it.
	tr := rb.Monitor.Translator(plan.Flow)
	for _, st := range plan.StepsThat(Translates) {
		r := RuleResult{Name: "DR group " + st.Group + " has no active consumers"}
		gctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		state, members, err := tr.DRGroupState(gctx, st.Group)
		cancel()
		switch {
		case err != nil:
			r.Evidence = err.Error()
		default:
			r.OK = members == 0
			r.Evidence = fmt.Sprintf("%s with %d member(s)", state, members)
		}
		add(r)
	}
	return rules
}

func reach(r monitor.Reachability, name string) string {
	switch {
	case !r.Checked:
		return "not checked yet"
	case r.OK:
		return "reachable"
	}
	return r.Words(name)
}

func count(v *int64) string {
	if v == nil {
		return "unknown"
	}
	return fmt.Sprint(*v)
}

// evidence is the flow's state at a decision, for the audit log.
func (rb *Runbook) evidence(flow string) map[string]any {
	s := rb.Monitor.Snapshot(flow)
	if s == nil {
		return nil
	}
	// as_of: the read the figures rest on (monitor.FlowSnapshot.FiguresAt),
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
