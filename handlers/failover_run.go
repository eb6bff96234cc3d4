package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-chi/chi/v5"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/failover"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/views"
	"github.com/drconsole/drconsole/web/identity"
)

// executions tracks steps whose effect runs in this process right now.
type executions struct {
	mu      sync.Mutex
	running map[string]bool
}

func (e *executions) key(run int64, idx int) string { return fmt.Sprintf("%d/%d", run, idx) }

func (e *executions) set(run int64, idx int, on bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.running == nil {
		e.running = map[string]bool{}
	}
	if on {
		e.running[e.key(run, idx)] = true
	} else {
		delete(e.running, e.key(run, idx))
	}
}

func (e *executions) of(run int64, steps int) map[int]bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[int]bool{}
	for i := range steps {
		if e.running[e.key(run, i)] {
			out[i] = true
		}
	}
	return out
}

// actor is who makes the request, as authentication established it.
func actor(r *http.Request) failover.Actor {
	a := failover.Actor{ClientIP: identity.ClientIP(r), UserAgent: r.UserAgent()}
	if u := identity.UserFrom(r.Context()); u != nil {
		a.Name, a.Role = u.Name, u.Role
	}
	return a
}

// FailoverList is GET /failover.
func (h *Handlers) FailoverList(w http.ResponseWriter, r *http.Request) {
	h.renderFailoverList(w, r, http.StatusOK, "")
}

func (h *Handlers) renderFailoverList(w http.ResponseWriter, r *http.Request, status int, msg string) {
	runs, err := h.Runbook.Runs(r.Context())
	if err != nil {
		msg = err.Error()
	}
	p := views.FailoverListPage{Chrome: h.chrome("Failover"), Now: h.now(), Runs: runs, Error: msg, CanOperate: actorMayOperate(r)}
	for _, s := range h.Monitor.Snapshots() {
		p.Flows = append(p.Flows, s.Flow.Name)
		if tr := h.Monitor.Translator(s.Flow.Name); tr != nil {
			for _, g := range h.knownGroups(r.Context(), tr) {
				if !slices.Contains(p.Groups, g) {
					p.Groups = append(p.Groups, g)
				}
			}
		}
	}
	for _, t := range h.Runbook.Config.FlinkTargets {
		if t.Region == "dr" {
			p.FlinkTargets = append(p.FlinkTargets, t.Name)
		}
	}
	h.render(w, r, status, views.FailoverList(p))
}

func actorMayOperate(r *http.Request) bool {
	return identity.UserFrom(r.Context()).AtLeast(identity.RoleOperator)
}

// planFromForm builds a plan from the new-plan form.
func planFromForm(r *http.Request, cfg *config.Config) failover.Plan {
	p := failover.Plan{Flow: r.FormValue("flow")}
	if r.FormValue("preflight") != "" {
		p.Steps = append(p.Steps, failover.Step{Kind: failover.KindPreflight})
	}
	switch r.FormValue("stop") {
	case "auto":
		kind := failover.KindStopMirror
		if f := cfg.Flow(p.Flow); f != nil && f.IsClusterLink() {
			kind = failover.KindPromoteMirrors
		}
		p.Steps = append(p.Steps, failover.Step{Kind: kind})
	case "failover":
		p.Steps = append(p.Steps, failover.Step{Kind: failover.KindFailoverMirrors})
	}
	fromSavepoint := ""
	if r.FormValue("translate_from_savepoint") != "" {
		fromSavepoint = strings.TrimSpace(r.FormValue("savepoint_path"))
	}
	for _, g := range formGroups(r) {
		p.Steps = append(p.Steps, failover.Step{Kind: failover.KindTranslateGroup, Group: g, AllowPartial: r.FormValue("allow_partial") != "",
			FromSavepoint: fromSavepoint})
	}
	if t := r.FormValue("flink_target"); t != "" {
		s := failover.Step{Kind: failover.KindRestoreFlink, FlinkTarget: t, JarID: strings.TrimSpace(r.FormValue("jar_id")),
			EntryClass: strings.TrimSpace(r.FormValue("entry_class")), SavepointPath: strings.TrimSpace(r.FormValue("savepoint_path")),
			AllowNonRestoredState: r.FormValue("allow_non_restored_state") != ""}
		for _, a := range strings.Split(r.FormValue("args"), "\n") {
			if a = strings.TrimSpace(a); a != "" {
				s.Args = append(s.Args, a)
			}
		}
		s.Parallelism, _ = strconv.Atoi(strings.TrimSpace(r.FormValue("parallelism")))
		p.Steps = append(p.Steps, s)
	}
	return p
}

// formGroups reads the consumer groups of the plan form: one per line of
// each "groups" value (a textarea, or repeated fields). Never split at
// commas: a group name may contain them. Blank lines are ignored.
func formGroups(r *http.Request) []string {
	var out []string
	for _, v := range r.Form["groups"] {
		for g := range strings.Lines(v) {
			if g = strings.TrimSpace(g); g != "" {
				out = append(out, g)
			}
		}
	}
	return out
}

