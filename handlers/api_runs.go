package handlers

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
)

// The API's runs: failovers, drills and failbacks, and what operators do
// to them. Each action reads its body into the page's form and takes the
// page's path (createRun, approve, reject, execute, startDrill in
// failover.go and failover_run.go), so the engine's gate, the two-person
// rule, the safety rules and the audit records are the pages' own.

// The fields each action's body may hold: the page form's names
// (handlers/form), as the OpenAPI document lists them.
var (
	planFields = []string{"flow", "reason", "preflight", "stop", "groups", "allow_partial", "translate_from_savepoint", "savepoint_path",
		"flink_target", "jar_id", "entry_class", "args", "parallelism", "allow_non_restored_state", "restore_strategy", "rewrite_to",
		"source_uid", "drill", "failback", "switchover", "failback_pause_mirrors", "failback_flink_target", "failback_dr_target", "failback_dr_job",
		"failback_rewrite_to", "failback_source_uid", "failback_jar_id", "failback_entry_class", "failback_args", "failback_parallelism"}
	approveFields = []string{"plan_hash", "comment"}
	reasonFields  = []string{"reason"}
	executeFields = []string{"confirmation", "override", "inputs_override"}
)

type apiApproval struct {
	Approver string  `json:"approver"`
	Decision string  `json:"decision"`
	Reason   string  `json:"reason"`
	PlanHash string  `json:"plan_hash"`
	At       *string `json:"at"`
	Expires  *string `json:"expires"`
}

type apiStep struct {
	N          int     `json:"n"` // 1-based, as in the URL of its execute
	Kind       string  `json:"kind"`
	Status     string  `json:"status"`
	Attempts   int     `json:"attempts"`
	StartedAt  *string `json:"started_at"`
	FinishedAt *string `json:"finished_at"`
	StartedBy  string  `json:"started_by"`
	Running    bool    `json:"running"`
	Progress   string  `json:"progress"`
	Result     string  `json:"result"`
	Error      string  `json:"error"`
}

type apiRun struct {
	ID                int64   `json:"id"`
	Flow              string  `json:"flow"`
	Kind              string  `json:"kind,omitempty"` // on GET /runs/{id} and the actions' answers
	Status            string  `json:"status"`
	Reason            string  `json:"reason"`
	RequestedBy       string  `json:"requested_by"`
	RequestedAt       *string `json:"requested_at"`
	UpdatedAt         *string `json:"updated_at"`
	PlanHash          string  `json:"plan_hash"`
	ApprovalsRequired int     `json:"approvals_required"`
	BreakGlass        string  `json:"break_glass"`
	// On GET /runs/{id} (and the actions' answers) only.
	Approved       *bool             `json:"approved,omitempty"`
	ValidApprovers []string          `json:"valid_approvers,omitempty"`
	Discounted     map[string]string `json:"discounted_approvals,omitempty"`
	Approvals      []apiApproval     `json:"approvals,omitempty"`
	NextStep       *int              `json:"next_step,omitempty"`
	AtRisk         string            `json:"at_risk,omitempty"`
	Steps          []apiStep         `json:"steps,omitempty"`
}

// planKind names a plan kind ("failover", "drill", "failback",
// "switchover").
func planKind(k runbook.PlanKind) string {
	if k == runbook.PlanFailover {
		return "failover"
	}
	return string(k)
}

func apiRunSummary(m model.Run) apiRun {
	return apiRun{ID: m.ID, Flow: m.Flow, Status: string(m.Status), Reason: m.Reason, RequestedBy: m.CreatedBy,
		RequestedAt: apiTimeMs(m.CreatedMs), UpdatedAt: apiTimeMs(m.UpdatedMs), PlanHash: m.PlanHash,
		ApprovalsRequired: m.ApprovalsRequired, BreakGlass: m.BreakGlass}
}

func (h *Handlers) apiRunDetail(run *runbook.Run) apiRun {
	a := apiRunSummary(run.Run)
	a.Kind = planKind(run.Plan.Kind)
	approved := run.Approved
	a.Approved, a.ValidApprovers, a.Discounted = &approved, run.ValidApprovers, run.Discounted
	if a.ValidApprovers == nil {
		a.ValidApprovers = []string{}
	}
	a.Approvals = []apiApproval{}
	for _, ap := range run.Approvals {
		a.Approvals = append(a.Approvals, apiApproval{Approver: ap.Approver, Decision: string(ap.Decision), Reason: ap.Reason,
			PlanHash: ap.PlanHash, At: apiTimeMs(ap.AtMs), Expires: apiTimeMs(ap.ExpiresMs)})
	}
	if run.NextStep >= 0 {
		n := run.NextStep + 1
		a.NextStep = &n
	}
	a.AtRisk = h.Failovers.RunAtRisk(run)
	running := h.Worker.Executing(run.ID, len(run.Steps))
	progress := h.Worker.Progress(run.ID, len(run.Steps))
	a.Steps = []apiStep{}
	for i, s := range run.Steps {
		a.Steps = append(a.Steps, apiStep{N: i + 1, Kind: s.Kind, Status: string(s.Status), Attempts: s.Attempts,
			StartedAt: apiTimeMs(s.StartedMs), FinishedAt: apiTimeMs(s.FinishedMs), StartedBy: s.StartedBy,
			Running: running[i], Progress: progress[i], Result: s.Result, Error: s.Error})
	}
	return a
}

