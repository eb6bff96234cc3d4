package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/drconsole/drconsole/handlers/form"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/views"
)

// What the plan form's pickers may cost one request: the page renders with
// the primary or the DR Flink cluster gone (and says so).
const (
	primaryGroupsTimeout = 2 * time.Second
	jarsTimeout          = 3 * time.Second
	planSavepoints       = 30 // catalog entries offered (and judged) at most
)

// planChoices fills the plan form's pickers for the form as submitted
// (nothing submitted: the first flow, no restore; opened from the
// incident view: what the console knows, incidentPlan; from a finished
// failover's page: its failback, failbackPlan).
func (h *Handlers) planChoices(r *http.Request, flows []string) views.PlanChoices {
	q := r.URL.Query()
	switch from := q.Get("from"); {
	case r.Method != http.MethodGet:
	case from == "incident":
		r.Form = h.incidentPlan(r.Context(), q.Get("flow"))
	case from == "run":
		id, _ := strconv.ParseInt(q.Get("run"), 10, 64)
		if v, ok := h.failbackPlan(r.Context(), id); ok {
			r.Form = v
		} else {
			r.Form = url.Values{} // the plain form
		}
	}
	f := form.NewPlan(r)
	if len(r.Form) == 0 {
		f = f.Defaults()
	}
	if f.Flow == "" && len(flows) > 0 {
		f.Flow = flows[0]
	}
	c := views.PlanChoices{Now: h.now(), Target: f.FlinkTarget, Summary: h.planSummary(r, f), Choices: h.rewriteChoices(r, f)}
	if len(r.Form) > 0 {
		c.Values = r.Form
	}
	c.Groups = h.groupChoices(r.Context(), f.Flow, r.Form["group_pick"], true)
	c.Jars = h.jarChoices(r.Context(), f.FlinkTarget, r.FormValue("jar_pick"))
	if len(h.Runbook.Config.FlinkTargets) > 0 { // the restore fields show only then
		c.Savepoints, c.SavepointsErr = h.savepointChoices(r.Context(), f.Flow)
	}
	return c
}

// groupChoices are the groups known for flow, the primary's included when
// it answers within primaryGroupsTimeout.
func (h *Handlers) groupChoices(ctx context.Context, flow string, picked []string, multi bool) views.GroupChoices {
	g := views.GroupChoices{Now: h.now(), Picked: picked, Multi: multi}
	if h.Monitor.Snapshot(flow) == nil {
		g.Err = fmt.Sprintf("no flow named %q", flow)
		return g
	}
	var err error
	if g.Groups, err = h.Monitor.KnownGroups(ctx, flow, primaryGroupsTimeout); err != nil {
		g.Err = err.Error()
	}
	return g
}

// jarChoices are the jars uploaded to a DR Flink target.
func (h *Handlers) jarChoices(ctx context.Context, target, picked string) views.JarChoices {
	j := views.JarChoices{Now: h.now(), Target: target, Picked: picked}
	switch {
	case target == "":
	case h.Catalog == nil:
		j.Err = "no savepoint catalog: the console does not ask Flink"
	default:
		ctx, cancel := context.WithTimeout(ctx, jarsTimeout)
		defer cancel()
		jars, err := h.Catalog.Jars(ctx, target)
		if err != nil {
			j.Err = err.Error()
		}
		j.Jars = jarsView(jars)
	}
	return j
}

// savepointChoices are the catalog's newest entries judged against flow.
func (h *Handlers) savepointChoices(ctx context.Context, flow string) ([]model.SavepointChoice, string) {
	if h.Catalog == nil {
		return nil, ""
	}
	choices, err := h.Catalog.RestoreChoices(ctx, flow, planSavepoints)
	if err != nil {
		return choices, err.Error()
	}
	return choices, ""
}

// planSummary says what the form would plan, and what the runbook would
// refuse, with the same code that builds and checks the plan on submit.
func (h *Handlers) planSummary(r *http.Request, f form.Plan) views.PlanSummary {
	cfg := h.Runbook.Config
	pickErr := h.drillSavepoint(r.Context(), &f)
	plan := f.Request().Plan(cfg)
	if err := h.Failovers.StampFailback(r.Context(), &plan); err != nil {
		pickErr = refused(err)
	}
	s := views.PlanSummary{Rewrite: h.planRewrite(r.Context(), f, actor(r).Name)}
	for i, st := range plan.Steps {
		t := plan.StepTitle(i, cfg.Flow(f.Flow))
		if restoresJob(plan.Kind, st.Kind) {
			entry := st.EntryClass
			if entry == "" {
				entry = "the one the jar's manifest names"
			}
			t += fmt.Sprintf(": jar %q, entry class %s", st.JarID, entry)
		}
		s.Steps = append(s.Steps, t)
	}
	if err := f.Validate(); err != nil {
		s.Problem = err.Error()
	} else if err := h.checkPlanFields(r.Context(), f); err != nil {
		s.Problem = err.Error()
	} else if pickErr != nil {
		s.Problem = pickErr.Error()
	} else if err := plan.Validate(cfg); err != nil {
		s.Problem = err.Error()
	} else if err := h.Runbook.Refusals(r.Context(), plan); err != nil {
		s.Problem = err.Error()
	}
	return s
}

// PlanGroups is GET /group-picker?flow=&multi=: the group list's items for
// a flow (plan form and translate page, on a flow change).
func (h *Handlers) PlanGroups(w http.ResponseWriter, r *http.Request) {
	multi, _ := strconv.ParseBool(r.FormValue("multi"))
	h.render(w, r, http.StatusOK, views.GroupOptions(h.groupChoices(r.Context(), r.FormValue("flow"), nil, multi)))
}

// PlanJars is GET /failover/plan/jars?flink_target=: the jar select of a
// target, on a target change.
func (h *Handlers) PlanJars(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, views.JarOptions(h.jarChoices(r.Context(), r.FormValue("flink_target"), "")))
}

// PlanSavepoints is GET /failover/plan/savepoints?flow=: the savepoint
// select judged against a flow, on a flow change.
func (h *Handlers) PlanSavepoints(w http.ResponseWriter, r *http.Request) {
	c := views.PlanChoices{Now: h.now()}
	c.Savepoints, c.SavepointsErr = h.savepointChoices(r.Context(), r.FormValue("flow"))
	h.render(w, r, http.StatusOK, views.SavepointOptions(c))
}

// PlanSummary is GET /failover/plan/summary?<the plan form>: what the form
// would plan, on every change (it plans nothing).
func (h *Handlers) PlanSummary(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, views.PlanSummaryBody(h.planSummary(r, form.NewPlan(r))))
}
