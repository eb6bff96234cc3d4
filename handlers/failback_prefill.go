package handlers

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
)

// failbackPlan is the plan form for the failback of failover run id as its
// finished page opens it (GET /failover?from=run&run=N), filled with what
// the console knows: the flow, failback ticked, every group the failover
// moved to DR, the Flink part (the DR target and the job the failover
// restored there; the primary's Flink target and its jar when there is
// only one of each; the copy's destination when there is one savepoint
// directory to name a new directory in) and a reason naming the run.
// What it cannot know stays empty for the operator. ok is false (the plain
// form) unless run id is the completed failover DR is active from.
func (h *Handlers) failbackPlan(ctx context.Context, id int64) (url.Values, bool) {
	r, err := h.Runbook.Get(ctx, id)
	if err != nil || r.Status != model.RunCompleted || r.Plan.Kind == runbook.PlanDrill || r.Plan.Kind == runbook.PlanFailback {
		return nil, false
	}
	if a, err := h.Failovers.ActiveSideOf(ctx, r.Flow); err != nil || a.Side != model.SideDR || a.Run != id {
		return nil, false // a later run moved the flow, or its side is unknown
	}
	v := url.Values{"flow": {r.Flow}, "failback": {"1"}, "reason": {"Failback after failover run " + strconv.FormatInt(id, 10)}}
	restored := -1
	for i, st := range r.Plan.Steps {
		switch runbook.PartOf(r.Plan.Kind, st.Kind) { // as the failover's kind says what each step is
		case runbook.PartGroups:
			v.Add("group_pick", st.Group)
		case runbook.PartRestore:
			restored = i
		}
	}
	if restored < 0 {
		return v, true // no job moved to DR: no Flink part
	}
	v.Set("failback_dr_target", r.Plan.Steps[restored].FlinkTarget)
	job := h.Failovers.RestoredJob(r, restored)
	v.Set("failback_dr_job", job)
	primary := onlyTarget(h.Runbook.Config, config.RegionPrimary)
	if primary == "" {
		return v, true // none, or the operator picks one
	}
	v.Set("failback_flink_target", primary)
	if j := h.jarChoices(ctx, primary, ""); len(j.Jars) == 1 && len(j.Jars[0].Entries) <= 1 {
		v.Set("failback_jar_id", j.Jars[0].ID)
		v.Set("failback_entry_class", firstOr(j.Jars[0].Entries, ""))
	}
	if dirs := h.Runbook.Config.SavepointDirs; job != "" && len(dirs) == 1 {
		// A new directory: the rewrite refuses one that exists.
		v.Set("failback_rewrite_to", strings.TrimRight(flink.CanonicalPath(dirs[0]), "/")+"/failback-run-"+strconv.FormatInt(id, 10))
	}
	return v, true
}

// onlyTarget is the configured Flink target of region when there is
// exactly one.
func onlyTarget(cfg *config.Config, region config.Region) string {
	var only string
	for _, t := range cfg.FlinkTargets {
		if t.Region == region {
			if only != "" {
				return ""
			}
			only = t.Name
		}
	}
	return only
}
