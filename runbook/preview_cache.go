package runbook

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/drconsole/drconsole/storage"
)

// Step previews are computed on demand and cached per run here, not per
// page view: a preview may ask Kafka, Connect or Flink (10 s timeout per
// step), and the run page is shown again and again while a run is live.
// A run's first view computes them once; after that only an operator's
// "recompute" does. Nothing refreshes them in the background.

const (
	// previewCacheRuns bounds the cache: runs are few, and the least
	// recently shown is dropped first.
	previewCacheRuns = 64
	// previewCacheAge drops a run's previews this long after they were
	// computed: its next view computes them again.
	previewCacheAge = 6 * time.Hour
)

// CachedPreview is a step's preview as the run page shows it. Idx, Title
// and Irreversible always describe the run's current plan.
type CachedPreview struct {
	StepPreview
	// Computed is false when there is no preview of this step for the
	// current plan (Changed then says why, when the plan was replaced).
	Computed bool
	At       time.Time // when it was computed
	// Changed describes each input that differs now from the one the
	// preview was computed from: recompute before executing the step.
	Changed []string
}

// PreviewInput is one value a preview was computed from that changes
// what the step does, cheap to read again (no round trip to a cluster).
type PreviewInput struct{ Name, Value string }

type previewCache struct {
	mu     sync.Mutex
	runs   map[int64]*runPreviews
	flight map[previewKey]*previewFlight
	// compute dry-runs one step; nil is Runbook.previewStep (tests count
	// calls through a fake).
	compute func(ctx context.Context, r *Run, i int) StepPreview
}

// runPreviews is one run's cached previews, for the plan with hash.
type runPreviews struct {
	hash  string
	steps []stepPreviewEntry
	used  time.Time // last shown, for eviction
}

type stepPreviewEntry struct {
	ok     bool
	p      StepPreview
	at     time.Time
	inputs []PreviewInput
}

// previewKey names one computation: a run's plan, and one step or all (-1).
type previewKey struct {
	run  int64
	hash string
	step int
}

// previewFlight lets concurrent requests for the same computation wait
// for one (singleflight) instead of each asking the clusters.
type previewFlight struct {
	done    chan struct{}
	waiters int // tests wait for a second caller to join
}

// Previews returns the cached previews of r's steps, computing them
// first when the run has none cached (its first view). It never
// recomputes previews it has: Recompute does, on an operator's request.
func (rb *Runbook) Previews(ctx context.Context, r *Run) []CachedPreview {
	c := &rb.previews
	c.mu.Lock()
	e := c.lookupLocked(r.ID, rb.Now())
	c.mu.Unlock()
	if e == nil {
		rb.computePreviews(ctx, r, -1)
	}
	return rb.cachedPreviews(ctx, r)
}

// Recompute computes the previews of a run's step again (all steps when
// step is -1, or when the cached ones are of an earlier plan). It changes
// nothing outside the console, so it is not audited; operators and admins
// only, like every other button of the runbook.
func (rb *Runbook) Recompute(ctx context.Context, who Actor, id int64, step int) error {
	if !MayOperate(who) {
		return ErrRole
	}
	r, err := rb.Get(ctx, id)
	if err != nil {
		return err
	}
	if step < -1 || step >= len(r.Plan.Steps) {
		return fmt.Errorf("run %d has no step %d: %w", id, step+1, storage.ErrNotFound)
	}
	c := &rb.previews
	c.mu.Lock()
	if e := c.lookupLocked(id, rb.Now()); e == nil || e.hash != r.PlanHash {
		step = -1
	}
	c.mu.Unlock()
	rb.computePreviews(ctx, r, step)
	return nil
}

// lookupLocked returns the run's entry, dropping it when too old.
func (c *previewCache) lookupLocked(id int64, now time.Time) *runPreviews {
	e := c.runs[id]
	if e == nil {
		return nil
	}
	for _, s := range e.steps {
		if s.ok && now.Sub(s.at) > previewCacheAge {
			delete(c.runs, id)
			return nil
		}
	}
	e.used = now
	return e
}

