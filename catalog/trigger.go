package catalog

import (
	"context"
	"fmt"
	"time"

	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/model"
)

// Savepoint trigger polling.
const (
	TriggerPoll    = 500 * time.Millisecond
	TriggerTimeout = 10 * time.Minute
)

// Starter asks Flink for a savepoint of jobID (stop: stop-with-savepoint)
// into the cluster's default directory and returns the trigger id. The
// catalog cannot send that request itself: it changes a job, and only
// runbook/internal/effect does, behind an audit record
// (failover.TriggerSavepoint passes it in).
type Starter func(ctx context.Context, cl *flink.RESTClient, jobID string, stop bool) (string, error)

// Trigger takes a savepoint of jobID on the Flink target named target
// (stop: stop-with-savepoint, the job finishes after it) through start,
// calling progress with the time waited while Flink works, and records it
// in the catalog (origin triggered) with the offsets read from it when it
// is local. Call it through failover.TriggerSavepoint, which audits it.
func (c *Catalog) Trigger(ctx context.Context, target, jobID string, stop bool, start Starter, progress func(time.Duration)) (model.Savepoint, error) {
	ft, err := c.target(target)
	if err != nil {
		return model.Savepoint{}, err
	}
	cl := c.client(ft.RestURL)
	// The name is for the catalog only; a job the cluster does not know
	// makes the trigger itself fail with Flink's own words.
	job, _ := cl.Job(ctx, jobID)
	what := "savepoint"
	if stop {
		what = "stop-with-savepoint"
	}
	triggered := c.now()
	trigger, err := start(ctx, cl, jobID, stop)
	if err != nil {
		return model.Savepoint{}, fmt.Errorf("catalog: %s of job %s on %s: %w", what, jobID, target, err)
	}
	wctx, cancel := context.WithTimeout(ctx, TriggerTimeout)
	defer cancel()
	loc, err := cl.WaitSavepoint(wctx, jobID, trigger, TriggerPoll, progress)
	if err != nil {
		return model.Savepoint{}, fmt.Errorf("catalog: %s of job %s on %s (trigger %s): %w", what, jobID, target, trigger, err)
	}
	done := c.now()
	sp := model.Savepoint{FlinkTarget: ft.Name, JobID: jobID, JobName: job.Name, Path: flink.CanonicalPath(loc),
		Kind: model.KindSavepoint, Origin: model.OriginTriggered, Status: model.SavepointCompleted,
		TriggerMs: ptr(triggered.UnixMilli()), CompletedMs: ptr(done.UnixMilli())}
	// Flink's own figures (trigger time, size, checkpoint id), when its
	// history already lists it; best effort.
	if h, err := cl.Checkpoints(ctx, jobID); err == nil {
		for _, cp := range append(h.History, derefs(h.Latest.Savepoint)...) {
			if cp.ExternalPath != "" && flink.CanonicalPath(cp.ExternalPath) == sp.Path {
				fillFromFlink(&sp, cp)
				break
			}
		}
	}
	id, err := c.Store.UpsertSavepoint(ctx, sp, done.UnixMilli())
	if err != nil {
		return model.Savepoint{}, fmt.Errorf("catalog: savepoint %s taken but not recorded: %w", loc, err)
	}
	if err := c.readInto(ctx, id, sp.Path); err != nil {
		return model.Savepoint{}, err
	}
	return c.Store.SavepointByID(ctx, id)
}

func derefs[T any](ps ...*T) []T {
	var out []T
	for _, p := range ps {
		if p != nil {
			out = append(out, *p)
		}
	}
	return out
}
