package handlers

import (
	"net/http"

	"github.com/drconsole/drconsole/handlers/form"
	"github.com/drconsole/drconsole/runbook"
)

// The run actions as the pages and the API (api_runs.go) both take them:
// the form read from r, then the engine or the worker. One path each, so
// an action through the API passes the page's checks and audit.

// approve is run id's approval as r's form asks.
func (h *Handlers) approve(r *http.Request, id int64) error {
	f := form.NewApprove(r)
	if err := f.Validate(); err != nil {
		return err
	}
	return h.Runbook.Approve(r.Context(), actor(r), id, f.PlanHash, f.Comment)
}

// reject is run id's rejection as r's form asks.
func (h *Handlers) reject(r *http.Request, id int64) error {
	f := form.NewReason(r)
	if err := f.Validate(); err != nil {
		return err
	}
	return h.Runbook.Reject(r.Context(), actor(r), id, f.Reason)
}

// cancel is run id's cancellation as r's form asks.
func (h *Handlers) cancel(r *http.Request, id int64) error {
	f := form.NewReason(r)
	if err := f.Validate(); err != nil {
		return err
	}
	return h.Runbook.Cancel(r.Context(), actor(r), id, f.Reason)
}

// execute starts step n (1-based) of run id as r's form asks.
func (h *Handlers) execute(r *http.Request, id int64, n int) error {
	f := form.NewExecute(r)
	if err := f.Validate(); err != nil {
		return err
	}
	return h.Worker.ExecuteWith(r.Context(), actor(r), id, n-1, runbook.StepArgs{Confirmation: f.Confirmation, Override: f.Override, InputsOverride: f.InputsOverride})
}

// startDrill starts drill run id as r's form asks.
func (h *Handlers) startDrill(r *http.Request, id int64) error {
	f := form.NewExecute(r)
	if err := f.Validate(); err != nil {
		return err
	}
	return h.Worker.RunDrill(r.Context(), actor(r), id, f.Confirmation)
}
