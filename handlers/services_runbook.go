package handlers

import (
	"context"
	"time"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
)

// The services of the runbook side that handlers call, as handlers use
// them: cli hands in the concrete ones (runbook/failover's Worker), so
// handlers reach neither franz-go nor client-go through them.

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
