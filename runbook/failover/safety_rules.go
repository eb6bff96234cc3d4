package failover

import (
	"context"
	"fmt"
	"time"

	"github.com/drconsole/drconsole/runbook"
)

// CheckRules evaluates the rules that guard stopping the mirror, now.
// override, when given, overrides the overridable ones that fail.
func (rb Book) CheckRules(ctx context.Context, plan runbook.Plan, override string) []runbook.RuleResult {
	s := rb.Monitor.Snapshot(plan.Flow)
	var rules []runbook.RuleResult
	add := func(r runbook.RuleResult) {
		if !r.OK && r.Overridable && override != "" {
			r.Overridden = override
		}
		rules = append(rules, r)
	}
	primaryGone := s.Source.Checked && !s.Source.OK
	add(runbook.RuleResult{Name: "DR cluster reachable", OK: s.Target.OK, Evidence: ReachText(s.Target, "DR")})

	maxLag := rb.Config.Failover.PromoteMaxLag.D()
	lag := runbook.RuleResult{Name: fmt.Sprintf("lag within %s, or the primary unreachable", maxLag), Overridable: true}
	switch {
	case primaryGone:
		lag.OK, lag.Evidence = true, ReachText(s.Source, "the primary")+"; data at risk: "+AtRiskOf(s).Text(rb.Now())
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
		add(runbook.RuleResult{Name: "data at risk stated", OK: true, Evidence: "the failover loses " + AtRiskOf(s).Text(rb.Now())})
	}

	timeout := rb.Config.Thresholds.HeartbeatTimeout.D()
	hb := runbook.RuleResult{Name: "replicated heartbeats fresh, or the primary unreachable", Overridable: true}
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
	for _, st := range StepsThat(plan, translates) {
		r := runbook.RuleResult{Name: "DR group " + st.Group + " has no active consumers"}
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

func count(v *int64) string {
	if v == nil {
		return "unknown"
	}
	return fmt.Sprint(*v)
}
