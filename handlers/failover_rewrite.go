package handlers

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/handlers/form"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/views"
)

// rewriteTimeout bounds what the plan form's rewrite preview and
// strategies may cost a request: the savepoint's `_metadata`, Kafka's log
// starts, DR's offsets by timestamp.
const rewriteTimeout = 8 * time.Second

// planRewrite previews the rewrite the form asks for (strategy rewrite),
// and judges the restore strategies for the picked savepoint (any
// strategy): what the operator sees before planning.
func (h *Handlers) planRewrite(ctx context.Context, f form.Plan, who string) *views.PlanRewrite {
	if f.SavepointPath == "" || h.Catalog == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, rewriteTimeout)
	defer cancel()
	out := &views.PlanRewrite{Chosen: f.Strategy == form.StrategyRewrite}
	cfg := h.Runbook.Config
	flow := cfg.Flow(f.Flow)
	sp, err := h.Store.SavepointByPath(ctx, flink.CanonicalPath(f.SavepointPath))
	switch {
	case flow == nil:
		out.StrategiesErr = "no flow named " + f.Flow
	case errors.Is(err, storage.ErrNotFound):
		out.StrategiesErr = f.SavepointPath + " is not in the savepoint catalog: the restore strategies are not judged"
	case err != nil:
		out.StrategiesErr = "the restore strategies are not judged: " + err.Error()
	default:
		rf := model.RestoreFor{Flow: f.Flow, ClusterLink: flow.IsClusterLink(), Chosen: slices.Sorted(maps.Keys(f.Choices))}
		if u, err := h.Catalog.Usability(ctx, sp, f.Flow); err != nil {
			out.StrategiesErr = err.Error()
		} else {
			rw := h.Catalog.RewriteStateOf(ctx, sp)
			rf.Usability, rf.Rewrite = &u, &rw
		}
		out.Strategies, _ = model.RestoreStrategies(rf)
	}
	if out.Chosen {
		step := h.Failovers.RewriteStep(cfg, f.Request())
		stamped := make(map[string]model.Choice, len(step.Choices))
		for k, c := range step.Choices { // as the runbook will record them
			c.By = who
			stamped[k] = c
		}
		step.Choices = stamped
		pv, err := h.Failovers.RewriteForm(ctx, f.Flow, step)
		if err != nil {
			out.Err = err.Error()
		}
		out.Preview = rewritePreviewView(pv)
	}
	return out
}

// rewriteChoices lists the partitions of the picked savepoint that need
// an operator's choice (no translation now), with the form's values.
func (h *Handlers) rewriteChoices(r *http.Request, f form.Plan) views.RewriteChoices {
	c := views.RewriteChoices{Values: r.Form, Active: f.Strategy == form.StrategyRewrite && f.SavepointPath != ""}
	if !c.Active {
		return c
	}
	ctx, cancel := context.WithTimeout(r.Context(), rewriteTimeout)
	defer cancel()
	step := h.Failovers.RewriteStep(h.Runbook.Config, f.Request())
	step.Choices = nil // which partitions need one, whatever is chosen now
	p, err := h.Failovers.RewriteForm(ctx, f.Flow, step)
	if err != nil {
		c.Err = err.Error()
		return c
	}
	for _, row := range p.NeedChoice {
		c.Rows = append(c.Rows, targetRowView(row))
	}
	return c
}

// PlanRewriteChoices is GET /failover/plan/rewrite?<the plan form>: the
// per-partition choice fields, on a change of flow, savepoint or strategy.
func (h *Handlers) PlanRewriteChoices(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, views.RewriteChoiceFields(h.rewriteChoices(r, form.NewPlan(r))))
}
