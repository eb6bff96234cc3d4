package failover

import (
	"context"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook/internal/effect"
)

// TriggerSavepoint takes a savepoint of jobID on the Flink target named
// target (stop: stop-with-savepoint, which ends the job) and registers it
// in cat, calling progress while Flink works. w is the trigger's audit
// record (savepoint.trigger from the worker, which never stops a job; a
// failback's savepoint-dr step claim, the one stop): without a valid one
// Flink is asked nothing.
func TriggerSavepoint(ctx context.Context, w audit.Written, cat *catalog.Catalog, target, jobID string, stop bool,
	progress func(time.Duration)) (model.Savepoint, error) {
	return cat.Trigger(ctx, target, jobID, stop, func(ctx context.Context, cl *flink.RESTClient, jobID string, stop bool) (string, error) {
		return effect.TriggerSavepoint(ctx, w, cl, jobID, "", stop)
	}, progress)
}
