package handlers

import (
	"context"
	"time"

	"github.com/drconsole/drconsole/model"

	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/views"
)

// The runbook's types as the pages show them. Each conversion is one small
// function, so a change to the runbook's types changes only these.

func activeSideView(a model.ActiveSide) views.ActiveSide {
	return views.ActiveSide{Flow: a.Flow, Side: a.Side, Run: a.Run, SinceMs: a.SinceMs}
}

func (h *Handlers) runView(r *runbook.Run) *views.Run {
	v := &views.Run{Run: r.Run, ValidApprovers: r.ValidApprovers, Approved: r.Approved, Discounted: r.Discounted,
		NextStep: r.NextStep, LostAtCut: h.Failovers.LostAtCut(r), ReverseActive: h.Failovers.ReverseActive(r),
		Plan: views.RunPlan{Drill: r.Plan.Kind == runbook.PlanDrill, Failback: r.Plan.Kind == runbook.PlanFailback, FailbackOf: r.Plan.FailbackOf,
			Switchover: r.Plan.Kind == runbook.PlanSwitchover}}
	v.Rollback, _ = h.Runbook.Rollbackable(r)
	for i := range r.Plan.Steps {
		v.Plan.RestsOn = append(v.Plan.RestsOn, r.Plan.RestsOnInputs(i))
	}
	for i, st := range r.Steps {
		if st.Status == model.StepDone && st.Result != "" {
			if v.Results == nil {
				v.Results = map[int][]views.Figure{}
			}
			v.Results[i] = resultFigures(st.Result)
			if v.Plan.Switchover && i == len(r.Steps)-1 && len(v.Results[i]) > 0 && v.Results[i][0].Label == "verdict" {
				v.Verdict = v.Results[i][0].Value
			}
		}
	}
	return v
}

func stepPreviewView(p runbook.StepPreview) views.StepPreview {
	v := views.StepPreview{Idx: p.Idx, Title: p.Title, Irreversible: p.Irreversible, Lines: p.Lines, Err: p.Err}
	for _, r := range p.Rules {
		v.Rules = append(v.Rules, views.RuleResult{Name: r.Name, OK: r.OK, Overridable: r.Overridable, Evidence: r.Evidence})
	}
	return v
}

func cachedPreviewsView(ps []runbook.CachedPreview) []views.CachedPreview {
	out := make([]views.CachedPreview, len(ps))
	for i, p := range ps {
		out[i] = views.CachedPreview{StepPreview: stepPreviewView(p.StepPreview), Computed: p.Computed, At: p.At, Changed: p.Changed}
	}
	return out
}

func rewritePreviewView(p *model.RewritePreview) *views.RewritePreview {
	if p == nil {
		return nil
	}
	return &views.RewritePreview{Lines: p.Lines}
}

// lostView reads the totals with now, the page's time.
func lostView(l *model.LostToDR, now time.Time) *views.LostToDR {
	t := l.Totals()
	v := &views.LostToDR{Active: activeSideView(l.Active), Recorded: l.Recorded, PrimaryErr: l.PrimaryErr, AtMs: l.AtMs,
		Total: t.Text(), TotalAge: t.AgeText(now)}
	for _, p := range l.Partitions {
		v.Partitions = append(v.Partitions, views.LostPartition{Topic: p.Topic, Partition: p.Partition, Known: p.Known(),
			Figure: p.Figure(), How: p.Reached.How, From: p.From, End: p.End, Deleted: p.Deleted, Records: p.Records,
			Counted: p.Counted, FirstMs: p.FirstMs, LastMs: p.LastMs, AsOfMs: p.AsOfMs})
	}
	return v
}

func savepointTriggersView(ts []model.SavepointTrigger) []views.SavepointTrigger {
	out := make([]views.SavepointTrigger, len(ts))
	for i, t := range ts {
		out[i] = views.SavepointTrigger{ID: t.ID, Target: t.Target, JobID: t.JobID, JobName: t.JobName, Actor: t.Actor,
			Started: t.Started, Waited: t.Waited, Done: t.Done, Err: t.Err, ResultID: t.ResultID, ResultPath: t.ResultPath,
			Finished: t.Finished}
	}
	return out
}

// finished is a completed run's summary; nil while it is not completed.
func (h *Handlers) finished(ctx context.Context, r *runbook.Run) *views.Finished {
	if r.Status != model.RunCompleted {
		return nil
	}
	f := &views.Finished{}
	var first, last int64
	for _, st := range r.Steps {
		if st.StartedMs > 0 && (first == 0 || st.StartedMs < first) {
			first = st.StartedMs
		}
		last = max(last, st.FinishedMs)
	}
	if last == 0 {
		last = r.UpdatedMs
	}
	f.Took = time.Duration(max(last-r.CreatedMs, 0)) * time.Millisecond
	if first > 0 {
		f.Steps = time.Duration(max(last-first, 0)) * time.Millisecond
	}
	sides, err := h.Failovers.ActiveSides(ctx, []string{r.Flow})
	switch {
	case err != nil:
		f.ActiveErr = err.Error()
	case len(sides) == 0:
		f.ActiveErr = "no record of the flow's active side"
	default:
		a := activeSideView(sides[0])
		f.Active = &a
	}
	return f
}
