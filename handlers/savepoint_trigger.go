package handlers

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/handlers/form"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/views"
)

// SavepointTrigger is POST /savepoints/trigger: take a savepoint through
// Flink REST; the job keeps running (a stop is refused: only an approved
// runbook changes a job, runbook.ErrStopNeedsRunbook). Checked here; the worker puts it on
// record, takes it in the background and the catalog page shows its
// progress.
func (h *Handlers) SavepointTrigger(w http.ResponseWriter, r *http.Request) {
	f := form.NewSavepointTrigger(r)
	o := savepointsOpts{flow: f.Flow, trigger: views.SavepointTriggerForm{Target: f.Target, Job: f.Job}}
	refuse := func(err error) {
		o.trigger.Error = err.Error()
		h.renderSavepoints(w, r, statusFor(err), o)
	}
	if err := f.Validate(h.Catalog.Targets()); err != nil {
		refuse(err)
		return
	}
	jctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	jobName := ""
	if j, err := h.Catalog.Job(jctx, f.Target, f.Job); err == nil {
		jobName = j.Name
	}
	cancel()
	q := model.SavepointRequest{Target: f.Target, JobID: f.Job, JobName: jobName, Actor: actor(r).Name}
	if _, _, snap := h.savepointFlows(f.Flow); snap != nil {
		q.Flow = snap.Flow.Name // its lag goes on record with the trigger
	}
	// The closing record is written after the request has ended: the
	// worker audits under a copy of it (who asked, from where).
	bg := r.Clone(context.WithoutCancel(r.Context()))
	_, err := h.Worker.TriggerSavepoint(r.Context(), q, func(ctx context.Context, action audit.Action, subject string, details any) (audit.Written, error) {
		return h.record(bg.WithContext(ctx), action, subject, details)
	})
	if err != nil {
		refuse(err)
		return
	}
	back := url.Values{}
	if f.Flow != "" {
		back.Set("flow", f.Flow)
	}
	http.Redirect(w, r, "/savepoints?"+back.Encode()+"#sp-progress", http.StatusSeeOther)
}
