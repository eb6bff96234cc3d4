package runbook

import (
	"context"
	"time"
)

// StepPreview says exactly what a step will change, computed now. It reads
// and never writes.
type StepPreview struct {
	Idx          int
	Title        string
	Irreversible bool
	Lines        []string
	Rules        []RuleResult
	Err          string // the preview itself failed (e.g. a cluster unreachable)
}

// Preview dry-runs every step of a run, now. A page shows the cached
// previews instead (Runbook.Previews): each step may ask Kafka, Connect or
// Flink, with a 10 s timeout apiece.
func (rb *Runbook) Preview(ctx context.Context, r *Run) []StepPreview {
	out := make([]StepPreview, len(r.Plan.Steps))
	for i := range r.Plan.Steps {
		out[i] = rb.PreviewStep(ctx, r, i)
	}
	return out
}

// PreviewStep dry-runs step i of r.
func (rb *Runbook) PreviewStep(ctx context.Context, r *Run, i int) StepPreview {
	flow := rb.Config.Flow(r.Flow)
	p := StepPreview{Idx: i, Title: r.Plan.StepTitle(i, flow), Irreversible: r.Plan.StepIrreversible(i)}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var err error
	p.Rules, p.Lines, err = r.Plan.kind().Preview(pctx, rb, r, i)
	if err != nil {
		p.Err = err.Error()
	}
	return p
}
