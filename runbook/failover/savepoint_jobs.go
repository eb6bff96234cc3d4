package failover

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/storage"
)

// triggerKeep: finished triggers stay on the page this long.
const triggerKeep = 15 * time.Minute

// flowSnapshot is flow as the monitor last read it; nil for "", a flow
// it does not watch, or a worker whose runbook has no monitor.
func (w *Worker) flowSnapshot(flow string) *flowstate.FlowSnapshot {
	if flow == "" || w.Runbook == nil {
		return nil
	}
	if mon := book(w.Runbook).Monitor; mon != nil {
		return mon.Snapshot(flow)
	}
	return nil
}

// spTriggers are the savepoints being taken through this console.
type spTriggers struct {
	mu   sync.Mutex
	seq  int64
	list []*model.SavepointTrigger
}

// start records a trigger; one per job at a time.
func (t *spTriggers) start(target, jobID, jobName, actor string, now time.Time) (int64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, x := range t.list {
		if !x.Done && x.Target == target && x.JobID == jobID {
			return 0, inProgress(fmt.Sprintf("a savepoint of job %s on %s is already in progress (started by %s)", jobID, target, x.Actor))
		}
	}
	t.seq++
	t.list = append(t.list, &model.SavepointTrigger{ID: t.seq, Target: target, JobID: jobID, JobName: jobName, Actor: actor, Started: now})
	return t.seq, nil
}

func (t *spTriggers) update(id int64, f func(*model.SavepointTrigger)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, x := range t.list {
		if x.ID == id {
			f(x)
		}
	}
}

func (t *spTriggers) remove(id int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, x := range t.list {
		if x.ID == id {
			t.list = append(t.list[:i], t.list[i+1:]...)
			return
		}
	}
}

// recent copies the triggers in progress or finished within triggerKeep,
// newest first, forgetting older ones.
func (t *spTriggers) recent(now time.Time) []model.SavepointTrigger {
	t.mu.Lock()
	defer t.mu.Unlock()
	var keep []*model.SavepointTrigger
	var out []model.SavepointTrigger
	for _, x := range t.list {
		if x.Done && now.Sub(x.Finished) > triggerKeep {
			continue
		}
		keep = append(keep, x)
		out = append(out, *x)
	}
	t.list = keep
	sort.Slice(out, func(i, j int) bool { return out[i].ID > out[j].ID })
	return out
}

// inProgress is a refused second trigger of a job: a conflict
// (storage.ErrConflict) with its own message.
type inProgress string

func (e inProgress) Error() string { return string(e) }
func (e inProgress) Unwrap() error { return storage.ErrConflict }

// SavepointTriggers are the savepoints in progress or finished within the
// last 15 minutes, newest first.
func (w *Worker) SavepointTriggers(now time.Time) []model.SavepointTrigger { return w.sp.recent(now) }

// TriggerSavepoint takes a savepoint (the job keeps running) in the
// background and returns at once with the trigger's id for
// SavepointTriggers. One per job at a time (else an error wrapping
// storage.ErrConflict). The trigger is on record before Flink is asked: an
// opening record that cannot be written refuses it (*runbook.AuditRefusedError);
// its outcome (savepoint.done / savepoint.failed) is recorded after.
//
// record writes the records: the trigger before Flink is asked (no
// record, no savepoint), its outcome after.
func (w *Worker) TriggerSavepoint(ctx context.Context, q model.SavepointRequest, record runbook.AuditFunc) (int64, error) {
	jctx, done, err := w.admit(ctx, fmt.Sprintf("savepoint of job %s on %s", q.JobID, q.Target))
	if err != nil {
		return 0, err
	}
	id, err := w.sp.start(q.Target, q.JobID, q.JobName, q.Actor, w.now())
	if err != nil {
		done()
		return 0, err
	}
	action := audit.SavepointTrigger
	subject := "flink-job:" + q.Target + "/" + q.JobID
	details := map[string]any{"flink_target": q.Target, "job_id": q.JobID, "job_name": q.JobName, "stop": false}
	if snap := w.flowSnapshot(q.Flow); snap != nil {
		ev := map[string]any{"flow": snap.Flow.Name, "status": snap.Status, "as_of": snap.FiguresAt.UTC().Format(time.RFC3339)}
		if snap.RPOMs != nil {
			ev["rpo_ms"] = *snap.RPOMs
			if snap.RPOAtLeast {
				ev["rpo_at_least"] = true // a lower bound, not the RPO
			}
		} else {
			ev["rpo_ms"] = "unknown"
		}
		details["lag"] = ev
	}
	opened, err := record(ctx, action, subject, details)
	if err != nil {
		w.sp.remove(id)
		done()
		return 0, &runbook.AuditRefusedError{Err: err}
	}
	// The request ends now; the savepoint and its closing audit record do not.
	go func() {
		defer done()
		w.runTrigger(jctx, opened, id, subject, q, record)
	}()
	return id, nil
}

// runTrigger takes the savepoint and records its outcome.
func (w *Worker) runTrigger(ctx context.Context, opened audit.Written, id int64, subject string, q model.SavepointRequest, record runbook.AuditFunc) {
	ft, jobID, stop := q.Target, q.JobID, false
	started := time.Now()
	sp, err := TriggerSavepoint(ctx, opened, w.Catalog, q.Target, q.JobID, stop, func(d time.Duration) {
		w.sp.update(id, func(t *model.SavepointTrigger) { t.Waited = d })
	})
	// The outcome is recorded even when shutdown cancelled the wait.
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err != nil {
		w.log().Warn("savepoint failed", "target", ft, "job", jobID, "stop", stop, "err", err)
		_, aerr := record(actx, audit.SavepointFailed, subject, map[string]any{"flink_target": ft, "job_id": jobID, "stop": stop,
			"error": err.Error(), "waited_ms": time.Since(started).Milliseconds()})
		msg := err.Error() + w.outcomeNotAudited(aerr)
		w.sp.update(id, func(t *model.SavepointTrigger) { t.Done, t.Err, t.Finished = true, msg, w.now() })
		return
	}
	done := map[string]any{"flink_target": ft, "job_id": jobID, "stop": stop, "savepoint_id": sp.ID, "path": sp.Path,
		"waited_ms": time.Since(started).Milliseconds(), "offsets_read": sp.OffsetsJSON != "", "source_uid": sp.SourceUID}
	if sp.CheckpointID != nil {
		done["checkpoint_id"] = *sp.CheckpointID
	}
	if sp.ReadError != "" {
		done["read_error"] = sp.ReadError
	}
	msg := ""
	if _, aerr := record(actx, audit.SavepointDone, subject, done); aerr != nil {
		aerr := w.outcomeNotAudited(aerr)
		msg = fmt.Sprintf("savepoint taken and catalogued as #%d (%s)%s", sp.ID, sp.Path, aerr)
	}
	w.sp.update(id, func(t *model.SavepointTrigger) {
		t.Done, t.Finished, t.ResultID, t.ResultPath, t.Err = true, w.now(), sp.ID, sp.Path, msg
		if t.JobName == "" {
			t.JobName = sp.JobName
		}
	})
}

// outcomeNotAudited says (and logs) that a savepoint's outcome record could
// not be written: the trigger itself was on record before Flink was asked,
// but the outcome must not pass silently. "" when aerr is nil.
func (w *Worker) outcomeNotAudited(aerr error) string {
	if aerr == nil {
		return ""
	}
	w.log().Error("savepoint outcome not written to the audit log", "err", aerr)
	return "; the outcome could not be written to the audit log: " + aerr.Error()
}
