package runbook

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/model"
)

// previewFake counts the step previews computed and can hold them until
// released, as a slow cluster would.
type previewFake struct {
	calls   atomic.Int64
	gate    chan struct{} // nil: no wait
	entered chan struct{}
}

func (f *previewFake) compute(_ context.Context, r *Run, i int) StepPreview {
	n := f.calls.Add(1)
	if f.entered != nil {
		f.entered <- struct{}{}
	}
	if f.gate != nil {
		<-f.gate
	}
	return StepPreview{Idx: i, Lines: []string{"call " + string(rune('0'+n))}}
}

// restoreRun is a run whose steps read no monitor input: the cache alone
// is under test.
func restoreRun(id int64, hash string) *Run {
	st := Step{Kind: "restore-flink", FlinkTarget: "flink-dr", JarID: "job.jar"}
	return &Run{Run: model.Run{ID: id, Flow: "f", PlanHash: hash}, Plan: Plan{Flow: "f", Steps: []Step{st, st}}}
}

func TestPreviewsComputedOnceForRepeatedViews(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	rb := &Runbook{Config: &config.Config{}, Clock: func() time.Time { return now }}
	f := &previewFake{}
	rb.previews.compute = f.compute
	r := restoreRun(1, "hash-1")
	first := rb.Previews(context.Background(), r)
	now = now.Add(3 * time.Minute)
	for range 5 {
		again := rb.Previews(context.Background(), r)
		if !again[0].Computed || !again[0].At.Equal(first[0].At) || again[0].Lines[0] != first[0].Lines[0] {
			t.Fatalf("a view recomputed or lost the preview: %+v then %+v", first[0], again[0])
		}
	}
	if n := f.calls.Load(); n != 2 {
		t.Fatalf("6 views of a 2-step run computed %d step previews, want 2", n)
	}
	if first[1].Title == "" || !first[1].Irreversible == r.Plan.StepIrreversible(1) {
		t.Fatalf("step heads not from the plan: %+v", first[1])
	}
}

// Two first views (or two recomputes) at once ask the clusters once.
func TestPreviewsConcurrentRequestsComputeOnce(t *testing.T) {
	t.Parallel()
	for _, step := range []int{-1, 1} {
		rb := &Runbook{Config: &config.Config{}}
		f := &previewFake{gate: make(chan struct{}), entered: make(chan struct{}, 4)}
		rb.previews.compute = f.compute
		r := restoreRun(2, "hash-2")
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() { rb.computePreviews(context.Background(), r, step) })
		}
		<-f.entered // the first caller computes
		deadline := time.Now().Add(10 * time.Second)
		for {
			rb.previews.mu.Lock()
			fl := rb.previews.flight[previewKey{2, "hash-2", step}]
			joined := fl != nil && fl.waiters == 1
			rb.previews.mu.Unlock()
			if joined {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the second caller never joined the computation")
			}
			time.Sleep(time.Millisecond)
		}
		close(f.gate)
		wg.Wait()
		want := int64(2)
		if step >= 0 {
			want = 1
		}
		if n := f.calls.Load(); n != want {
			t.Fatalf("step %d: two concurrent requests computed %d previews, want %d", step, n, want)
		}
	}
}

func TestPreviewCacheBounded(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	rb := &Runbook{Config: &config.Config{}, Clock: func() time.Time { return now }}
	f := &previewFake{}
	rb.previews.compute = f.compute
	for id := int64(1); id <= previewCacheRuns+10; id++ {
		now = now.Add(time.Second)
		rb.Previews(context.Background(), restoreRun(id, "h"))
	}
	if n := len(rb.previews.runs); n != previewCacheRuns {
		t.Fatalf("%d runs cached, bound %d", n, previewCacheRuns)
	}
	if rb.previews.runs[1] != nil || rb.previews.runs[previewCacheRuns+10] == nil {
		t.Fatal("evicted the newest run, not the least recently shown")
	}
	// Past its age a run's previews are computed again at its next view.
	calls := f.calls.Load()
	now = now.Add(previewCacheAge + time.Minute)
	if pv := rb.Previews(context.Background(), restoreRun(previewCacheRuns+10, "h")); !pv[0].At.Equal(now) || f.calls.Load() != calls+2 {
		t.Fatalf("an expired preview was shown: %+v", pv[0])
	}
}
