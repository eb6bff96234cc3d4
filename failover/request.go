package failover

import (
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/translation"
)

// Restore strategies of a plan that restores the job from a savepoint
// (catalog.RestoreStrategies 4 and 2).
const (
	StrategyRewrite = "rewrite"
	StrategyNewUID  = "new-uid"
)

// Request is what an operator asks for, as the plan form read it; Plan
// turns it into steps by the runbook's rules, so every door that plans a
// run plans it the same way.
type Request struct {
	Flow      string
	Kind      PlanKind
	Preflight bool
	// Stop is "auto" (stop MirrorMaker 2, or promote a Cluster Linking
	// flow's mirrors), "failover" (fail the mirrors over whatever their
	// lag) or "" (no mirror step).
	Stop                   string
	Groups                 []string
	AllowPartial           bool
	TranslateFromSavepoint bool
	SavepointPath          string
	// Strategy is StrategyRewrite, StrategyNewUID or "" (as the boxes say).
	Strategy             string
	RewriteTo, SourceUID string
	Choices              map[string]translation.Choice
	// Restore names the job's restore (FlinkTarget "": none): target, jar,
	// entry class, arguments, parallelism, allowNonRestoredState.
	Restore Step
	// FlinkBack is a failback's Flink part; nil for none.
	FlinkBack *FlinkBack
	// PauseMirrors: a Cluster Linking failback leaves DR's mirrors paused.
	PauseMirrors bool
}

// Plan is the plan q asks for under cfg.
func (q Request) Plan(cfg *config.Config) Plan {
	clusterLink := false
	if f := cfg.Flow(q.Flow); f != nil {
		clusterLink = f.IsClusterLink()
	}
	if q.Kind == PlanFailback {
		if clusterLink {
			return LinkFailbackPlan(q.Flow, q.PauseMirrors)
		}
		p := FailbackPlan(q.Flow, q.Groups...)
		if q.FlinkBack != nil {
			p = p.WithFlinkBack(*q.FlinkBack)
		}
		return p
	}
	out := Plan{Flow: q.Flow, Kind: q.Kind}
	if q.Preflight {
		out.Steps = append(out.Steps, Step{Kind: KindPreflight})
	}
	stop := q.Stop
	if q.Kind == PlanDrill {
		stop = "" // a drill never stops or promotes production's mirror
	}
	switch stop {
	case "auto":
		kind := KindStopMirror
		if clusterLink {
			kind = KindPromoteMirrors
		}
		out.Steps = append(out.Steps, Step{Kind: kind})
	case "failover":
		out.Steps = append(out.Steps, Step{Kind: KindFailoverMirrors})
	}
	fromSavepoint := ""
	if q.TranslateFromSavepoint || q.Strategy == StrategyNewUID {
		fromSavepoint = q.SavepointPath
	}
	for _, g := range q.Groups {
		out.Steps = append(out.Steps, Step{Kind: KindTranslateGroup, Group: g, AllowPartial: q.AllowPartial, FromSavepoint: fromSavepoint})
	}
	restore := q.Restore
	restore.Kind, restore.SavepointPath = KindRestoreFlink, q.SavepointPath
	restore.AllowNonRestoredState = restore.AllowNonRestoredState || q.Strategy == StrategyNewUID
	if q.Strategy == StrategyRewrite && q.SavepointPath != "" {
		rw := q.RewriteStep(cfg)
		out.Steps = append(out.Steps, rw)
		restore.SavepointPath = rw.RewriteTo
	}
	if restore.FlinkTarget != "" {
		out.Steps = append(out.Steps, restore)
	}
	return out
}

// RewriteStep is the rewrite-savepoint step q asks for (with the rewrite
// strategy), its destination proposed when not named.
func (q Request) RewriteStep(cfg *config.Config) Step {
	to := q.RewriteTo
	if to == "" {
		to = RewriteDest(cfg, q.Flow, q.SavepointPath)
	}
	return Step{Kind: KindRewriteSavepoint, RewriteFrom: q.SavepointPath, SourceUID: q.SourceUID, RewriteTo: to, Choices: q.Choices}
}
