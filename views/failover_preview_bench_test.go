package views

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/model"
)

// BenchmarkFailoverRunRender renders a four-step run page from cached
// previews: with the runbook's BenchmarkRunPagePreviews, the server time of a
// run-page view (load + previews + this).
func BenchmarkFailoverRunRender(b *testing.B) {
	now := time.Now()
	run := &Run{Run: model.Run{ID: 1, Flow: "primary->dr", Status: model.RunPending, PlanHash: strings.Repeat("ab", 32),
		CreatedBy: "alice", Reason: "drill", CreatedMs: now.UnixMilli(), ApprovalsRequired: 1}}
	p := FailoverRunPage{Now: now, Run: run, Me: "bob", CanOperate: true}
	for i := range 4 {
		run.Steps = append(run.Steps, model.Step{Idx: i, Status: model.StepPending})
		p.Previews = append(p.Previews, CachedPreview{Computed: true, At: now.Add(-3 * time.Minute),
			StepPreview: StepPreview{Idx: i, Title: "step", Lines: make([]string, 8),
				Rules: []RuleResult{{Name: "lag", OK: true, Evidence: "RPO 0s"}}}})
	}
	var n int
	for b.Loop() {
		w := &countWriter{}
		if err := FailoverRun(p).Render(context.Background(), w); err != nil {
			b.Fatal(err)
		}
		n = w.n
	}
	b.ReportMetric(float64(n), "page-bytes")
}

type countWriter struct{ n int }

func (w *countWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }
