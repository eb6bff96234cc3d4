package monitor

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/model"
)

// The sample writer's bounds.
const (
	// SampleWriteTimeout is the deadline of one attempt at writing a
	// refresh's samples (independent of the Kafka reads' deadline).
	SampleWriteTimeout = 30 * time.Second
	// SampleQueueBound is how many refreshes of one flow may wait for the
	// writer before it says it is behind (log and
	// drconsole_sample_queue_over_bound) and drops the per-partition
	// figures of that flow's refreshes a newer one supersedes: at most
	// this many whole snapshots per flow wait (16 MB each at 100k
	// partitions). Flow samples, the RPO history, are always kept.
	SampleQueueBound = 3
	// SampleDrainTimeout bounds the writes left when the monitor stops
	// (inside the console's 15 s shutdown).
	SampleDrainTimeout = 5 * time.Second
	// Backoff between attempts at a failed write.
	sampleRetryMin = 100 * time.Millisecond
	sampleRetryMax = 5 * time.Second
)

// sampleWriter writes each refresh's samples to SQLite (save) off the
// refresh goroutine, in refresh order, so the refresh never waits on the
// single SQLite writer (the ingester and the runbook share it). A failed
// write is retried with backoff, never dropped: the jobs behind it wait,
// which keeps each flow's samples in time order (pages.History tops up
// from the newest held sample on).
//
// Past the bound (SampleQueueBound refreshes of one flow), the flow's
// queued refreshes but the newest keep their flow samples and let go of
// their per-partition figures (16 MB per snapshot at 100k partitions):
// the minute's per-partition and per-topic rows, made from them, then come
// from a later refresh of the flow. Each dropped set is counted.
type sampleWriter struct {
	m    *Monitor
	wake chan struct{} // capacity 1: work was queued

	mu      sync.Mutex
	queue   []sampleJob
	pending map[*flowMonitor]int // queued jobs per flow
	over    bool                 // past the bound, said so; cleared once the queue drained

	// drain holds the jobs' order and fm.lastPartitionSave: one drainer
	// at a time (the writer goroutine, or Flush).
	drain sync.Mutex

	retries, dropped, lost atomic.Int64
}

// sampleJob is one refresh of one flow, to be saved.
type sampleJob struct {
	fm  *flowMonitor
	s   *flowstate.FlowSnapshot
	now time.Time
}

func newSampleWriter(m *Monitor) *sampleWriter {
	return &sampleWriter{m: m, wake: make(chan struct{}, 1), pending: map[*flowMonitor]int{}}
}

// enqueue hands a refresh to the writer; it never blocks.
func (w *sampleWriter) enqueue(j sampleJob) {
	w.mu.Lock()
	w.queue = append(w.queue, j)
	w.pending[j.fm]++
	if n := w.pending[j.fm]; n > SampleQueueBound {
		w.thin(j.fm)
		if !w.over {
			w.over = true
			w.m.log.Error("sample writer behind: refreshes waiting for SQLite past the bound; their flow samples are kept, the per-partition figures of superseded refreshes are dropped",
				"flow", j.fm.flow.Name, "queued", n, "queued_all_flows", len(w.queue), "bound", SampleQueueBound)
		}
	}
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// thin lets go of the per-partition figures of fm's queued refreshes but
// the newest. w.mu held.
func (w *sampleWriter) thin(fm *flowMonitor) {
	newest := true
	for i := len(w.queue) - 1; i >= 0; i-- {
		j := &w.queue[i]
		if j.fm != fm {
			continue
		}
		if !newest && j.s.Partitions != nil {
			t := *j.s // the published snapshot stays whole for its readers
			t.Partitions, t.UnknownAge = nil, nil
			j.s = &t
			w.dropped.Add(1)
		}
		newest = false
	}
}

// head returns the oldest queued job.
func (w *sampleWriter) head() (sampleJob, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.queue) == 0 {
		return sampleJob{}, false
	}
	return w.queue[0], true
}

// pop removes the oldest queued job, written.
func (w *sampleWriter) pop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pending[w.queue[0].fm]--; w.pending[w.queue[0].fm] == 0 {
		delete(w.pending, w.queue[0].fm)
	}
	w.queue[0] = sampleJob{}
	w.queue = w.queue[1:]
	if len(w.queue) == 0 {
		w.queue = nil // let the backing array go
		if w.over {
			w.over = false
			w.m.log.Info("sample writer caught up")
		}
	}
}

// writeAll writes every queued job, oldest first, retrying a failed write
// with backoff until it works or ctx ends (the error then).
func (w *sampleWriter) writeAll(ctx context.Context) error {
	w.drain.Lock()
	defer w.drain.Unlock()
	backoff := sampleRetryMin
	for {
		j, ok := w.head()
		if !ok {
			return nil
		}
		wctx, cancel := context.WithTimeout(ctx, SampleWriteTimeout)
		err := w.m.save(wctx, j.fm, j.s, j.now)
		cancel()
		if err == nil {
			w.pop()
			backoff = sampleRetryMin
			continue
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		w.retries.Add(1)
		w.m.log.Warn("saving lag samples failed; retrying", "flow", j.fm.flow.Name, "at", j.now, "retry_in", backoff, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, sampleRetryMax)
	}
}

// run writes what is queued until ctx ends, then what it can within
// SampleDrainTimeout.
func (w *sampleWriter) run(ctx context.Context) {
	for {
		select {
		case <-w.wake:
			_ = w.writeAll(ctx) // ends only with ctx
		case <-ctx.Done():
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), SampleDrainTimeout)
			err := w.writeAll(dctx)
			cancel()
			if err != nil {
				w.mu.Lock()
				n := len(w.queue)
				w.mu.Unlock()
				w.lost.Add(int64(n))
				w.m.log.Error("stopping: lag samples not written", "refreshes", n, "within", SampleDrainTimeout, "err", err)
			}
			return
		}
	}
}

func (w *sampleWriter) stats() model.SampleWriterStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return model.SampleWriterStats{Queued: len(w.queue), OverBound: w.over, Retries: w.retries.Load(),
		DroppedPartitionSets: w.dropped.Load(), Lost: w.lost.Load()}
}

// Flush writes every sample queued so far (waiting for the writer if it
// is at it); an error when ctx ends first. Tests and callers of Refresh
// that read the samples back use it.
func (m *Monitor) Flush(ctx context.Context) error {
	return m.writer.writeAll(ctx)
}

// SampleWriterStats reports the sample writer's queue and what it had to
// retry, drop or leave unwritten.
func (m *Monitor) SampleWriterStats() model.SampleWriterStats {
	return m.writer.stats()
}