// APIRuns is GET /api/v1/runs: the newest runs, newest first, without
// their plans (GET /runs/{id} has the plan's kind and steps).
func (h *Handlers) APIRuns(w http.ResponseWriter, r *http.Request) {
	runs, err := h.Runbook.Runs(r.Context())
	if err != nil {
		h.apiFail(w, r, say("cannot read the runs", err))
		return
	}
	out := []apiRun{}
	for _, m := range runs {
		out = append(out, apiRunSummary(m))
	}
	writeJSON(w, http.StatusOK, map[string]any{"runs": out})
}

// apiRunID is the URL's run id; on false the answer is sent.
func (h *Handlers) apiRunID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	id, ok := runID(r)
	if !ok {
		h.apiFail(w, r, badRequest("bad run id"))
	}
	return id, ok
}

// apiAnswerRun answers run id as it is now, with status.
func (h *Handlers) apiAnswerRun(w http.ResponseWriter, r *http.Request, status int, id int64) {
	run, err := h.Runbook.Get(r.Context(), id)
	if err != nil {
		h.apiFail(w, r, refused(err))
		return
	}
	writeJSON(w, status, h.apiRunDetail(run))
}

// APIRun is GET /api/v1/runs/{run}.
func (h *Handlers) APIRun(w http.ResponseWriter, r *http.Request) {
	if id, ok := h.apiRunID(w, r); ok {
		h.apiAnswerRun(w, r, http.StatusOK, id)
	}
}

// APIRunCreate is POST /api/v1/runs: the plan form's fields as JSON.
func (h *Handlers) APIRunCreate(w http.ResponseWriter, r *http.Request) {
	v, err := apiForm(r, planFields...)
	if err != nil {
		h.apiFail(w, r, err)
		return
	}
	f, id, err := h.createRun(formRequest(r, v))
	if err != nil {
		if fields := f.FieldsOf(err); len(fields) > 0 {
			err = say(err.Error(), err, fields)
		}
		h.apiFail(w, r, err)
		return
	}
	w.Header().Set("Location", fmt.Sprintf("/api/v1/runs/%d", id))
	h.apiAnswerRun(w, r, http.StatusCreated, id)
}

// apiRunAction reads the body and runs act on the URL's run, answering
// the run as it is afterwards.
func (h *Handlers) apiRunAction(w http.ResponseWriter, r *http.Request, status int, fields []string, act func(*http.Request, int64) error) {
	id, ok := h.apiRunID(w, r)
	if !ok {
		return
	}
	v, err := apiForm(r, fields...)
	if err != nil {
		h.apiFail(w, r, err)
		return
	}
	if err := act(formRequest(r, v), id); err != nil {
		h.apiFail(w, r, refused(err))
		return
	}
	h.apiAnswerRun(w, r, status, id)
}

// APIRunApprove is POST /api/v1/runs/{run}/approve: the requester cannot
// approve their own run (runbook.ErrSelfApproval, 403).
func (h *Handlers) APIRunApprove(w http.ResponseWriter, r *http.Request) {
	h.apiRunAction(w, r, http.StatusOK, approveFields, h.approve)
}

// APIRunReject is POST /api/v1/runs/{run}/reject.
func (h *Handlers) APIRunReject(w http.ResponseWriter, r *http.Request) {
	h.apiRunAction(w, r, http.StatusOK, reasonFields, h.reject)
}

// APIRunCancel is POST /api/v1/runs/{run}/cancel: the engine's cancel of
// a run not completed.
func (h *Handlers) APIRunCancel(w http.ResponseWriter, r *http.Request) {
	h.apiRunAction(w, r, http.StatusOK, reasonFields, h.cancel)
}

// APIRunDrill is POST /api/v1/runs/{run}/drill: starts an approved drill.
func (h *Handlers) APIRunDrill(w http.ResponseWriter, r *http.Request) {
	h.apiRunAction(w, r, http.StatusAccepted, executeFields, h.startDrill)
}

// APIRunExecute is POST /api/v1/runs/{run}/steps/{step}/execute: the
// step's checks run now; it runs in the background (poll the run).
func (h *Handlers) APIRunExecute(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(chi.URLParam(r, "step"))
	if err != nil || n < 1 {
		h.apiFail(w, r, badRequest("bad step number"))
		return
	}
	h.apiRunAction(w, r, http.StatusAccepted, executeFields, func(r *http.Request, id int64) error { return h.execute(r, id, n) })
}
