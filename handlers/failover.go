package handlers

import (
	"context"
	"fmt"
	"net/http"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/handlers/form"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/views"
)

// actor is who makes the request, as authentication established it.
func actor(r *http.Request) runbook.Actor {
	a := runbook.Actor{ClientIP: identity.ClientIP(r), UserAgent: r.UserAgent()}
	if u := identity.UserFrom(r.Context()); u != nil {
		a.Name, a.Role = u.Name, u.Role
	}
	return a
}

// FailoverList is GET /failover.
func (h *Handlers) FailoverList(w http.ResponseWriter, r *http.Request) {
	h.renderFailoverList(w, r, http.StatusOK, "", nil)
}

// renderFailoverList renders the runs and the plan form; msg says what
// was refused, fields which of the form's fields, beside each.
func (h *Handlers) renderFailoverList(w http.ResponseWriter, r *http.Request, status int, msg string, fields form.Errors) {
	runs, err := h.Runbook.Runs(r.Context())
	if err != nil {
		msg = err.Error()
	}
	p := views.FailoverListPage{Chrome: h.chrome("Failover"), Now: h.now(), Runs: runs, Error: msg, CanOperate: actorMayOperate(r)}
	for _, s := range configuredFlows(h.Monitor.Snapshots()) {
		p.Flows = append(p.Flows, s.Flow.Name)
	}
	for _, t := range h.Runbook.Config.FlinkTargets {
		switch t.Region {
		case config.RegionDR:
			p.FlinkTargets = append(p.FlinkTargets, t.Name)
		case config.RegionPrimary:
			p.PrimaryFlinkTargets = append(p.PrimaryFlinkTargets, t.Name)
		}
	}
	if p.CanOperate {
		p.Plan = h.planChoices(r, p.Flows)
		p.Plan.Errors = fields
		// Failback is offered only for flows DR is active for.
		for _, a := range h.activeSides(r) {
			if a.Side == model.SideDR {
				p.FailbackFlows = append(p.FailbackFlows, a.Flow)
			} else if f := h.Runbook.Config.Flow(a.Flow); f != nil && f.Switchover != nil {
				// A switchover moves a flow whose primary is active.
				p.SwitchoverFlows = append(p.SwitchoverFlows, a.Flow)
			}
		}
	}
	h.render(w, r, status, views.FailoverList(p))
}

func actorMayOperate(r *http.Request) bool {
	return identity.UserFrom(r.Context()).AtLeast(model.RoleOperator)
}

// drillSavepoint: a drill that restores the job and names no savepoint
// rehearses from the newest usable one, picked when the plan is made, so
// its path is in the plan the approvers see. None usable refuses the plan
// (an entry whose verdict is unknown is never picked).
func (h *Handlers) drillSavepoint(ctx context.Context, f *form.Plan) error {
	if !f.Drill || f.FlinkTarget == "" || f.SavepointPath != "" || h.Catalog == nil {
		return nil
	}
	sp, err := h.Catalog.NewestUsable(ctx, f.Flow, planSavepoints)
	if err != nil {
		return refused(fmt.Errorf("%w; name the drill's savepoint, or take one first", err))
	}
	f.SavepointPath = sp.Path
	return nil
}

// FailoverCreate is POST /failover.
func (h *Handlers) FailoverCreate(w http.ResponseWriter, r *http.Request) {
	f, id, err := h.createRun(r)
	if err != nil {
		h.renderFailoverList(w, r, statusFor(err), err.Error(), f.FieldsOf(err))
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/failover/%d", id), http.StatusSeeOther)
}

// createRun requests the plan r's form asks for (the page's form, or the
// API's body read into it): the form's checks, the plan's fields against
// the clusters, a drill's savepoint, then the runbook. An error is
// classified for statusFor; f is the form read, for its fields' errors.
func (h *Handlers) createRun(r *http.Request) (f form.Plan, id int64, err error) {
	f = form.NewPlan(r)
	err = f.Validate()
	if err == nil {
		err = h.checkPlanFields(r.Context(), f)
	}
	if err == nil {
		err = h.drillSavepoint(r.Context(), &f)
	}
	if err != nil {
		return f, 0, err
	}
	id, err = h.Runbook.Create(r.Context(), actor(r), f.Request().Plan(h.Runbook.Config), f.Reason)
	if err != nil {
		return f, 0, refused(err)
	}
	return f, id, nil
}
