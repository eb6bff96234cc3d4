package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/drconsole/drconsole/handlers/form"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/views"
)

// The page of one failover run, and what operators do on it: approve,
// reject, break glass, execute the next step.

func runID(r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(chi.URLParam(r, "run"), 10, 64)
	return id, err == nil && id > 0
}

// FailoverRun is GET /failover/{run}.
func (h *Handlers) FailoverRun(w http.ResponseWriter, r *http.Request) {
	h.renderRun(w, r, http.StatusOK, "", "")
}

// loadRun reads the run the URL names; on false the answer is sent.
func (h *Handlers) loadRun(w http.ResponseWriter, r *http.Request) (*runbook.Run, bool) {
	id, ok := runID(r)
	if !ok {
		h.fail(w, r, badRequest("bad run id"))
		return nil, false
	}
	run, err := h.Runbook.Get(r.Context(), id)
	if err != nil {
		h.fail(w, r, refused(err))
		return nil, false
	}
	return run, true
}

func (h *Handlers) renderRun(w http.ResponseWriter, r *http.Request, status int, flash, msg string) {
	run, ok := h.loadRun(w, r)
	if !ok {
		return
	}
	id := run.ID
	p := views.FailoverRunPage{Chrome: h.chrome(fmt.Sprintf("Failover run %d", id)), Now: h.now(), Run: runView(run),
		Me: actor(r).Name, CanOperate: actorMayOperate(r), BreakGlass: h.Runbook.Config.Failover.BreakGlass,
		Flash: flash, Error: msg, Running: h.worker().Executing(id, len(run.Steps)),
		Progress: h.worker().Progress(id, len(run.Steps)), AtRisk: h.kinds().RunAtRisk(run)}
	p.Previews = cachedPreviewsView(h.Runbook.Previews(r.Context(), run)) // cached: computed on a run's first view and on "recompute" only
	var err error
	if p.Drill, err = h.runDrill(r.Context(), run); err != nil {
		p.Error = err.Error()
	}
	h.render(w, r, status, views.FailoverRun(p))
}

// FailoverReverse is GET /failover/{run}/reverse: a failback's reverse
// flow now, the fragment its run page polls while the reverse connectors
// exist (read from Connect and both clusters on each request).
func (h *Handlers) FailoverReverse(w http.ResponseWriter, r *http.Request) {
	run, ok := h.loadRun(w, r)
	if !ok {
		return
	}
	h.render(w, r, http.StatusOK, views.ReverseFlowFragment(views.ReverseFlowBlock{Run: run.ID, View: reverseView(h.back().ReverseFlow(r.Context(), run)), Now: h.now()}))
}

// FailoverApprove is POST /failover/{run}/approve.
func (h *Handlers) FailoverApprove(w http.ResponseWriter, r *http.Request) {
	f := form.NewApprove(r)
	h.runAction(w, r, "Approved.", func(ctx context.Context, id int64) error {
		if err := f.Validate(); err != nil {
			return err
		}
		return h.Runbook.Approve(ctx, actor(r), id, f.PlanHash, f.Comment)
	})
}

// FailoverReject is POST /failover/{run}/reject.
func (h *Handlers) FailoverReject(w http.ResponseWriter, r *http.Request) {
	f := form.NewReason(r)
	h.runAction(w, r, "Rejected.", func(ctx context.Context, id int64) error {
		if err := f.Validate(); err != nil {
			return err
		}
		return h.Runbook.Reject(ctx, actor(r), id, f.Reason)
	})
}

// FailoverBreakGlass is POST /failover/{run}/break-glass.
func (h *Handlers) FailoverBreakGlass(w http.ResponseWriter, r *http.Request) {
	f := form.NewReason(r)
	h.runAction(w, r, "BREAK-GLASS: approved by you alone. This is in the audit log.", func(ctx context.Context, id int64) error {
		if err := f.Validate(); err != nil {
			return err
		}
		return h.Runbook.BreakGlass(ctx, actor(r), id, f.Reason)
	})
}

func (h *Handlers) runAction(w http.ResponseWriter, r *http.Request, flash string, fn func(context.Context, int64) error) {
	id, ok := runID(r)
	if !ok {
		h.fail(w, r, badRequest("bad run id"))
		return
	}
	if err := fn(r.Context(), id); err != nil {
		h.renderRun(w, r, statusFor(refused(err)), "", err.Error())
		return
	}
	h.renderRun(w, r, http.StatusOK, flash, "")
}

// FailoverExecute is POST /failover/{run}/steps/{step}/execute: checks run
// now (approval, order, confirmation, safety rules); the effect runs in the
// worker and the page shows its progress.
func (h *Handlers) FailoverExecute(w http.ResponseWriter, r *http.Request) {
	id, ok := runID(r)
	n, err := strconv.Atoi(chi.URLParam(r, "step"))
	if !ok || err != nil || n < 1 {
		h.fail(w, r, badRequest("bad run or step"))
		return
	}
	f := form.NewExecute(r)
	if err := f.Validate(); err != nil {
		h.renderRun(w, r, statusFor(err), "", err.Error())
		return
	}
	if err := h.worker().ExecuteWith(r.Context(), actor(r), id, n-1, runbook.StepArgs{Confirmation: f.Confirmation, Override: f.Override, InputsOverride: f.InputsOverride}); err != nil {
		h.renderRun(w, r, statusFor(refused(err)), "", err.Error())
		return
	}
	h.renderRun(w, r, http.StatusAccepted, fmt.Sprintf("Step %d started.", n), "")
}
