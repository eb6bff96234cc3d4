package failover

import (
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/runbook"
)

// buildFailover is the failover (or drill) plan q asks for under cfg.
func buildFailover(cfg *config.Config, q runbook.Request) runbook.Plan {
	clusterLink := false
	if f := cfg.Flow(q.Flow); f != nil {
		clusterLink = f.IsClusterLink()
	}
	out := runbook.Plan{Flow: q.Flow, Kind: q.Kind}
	if q.Preflight {
		out.Steps = append(out.Steps, runbook.Step{Kind: KindPreflight})
	}
	switch q.Stop {
	case "auto":
		kind := KindStopMirror
		if clusterLink {
			kind = KindPromoteMirrors
		}
		out.Steps = append(out.Steps, runbook.Step{Kind: kind})
	case "failover":
		out.Steps = append(out.Steps, runbook.Step{Kind: KindFailoverMirrors})
	}
	fromSavepoint := ""
	if q.TranslateFromSavepoint || q.Strategy == runbook.StrategyNewUID {
		fromSavepoint = q.SavepointPath
	}
	for _, g := range q.Groups {
		out.Steps = append(out.Steps, runbook.Step{Kind: KindTranslateGroup, Group: g, AllowPartial: q.AllowPartial, FromSavepoint: fromSavepoint})
	}
	restore := q.Restore
	restore.Kind, restore.SavepointPath = KindRestoreFlink, q.SavepointPath
	restore.AllowNonRestoredState = restore.AllowNonRestoredState || q.Strategy == runbook.StrategyNewUID
	if q.Strategy == runbook.StrategyRewrite && q.SavepointPath != "" {
		rw := RewriteStep(cfg, q)
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
func RewriteStep(cfg *config.Config, q runbook.Request) runbook.Step {
	to := q.RewriteTo
	if to == "" {
		to = RewriteDest(cfg, q.Flow, q.SavepointPath)
	}
	return runbook.Step{Kind: KindRewriteSavepoint, RewriteFrom: q.SavepointPath, SourceUID: q.SourceUID, RewriteTo: to, Choices: q.Choices}
}
