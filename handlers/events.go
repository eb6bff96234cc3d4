package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/a-h/templ"

	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/views"
)

// The live pages' pushed fragments. Each ...Events method checks the
// request like its page does and returns what to render on every tick;
// web.Streams runs the loop, sends what changed, and ends with the request.
// No fragment holds an input: forms stay where the page put them.

// Fragment is one named piece of a live page (an SSE event name and the
// component that renders its data).
type Fragment struct {
	Event string
	View  templ.Component
}

// Fragments renders a page's live pieces as of now; an error ends the
// stream.
type Fragments func(ctx context.Context) ([]Fragment, error)

// FailoverRunEvents is GET /failover/{run}/events: the run's status and
// approvals, and each step's status and result. Previews are never
// computed here: they are the page's (and cost Kafka reads).
func (h *Handlers) FailoverRunEvents(w http.ResponseWriter, r *http.Request) (Fragments, bool) {
	id, ok := runID(r)
	if !ok {
		h.fail(w, r, badRequest("bad run id"))
		return nil, false
	}
	if _, err := h.Runbook.Get(r.Context(), id); err != nil {
		h.fail(w, r, refused(err))
		return nil, false
	}
	loaded := r.URL.Query().Get("forms")
	me, canOperate := actor(r).Name, actorMayOperate(r)
	return func(ctx context.Context) ([]Fragment, error) {
		run, err := h.Runbook.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		p := views.FailoverRunPage{Now: h.now(), Run: h.runView(run), Me: me, CanOperate: canOperate,
			Running:  h.Worker.Executing(id, len(run.Steps)),
			Progress: h.Worker.Progress(id, len(run.Steps)), LoadedForms: loaded}
		fs := []Fragment{{"run", views.RunStatusFragment(p)}, {"approvals", views.RunApprovalsFragment(p)}, h.runsPulse(ctx)}
		for i, st := range run.Steps {
			fs = append(fs, Fragment{views.StepEvent(i), views.StepStatusFragment(p, i, st)})
		}
		if run.Plan.Kind == runbook.PlanDrill {
			d, err := h.runDrill(ctx, run)
			if err != nil {
				return nil, err
			}
			fs = append(fs, Fragment{"drill", views.DrillFragment(d)})
		}
		return fs, nil
	}, true
}

// OverviewEvents is GET /events: per flow card its figures and its
// sparkline (which changes about once a minute), the incidents that lead
// the page, the count of
// unacknowledged losses (their banner holds ack buttons and is not
// pushed) and the time of the last update.
func (h *Handlers) OverviewEvents(w http.ResponseWriter, r *http.Request) (Fragments, bool) {
	loaded, _ := strconv.Atoi(r.URL.Query().Get("losses"))
	flows, err := strconv.Atoi(r.URL.Query().Get("flows"))
	if err != nil {
		flows = -1 // unknown: the notice asks for a reload
	}
	canOperate := actorMayOperate(r)
	return func(ctx context.Context) ([]Fragment, error) {
		now := h.now()
		p := views.OverviewPage{Now: now, Window: SparkWindow, LoadedLosses: loaded}
		p.Losses, p.LossUnknown = h.openLosses(r.WithContext(ctx))
		snaps := h.Monitor.Snapshots()
		fs := []Fragment{{"losses", views.LossNotice(p)}, {"flows", views.FlowsNotice(len(snaps), flows)}, {"asof", views.OverviewAsOf(now)}, h.runsPulse(ctx)}
		cards := make([]views.FlowCard, 0, len(snaps))
		for _, s := range snaps {
			c := h.overviewCard(ctx, s, now)
			cards = append(cards, c)
			fs = append(fs, Fragment{views.CardEvent(s.Flow.Name), views.FlowCardFragment(c, now, SparkWindow)},
				Fragment{views.SparkEvent(s.Flow.Name), views.SparkFragment(c)})
		}
		return append(fs, Fragment{"incidents", views.Incidents(cards, now, canOperate)}), nil
	}, true
}

// SavepointEvents is GET /savepoints/events: the savepoints being taken
// through the console.
func (h *Handlers) SavepointEvents(w http.ResponseWriter, r *http.Request) (Fragments, bool) {
	since, _ := strconv.ParseInt(r.URL.Query().Get("since"), 10, 64)
	return func(ctx context.Context) ([]Fragment, error) {
		now := h.now()
		p := views.SavepointProgress{Now: now, SinceMs: since, Triggers: savepointTriggersView(h.Worker.SavepointTriggers(now))}
		return []Fragment{{"progress", views.SavepointProgressList(p)}, h.runsPulse(ctx)}, nil
	}, true
}

// runsPulse is the live pages' "runs" event: the runs pending approval,
// each with when it last changed. It is the same for every viewer (the
// overview's stream is shared); each page's navigation then asks for its
// own user's count. A failed read marks itself, so the navigation asks
// and shows its own error.
func (h *Handlers) runsPulse(ctx context.Context) Fragment {
	if h.Runbook == nil {
		return Fragment{"runs", views.RunsPulse("")} // a console without a runbook has no runs
	}
	runs, err := h.Runbook.Pending(ctx)
	if err != nil {
		return Fragment{"runs", views.RunsPulse("unread")}
	}
	var mark strings.Builder
	for _, r := range runs {
		fmt.Fprintf(&mark, "%d@%d ", r.ID, r.UpdatedMs)
	}
	return Fragment{"runs", views.RunsPulse(mark.String())}
}
