package handlers

import (
	"context"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/drconsole/drconsole/views"
)

// The run page's "recompute" buttons: step previews are cached
// (failover.Runbook.Previews) and computed again only when an operator
// asks. A recompute reads and changes nothing outside the console, so it
// is not audited; viewers may not (failover.ErrRole, 403).

// FailoverRecompute is POST /failover/{run}/previews/recompute: every step.
func (h *Handlers) FailoverRecompute(w http.ResponseWriter, r *http.Request) {
	h.runAction(w, r, 0, "Previews recomputed.", func(ctx context.Context, id int64) error {
		return h.Runbook.Recompute(ctx, actor(r), id, -1)
	})
}

// FailoverRecomputeStep is POST /failover/{run}/steps/{step}/recompute.
func (h *Handlers) FailoverRecomputeStep(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(chi.URLParam(r, "step"))
	if err != nil || n < 1 {
		h.fail(w, r, badRequest("bad step"))
		return
	}
	h.runAction(w, r, n, "Preview of step "+strconv.Itoa(n)+" recomputed.", func(ctx context.Context, id int64) error {
		return h.Runbook.Recompute(ctx, actor(r), id, n-1)
	})
}

// FailoverWaiting is GET /failover/waiting: the navigation's count of the
// runs waiting for the signed-in user's decision (polled by every page).
func (h *Handlers) FailoverWaiting(w http.ResponseWriter, r *http.Request) {
	runs, err := h.Runbook.AwaitingDecision(r.Context(), actor(r))
	v := views.WaitingRuns{Runs: runs}
	if err != nil {
		v.Err = err.Error()
	}
	h.render(w, r, http.StatusOK, views.WaitingFragment(v))
}
