package handlers

import (
	"context"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
)

// The services of the runbook side that handlers call, as handlers use
// them: cli hands in the concrete ones (runbook/failover's Worker), so
// handlers reach neither franz-go nor client-go through them.

// Failovers is what the pages ask of the plan kinds (runbook/failover,
// runbook/failback; failback.Book answers all of it): which side of a
// flow is active, what a run risks and lost at its cut, the steps a form
// asks for, drills, a failback's stamp and its reverse flow.
type Failovers interface {
	ActiveSides(ctx context.Context, flows []string) ([]model.ActiveSide, error)
	ActiveSideOf(ctx context.Context, flow string) (model.ActiveSide, error)
	// RunAtRisk states what run r loses if it cuts now ("" when it
	// does not cut, or cut already); LostAtCut what it lost at its cut.
	RunAtRisk(r *runbook.Run) string
	LostAtCut(r *runbook.Run) string
	// RestoredJob is the job id step idx of r restored ("" unknown).
	RestoredJob(r *runbook.Run, idx int) string
	// RewriteStep is the rewrite-savepoint step q asks for under cfg.
	RewriteStep(cfg *config.Config, q runbook.Request) runbook.Step
	// RewriteForm is what rewrite step s of flow would do, as the plan
	// form shows it, and the splits needing a choice; nil with the error
	// when nothing could be computed.
	RewriteForm(ctx context.Context, flow string, s runbook.Step) (*model.RewritePreview, error)
	Drill(ctx context.Context, id int64) (*model.Drill, error)
	Drills(ctx context.Context, flow string) ([]model.Drill, error)
	// StampFailback copies into a failback plan what its approval
	// covers (the failover it reverses, its cut); an error refuses it.
	StampFailback(ctx context.Context, p *runbook.Plan) error
	// ReverseActive: failback r has reverse connectors now, which
	// ReverseFlow reads (nil when it has none).
	ReverseActive(r *runbook.Run) bool
	ReverseFlow(ctx context.Context, r *runbook.Run) *model.ReverseView
	// LostToDR is what the old primary holds beyond what reached DR
	// before the failover (runbook.ErrPrimaryActive, runbook.ErrNotMM2
	// when there is nothing to work out); PrepareLostExport checks who
	// may export it (only: one partition) and puts the export on record.
	LostToDR(ctx context.Context, flow string) (*model.LostToDR, error)
	PrepareLostExport(ctx context.Context, who runbook.Actor, flow string, only *model.TP) (model.LostExport, error)
}

// restoresJob: a step of kind k in a plan of kind plan restores a Flink
// job, as the plan kind says (the restore, or a failback's restore on
// the primary, asks for it).
func restoresJob(plan runbook.PlanKind, k runbook.StepKind) bool {
	part := runbook.PartOf(plan, k)
	return part == runbook.PartRestore || part == runbook.PartFlinkBack
}

// Jobs runs work that outlives the request that started it: a failover's
// or a failback's step, a drill, a savepoint trigger (failover.Worker).
type Jobs interface {
	// ExecuteWith runs step idx of run id for who in the background.
	ExecuteWith(ctx context.Context, who runbook.Actor, id int64, idx int, args runbook.StepArgs) error
	// RunDrill runs drill run id's steps in the background.
	RunDrill(ctx context.Context, who runbook.Actor, id int64, confirmation string) error
	// Executing says which of run's steps are running in this process.
	Executing(run int64, steps int) map[int]bool
	// Progress is what the running steps of run say of themselves.
	Progress(run int64, steps int) map[int]string
	// SavepointTriggers are the savepoints in progress or recently done.
	SavepointTriggers(now time.Time) []model.SavepointTrigger
	// TriggerSavepoint takes a savepoint (the job keeps running), its
	// records written through record.
	TriggerSavepoint(ctx context.Context, q model.SavepointRequest, record runbook.AuditFunc) (int64, error)
}
