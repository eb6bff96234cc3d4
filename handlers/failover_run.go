package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/drconsole/drconsole/handlers/form"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/views"
)

// The page of one failover run, and what operators do on it: approve,
// reject, break glass, execute the next step. An action that succeeds
// answers 303 to the run page at the step it was about (a reload never
// posts again), its message carried by a short-lived cookie; with htmx
// (HX-Request) an action on a step answers that step's fragment alone.
// A refused action answers the page with the refusal and its status.

func runID(r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(chi.URLParam(r, "run"), 10, 64)
	return id, err == nil && id > 0
}

// FailoverRun is GET /failover/{run}.
func (h *Handlers) FailoverRun(w http.ResponseWriter, r *http.Request) {
	if p, ok := h.runPage(w, r); ok {
		h.takeFlash(w, r, &p)
		h.render(w, r, http.StatusOK, views.FailoverRun(p))
	}
}

// FailoverRunSection is GET /failover/{run}/live: the run's section as
// now, fetched by the page when the run changed under its forms.
func (h *Handlers) FailoverRunSection(w http.ResponseWriter, r *http.Request) {
	if p, ok := h.runPage(w, r); ok {
		h.render(w, r, http.StatusOK, views.FailoverRunLive(p))
	}
}

// FailoverActionPage is GET on an action's path (a bookmark, a reload of
// a refused action's answer): the run page, never a 405; app.js puts the
// run page's address back, at the step.
func (h *Handlers) FailoverActionPage(w http.ResponseWriter, r *http.Request) {
	h.FailoverRun(w, r)
}

// runAnchor is the run page at step n (1-based; 0: the top).
func runAnchor(id int64, n int) string {
	u := fmt.Sprintf("/failover/%d", id)
	if n > 0 {
		u += "#" + views.StepID(n-1)
	}
	return u
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

// runPage is the run page's data as of now; on false the answer is sent.
func (h *Handlers) runPage(w http.ResponseWriter, r *http.Request) (views.FailoverRunPage, bool) {
	run, ok := h.loadRun(w, r)
	if !ok {
		return views.FailoverRunPage{}, false
	}
	id := run.ID
	p := views.FailoverRunPage{Chrome: h.chrome(fmt.Sprintf("Failover run %d", id)), Now: h.now(), Run: h.runView(run),
		Me: actor(r).Name, CanOperate: actorMayOperate(r), BreakGlass: h.Runbook.Config.Failover.BreakGlass,
		Running:  h.Worker.Executing(id, len(run.Steps)),
		Progress: h.Worker.Progress(id, len(run.Steps)), AtRisk: h.Failovers.RunAtRisk(run)}
	p.Previews = cachedPreviewsView(h.Runbook.Previews(r.Context(), run)) // cached: computed on a run's first view and on "recompute" only
	var err error
	if p.Drill, err = h.runDrill(r.Context(), run); err != nil {
		p.Error = err.Error()
	}
	p.Finished = h.finished(r.Context(), run)
	return p, true
}

// renderRun answers an action on the run (step n, 1-based; 0: the run):
// with htmx and a step, that step's fragment; else the whole page.
func (h *Handlers) renderRun(w http.ResponseWriter, r *http.Request, status int, n int, flash, msg string) {
	p, ok := h.runPage(w, r)
	if !ok {
		return
	}
	p.Flash, p.MsgStep = flash, n
	if msg != "" {
		p.Error = msg
	}
	if n > 0 && n <= len(p.Run.Steps) && r.Header.Get("HX-Request") == "true" {
		// htmx swaps 2xx answers only: the refusal is in the fragment.
		h.render(w, r, http.StatusOK, views.StepItem(p, n-1, p.Run.Steps[n-1]))
		return
	}
	h.render(w, r, status, views.FailoverRun(p))
}

// actionDone answers an action that succeeded: the step's fragment for
// htmx, else 303 to the run page at the step with flash kept for it.
func (h *Handlers) actionDone(w http.ResponseWriter, r *http.Request, id int64, n int, flash string) {
	if n > 0 && r.Header.Get("HX-Request") == "true" {
		h.renderRun(w, r, http.StatusOK, n, flash, "")
		return
	}
	http.SetCookie(w, h.cookie(flashCookie, "/", url.QueryEscape(fmt.Sprintf("%d|%d|%s", id, n, flash)), 60))
	http.Redirect(w, r, runAnchor(id, n), http.StatusSeeOther)
}

// flashCookie carries an action's message over its redirect, once.
const flashCookie = "drconsole_flash"

// takeFlash moves a flash meant for this run into p and deletes it.
func (h *Handlers) takeFlash(w http.ResponseWriter, r *http.Request, p *views.FailoverRunPage) {
	vs := h.cookies(r, flashCookie)
	if len(vs) == 0 {
		return
	}
	http.SetCookie(w, h.cookie(flashCookie, "/", "", 0))
	raw, err := url.QueryUnescape(vs[0])
	if err != nil {
		return
	}
	parts := strings.SplitN(raw, "|", 3)
	if len(parts) != 3 || parts[0] != strconv.FormatInt(p.Run.ID, 10) {
		return
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil || n < 0 || n > len(p.Run.Steps) {
		return
	}
	p.Flash, p.MsgStep = parts[2], n
}

// FailoverReverse is GET /failover/{run}/reverse: a failback's reverse
// flow now, the fragment its run page polls while the reverse connectors
// exist (read from Connect and both clusters on each request).
func (h *Handlers) FailoverReverse(w http.ResponseWriter, r *http.Request) {
	run, ok := h.loadRun(w, r)
	if !ok {
		return
	}
	h.render(w, r, http.StatusOK, views.ReverseFlowFragment(views.ReverseFlowBlock{Run: run.ID, View: h.Failovers.ReverseFlow(r.Context(), run), Now: h.now()}))
}

// FailoverApprove is POST /failover/{run}/approve.
func (h *Handlers) FailoverApprove(w http.ResponseWriter, r *http.Request) {
	h.runAction(w, r, 0, "Approved.", func(_ context.Context, id int64) error { return h.approve(r, id) })
}

// FailoverReject is POST /failover/{run}/reject.
func (h *Handlers) FailoverReject(w http.ResponseWriter, r *http.Request) {
	h.runAction(w, r, 0, "Rejected.", func(_ context.Context, id int64) error { return h.reject(r, id) })
}

// FailoverBreakGlass is POST /failover/{run}/break-glass.
func (h *Handlers) FailoverBreakGlass(w http.ResponseWriter, r *http.Request) {
	f := form.NewReason(r)
	h.runAction(w, r, 0, "BREAK-GLASS: approved by you alone. This is in the audit log.", func(ctx context.Context, id int64) error {
		if err := f.Validate(); err != nil {
			return err
		}
		return h.Runbook.BreakGlass(ctx, actor(r), id, f.Reason)
	})
}

// runAction runs fn on the URL's run; n is the step it is about (0: the run).
func (h *Handlers) runAction(w http.ResponseWriter, r *http.Request, n int, flash string, fn func(context.Context, int64) error) {
	id, ok := runID(r)
	if !ok {
		h.fail(w, r, badRequest("bad run id"))
		return
	}
	if err := fn(r.Context(), id); err != nil {
		h.renderRun(w, r, statusFor(refused(err)), n, "", err.Error())
		return
	}
	h.actionDone(w, r, id, n, flash)
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
	if err := h.execute(r, id, n); err != nil {
		h.renderRun(w, r, statusFor(refused(err)), n, "", err.Error())
		return
	}
	h.actionDone(w, r, id, n, fmt.Sprintf("Step %d started.", n))
}
