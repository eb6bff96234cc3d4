package runbook

import "github.com/drconsole/drconsole/model"

// Restore strategies of a plan that restores the job from a savepoint
// (model.RestoreStrategies 4 and 2).
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
	Choices              map[string]model.Choice
	// Restore names the job's restore (FlinkTarget "": none): target, jar,
	// entry class, arguments, parallelism, allowNonRestoredState.
	Restore Step
	// FlinkBack is a failback's Flink part; nil for none.
	FlinkBack *FlinkBack
	// PauseMirrors: a Cluster Linking failback leaves DR's mirrors paused.
	PauseMirrors bool
}

// FlinkBack is what a failback's Flink steps need: the DR job to stop
// with a savepoint (none: the job starts on the primary from the groups'
// offsets), where its copy for the primary goes, and the restore there
// (its SavepointPath is set to RewriteTo).
type FlinkBack struct {
	DRTarget, DRJob      string
	RewriteTo, SourceUID string
	Restore              Step
}