// FailoverCreate is POST /failover.
func (h *Handlers) FailoverCreate(w http.ResponseWriter, r *http.Request) {
	if r.FormValue("translate_from_savepoint") != "" && strings.TrimSpace(r.FormValue("savepoint_path")) == "" {
		h.renderFailoverList(w, r, http.StatusUnprocessableEntity, "Translating from the savepoint needs its path: fill in the savepoint path, or untick the box to translate the groups' committed offsets.")
		return
	}
	id, err := h.Runbook.Create(r.Context(), actor(r), planFromForm(r, h.Runbook.Config), r.FormValue("reason"))
	if err != nil {
		h.renderFailoverList(w, r, statusFor(err), err.Error())
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/failover/%d", id), http.StatusSeeOther)
}

func statusFor(err error) int {
	switch {
	case errors.Is(err, failover.ErrRole), errors.Is(err, failover.ErrSelfApproval):
		return http.StatusForbidden
	case errors.Is(err, storage.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, storage.ErrConflict):
		return http.StatusConflict
	}
	return http.StatusUnprocessableEntity
}

func runID(r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(chi.URLParam(r, "run"), 10, 64)
	return id, err == nil && id > 0
}

// FailoverRun is GET /failover/{run}.
func (h *Handlers) FailoverRun(w http.ResponseWriter, r *http.Request) {
	h.renderRun(w, r, http.StatusOK, "", "")
}

func (h *Handlers) renderRun(w http.ResponseWriter, r *http.Request, status int, flash, msg string) {
	id, ok := runID(r)
	if !ok {
		http.Error(w, "bad run id", http.StatusBadRequest)
		return
	}
	run, err := h.Runbook.Get(r.Context(), id)
	if err != nil {
		http.Error(w, err.Error(), statusFor(err))
		return
	}
	p := views.FailoverRunPage{Chrome: h.chrome(fmt.Sprintf("Failover run %d", id)), Now: h.now(), Run: run,
		Me: actor(r).Name, CanOperate: actorMayOperate(r), BreakGlass: h.Runbook.Config.Failover.BreakGlass,
		Flash: flash, Error: msg, Running: h.executions.of(id, len(run.Steps))}
	p.Previews = h.Runbook.Preview(r.Context(), run)
	h.render(w, r, status, views.FailoverRun(p))
}

// FailoverApprove is POST /failover/{run}/approve.
func (h *Handlers) FailoverApprove(w http.ResponseWriter, r *http.Request) {
	h.runAction(w, r, "Approved.", func(ctx context.Context, id int64) error {
		return h.Runbook.Approve(ctx, actor(r), id, r.FormValue("plan_hash"), r.FormValue("comment"))
	})
}

// FailoverReject is POST /failover/{run}/reject.
func (h *Handlers) FailoverReject(w http.ResponseWriter, r *http.Request) {
	h.runAction(w, r, "Rejected.", func(ctx context.Context, id int64) error {
		return h.Runbook.Reject(ctx, actor(r), id, r.FormValue("reason"))
	})
}

// FailoverBreakGlass is POST /failover/{run}/break-glass.
func (h *Handlers) FailoverBreakGlass(w http.ResponseWriter, r *http.Request) {
	h.runAction(w, r, "BREAK-GLASS: approved by you alone. This is in the audit log.", func(ctx context.Context, id int64) error {
		return h.Runbook.BreakGlass(ctx, actor(r), id, r.FormValue("reason"))
	})
}

func (h *Handlers) runAction(w http.ResponseWriter, r *http.Request, flash string, fn func(context.Context, int64) error) {
	id, ok := runID(r)
	if !ok {
		http.Error(w, "bad run id", http.StatusBadRequest)
		return
	}
	if err := fn(r.Context(), id); err != nil {
		h.renderRun(w, r, statusFor(err), "", err.Error())
		return
	}
	h.renderRun(w, r, http.StatusOK, flash, "")
}

// FailoverExecute is POST /failover/{run}/steps/{step}/execute: checks run
// now (approval, order, confirmation, safety rules); the effect runs in the
// background and the page shows its progress.
func (h *Handlers) FailoverExecute(w http.ResponseWriter, r *http.Request) {
	id, ok := runID(r)
	n, err := strconv.Atoi(chi.URLParam(r, "step"))
	if !ok || err != nil || n < 1 {
		http.Error(w, "bad run or step", http.StatusBadRequest)
		return
	}
	x, err := h.Runbook.Begin(r.Context(), actor(r), id, n-1, r.FormValue("confirmation"), strings.TrimSpace(r.FormValue("override")))
	if err != nil {
		h.renderRun(w, r, statusFor(err), "", err.Error())
		return
	}
	h.executions.set(id, n-1, true)
	go func() {
		defer h.executions.set(id, n-1, false)
		if err := x.Run(context.WithoutCancel(r.Context())); err != nil {
			h.Log.Error("failover step failed", "run", id, "step", n, "err", err)
		}
	}()
	h.renderRun(w, r, http.StatusAccepted, fmt.Sprintf("Step %d started.", n), "")
}
