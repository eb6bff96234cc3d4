package handlers

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/handlers/form"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/views"
)

// incidentPlan is the plan form for a failover of flow as the incident view
// opens it (GET /failover?flow=…&from=incident), filled with what the
// console knows: pre-flight and the mirror stop, every group MM2 has
// checkpointed, the DR Flink target and jar (the only one, else the last
// run's), the newest usable savepoint with the strategy the catalog
// recommends for it, and a reason saying what happened. The operator
// reviews it; nothing is stored until Create.
func (h *Handlers) incidentPlan(ctx context.Context, flow string) url.Values {
	v := url.Values{"flow": {flow}, "preflight": {"1"}, "stop": {"auto"}}
	groups, _ := h.Monitor.KnownGroups(ctx, flow, primaryGroupsTimeout) // the primary is likely down: its groups are a bonus
	for _, g := range groups {
		if g.LastCheckpointMs > 0 {
			v.Add("group_pick", g.Name)
		}
	}
	v.Set("reason", incidentReason(h.Monitor.Snapshot(flow), flow))
	last := h.lastRestore(ctx, flow)
	target := onlyDRTarget(h.Runbook.Config)
	if target == "" {
		target = last.FlinkTarget
	}
	if target == "" {
		return v // no restore: the operator adds one if the job needs it
	}
	v.Set("flink_target", target)
	if j := h.jarChoices(ctx, target, ""); len(j.Jars) == 1 && len(j.Jars[0].Entries) <= 1 {
		v.Set("jar_pick", views.JarPick(j.Jars[0].ID, firstOr(j.Jars[0].Entries, "")))
	} else if last.FlinkTarget == target && last.JarID != "" {
		v.Set("jar_id", last.JarID)
		v.Set("entry_class", last.EntryClass)
	}
	if last.FlinkTarget == target {
		if len(last.Args) > 0 {
			v.Set("args", strings.Join(last.Args, "\n"))
		}
		if last.Parallelism > 0 {
			v.Set("parallelism", strconv.Itoa(last.Parallelism))
		}
	}
	choices, _ := h.savepointChoices(ctx, flow)
	i := slices.IndexFunc(choices, func(c model.SavepointChoice) bool { return c.Verdict == model.VerdictUsable })
	if i < 0 {
		return v // no usable savepoint: the form says so, the operator decides
	}
	v.Set("savepoint_pick", choices[i].Savepoint.Path)
	v.Set("restore_strategy", h.recommendedStrategy(ctx, flow, choices[i].Savepoint))
	return v
}

// recommendedStrategy is the plan form's value of the restore strategy the
// catalog recommends for restoring sp in flow's DR.
func (h *Handlers) recommendedStrategy(ctx context.Context, flow string, sp model.Savepoint) string {
	f := h.Runbook.Config.Flow(flow)
	if f == nil || h.Catalog == nil {
		return form.StrategyNewUID
	}
	rf := model.RestoreFor{Flow: flow, ClusterLink: f.IsClusterLink()}
	if u, err := h.Catalog.Usability(ctx, sp, flow); err == nil {
		rw := h.Catalog.RewriteStateOf(ctx, sp)
		rf.Usability, rf.Rewrite = &u, &rw
	}
	strategies, _ := model.RestoreStrategies(rf)
	for _, s := range strategies {
		if s.Recommended {
			switch s.N {
			case 1:
				return "" // the savepoint unchanged: "as the boxes say"
			case 4:
				return form.StrategyRewrite
			}
		}
	}
	return form.StrategyNewUID
}

// lastRestore is the restore step of flow's newest run that had one.
func (h *Handlers) lastRestore(ctx context.Context, flow string) runbook.Step {
	runs, err := h.Runbook.Runs(ctx) // newest first
	if err != nil {
		return runbook.Step{}
	}
	for _, r := range runs {
		var p runbook.Plan
		if r.Flow != flow || json.Unmarshal([]byte(r.PlanJSON), &p) != nil {
			continue
		}
		for _, st := range p.Steps {
			if restoresJob(p.Kind, st.Kind) {
				return st
			}
		}
	}
	return runbook.Step{}
}

// onlyDRTarget is the configured DR Flink target when there is exactly one.
func onlyDRTarget(cfg *config.Config) string { return onlyTarget(cfg, config.RegionDR) }

func firstOr(s []string, or string) string {
	if len(s) > 0 {
		return s[0]
	}
	return or
}

// incidentReason is the plan's reason as the incident view states the
// incident. The view and this form are read at different moments: when the
// incident no longer shows (the primary answered once, the flow left
// BROKEN), the reason still says the plan came from it; the operator edits
// it either way.
func incidentReason(s *flowstate.FlowSnapshot, flow string) string {
	switch {
	case s != nil && s.Source.Checked && !s.Source.OK:
		return "Incident: the primary (" + s.Flow.Source + ") has not answered since " + views.Clock(s.Source.Since)
	case s != nil && s.Status == model.FlowStatusBroken:
		return "Incident: replication of " + flow + " BROKEN since " + views.Clock(s.StatusSince) + ": " + s.Reason
	default:
		return "Incident on " + flow + ": failover started from the incident view"
	}
}