// computePreviews computes step (or every step, -1) of r once however
// many callers ask at the same time, and caches the result.
func (rb *Runbook) computePreviews(ctx context.Context, r *Run, step int) {
	c := &rb.previews
	k := previewKey{r.ID, r.PlanHash, step}
	c.mu.Lock()
	if f := c.flight[k]; f != nil {
		f.waiters++
		c.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
		}
		return
	}
	if c.flight == nil {
		c.flight = map[previewKey]*previewFlight{}
	}
	f := &previewFlight{done: make(chan struct{})}
	c.flight[k] = f
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.flight, k)
		c.mu.Unlock()
		close(f.done)
	}()

	compute := c.compute
	if compute == nil {
		compute = rb.PreviewStep
	}
	// Others may be waiting for this result: a caller that gives up does
	// not cancel it. Each step's own 10 s timeout bounds it.
	cctx := context.WithoutCancel(ctx)
	idx := []int{step}
	if step < 0 {
		idx = make([]int, len(r.Plan.Steps))
		for i := range idx {
			idx[i] = i
		}
	}
	done := make(map[int]stepPreviewEntry, len(idx))
	for _, i := range idx {
		// Inputs first: a change during the computation shows as a change.
		in := rb.previewInputs(cctx, r, i)
		p := compute(cctx, r, i)
		done[i] = stepPreviewEntry{ok: true, p: p, at: rb.Now(), inputs: in}
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runs == nil {
		c.runs = map[int64]*runPreviews{}
	}
	e := c.runs[r.ID]
	if e == nil || e.hash != r.PlanHash || step < 0 {
		e = &runPreviews{hash: r.PlanHash, steps: make([]stepPreviewEntry, len(r.Plan.Steps))}
		c.runs[r.ID] = e
	}
	for i, s := range done {
		e.steps[i] = s
	}
	e.used = rb.Now()
	for len(c.runs) > previewCacheRuns {
		var oldest int64
		for id, o := range c.runs {
			if c.runs[oldest] == nil || o.used.Before(c.runs[oldest].used) {
				oldest = id
			}
		}
		delete(c.runs, oldest)
	}
}

// cachedPreviews is what the cache holds for r's current plan, with the
// inputs that changed since.
func (rb *Runbook) cachedPreviews(ctx context.Context, r *Run) []CachedPreview {
	c := &rb.previews
	c.mu.Lock()
	var hash string
	var steps []stepPreviewEntry
	if e := c.runs[r.ID]; e != nil {
		hash, steps = e.hash, append([]stepPreviewEntry(nil), e.steps...)
	}
	c.mu.Unlock()

	flow := rb.Config.Flow(r.Flow)
	out := make([]CachedPreview, len(r.Plan.Steps))
	for i := range r.Plan.Steps {
		out[i].StepPreview = StepPreview{Idx: i, Title: r.Plan.StepTitle(i, flow), Irreversible: r.Plan.StepIrreversible(i)}
		switch {
		case steps == nil:
		case hash != r.PlanHash:
			// Never show the preview of another plan as this one's.
			out[i].Changed = []string{fmt.Sprintf("the plan was replaced (hash %s → %s)", short(hash), short(r.PlanHash))}
		case steps[i].ok:
			cached := steps[i].p
			out[i].Lines, out[i].Rules, out[i].Err = cached.Lines, cached.Rules, cached.Err
			out[i].Computed, out[i].At = true, steps[i].at
			out[i].Changed = changedInputs(steps[i].inputs, rb.previewInputs(ctx, r, i))
		}
	}
	return out
}

func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}

func changedInputs(then, now []PreviewInput) []string {
	var out []string
	for i, in := range now {
		if i >= len(then) || then[i].Name != in.Name {
			out = append(out, in.Name+": now "+in.Value)
		} else if then[i].Value != in.Value {
			out = append(out, fmt.Sprintf("%s: %s → %s", in.Name, then[i].Value, in.Value))
		}
	}
	return out
}

// previewInputs are the values step i's preview reads that the console
// already holds (the monitor's state, the savepoint catalog), so the page
// can tell without asking a cluster that a preview is out of date. What
// only a cluster knows (the groups' committed offsets, the DR group's
// members, a connector's state, Flink's version) is not among them:
// executing the step checks all of it again.
func (rb *Runbook) previewInputs(ctx context.Context, r *Run, i int) []PreviewInput {
	return r.Plan.kind().Inputs(ctx, rb, r, i)
}
