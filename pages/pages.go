// Package pages keeps the page data that changes once per monitor refresh,
// not once per request: each flow's recent RPO history, read from storage
// once per new sample instead of on every page view and poll; a bounded
// memo of what handlers derive from it (charts, sorted lists), keyed by
// exactly what they were derived from; and the rendered pages themselves
// (Rendered), keyed by everything their bytes depend on. It holds copies
// of stored figures only: a value it hands out is the one the old
// per-request read would have produced from the same samples.
package pages

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/drconsole/drconsole/storage"
)

// Samples reads a flow's stored samples at or after sinceMs, oldest first
// (storage.Store).
type Samples interface {
	FlowSamples(ctx context.Context, flow string, sinceMs int64) ([]storage.FlowSample, error)
}

// FullReadEvery is how often a flow's history is read whole again rather
// than from its newest sample on: samples pruned by retention (shorter
// than the window) or written out of order (a clock stepped back) are
// then reflected within this long.
const FullReadEvery = time.Minute

// History is every flow's flow samples over the last Window, kept in
// memory and topped up from storage when a newer refresh than the newest
// held sample has been published.
type History struct {
	Store  Samples
	Window time.Duration
	// Now is the clock; replaced in tests.
	Now func() time.Time

	mu    sync.Mutex
	flows map[string]*series
}

// series is one flow's held samples. Its slice is only appended to or
// resliced from the front, so a slice handed out earlier never changes
// under its reader.
type series struct {
	mu      sync.Mutex
	samples []storage.FlowSample // oldest first
	fullAt  time.Time            // last whole read; zero: never
}

func (h *History) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

func (h *History) series(flow string) *series {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.flows == nil {
		h.flows = map[string]*series{}
	}
	s := h.flows[flow]
	if s == nil {
		s = &series{}
		h.flows[flow] = s
	}
	return s
}

// Since returns flow's samples at or after sinceMs (at most Window old),
// oldest first, as storage holds them once the refresh of newestMs (the
// snapshot's time) has saved its sample. The result is shared: read it,
// never change it. Concurrent callers wait for one read.
func (h *History) Since(ctx context.Context, flow string, sinceMs, newestMs int64) ([]storage.FlowSample, error) {
	now := h.now()
	if sinceMs < now.Add(-h.Window).UnixMilli() {
		// Older than what is held: not cached, read as asked.
		return h.Store.FlowSamples(ctx, flow, sinceMs)
	}
	s := h.series(flow)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.fullAt.IsZero() || now.Sub(s.fullAt) >= FullReadEvery || now.Before(s.fullAt):
		xs, err := h.Store.FlowSamples(ctx, flow, now.Add(-h.Window).UnixMilli())
		if err != nil {
			return nil, err
		}
		s.samples, s.fullAt = xs, now
	case len(s.samples) == 0 || s.samples[len(s.samples)-1].AtMs < newestMs:
		// The refresh publishes its snapshot before the monitor's sample
		// writer saves its sample, usually within milliseconds, but
		// minutes later while SQLite is slow or refusing writes (the
		// writer retries, in refresh order): until the sample lands, each
		// call asks again (an indexed read of nothing on the read pool), so
		// no caller misses a sample the old read would show. The writer
		// writes each flow's samples in time order, so reading on from the
		// newest held one misses none.
		from := now.Add(-h.Window).UnixMilli()
		if n := len(s.samples); n > 0 {
			from = s.samples[n-1].AtMs + 1
		}
		xs, err := h.Store.FlowSamples(ctx, flow, from)
		if err != nil {
			return nil, err
		}
		s.samples = append(s.samples, xs...)
	}
	// Drop what left the window; bounded: one window per flow.
	cut, _ := slices.BinarySearchFunc(s.samples, now.Add(-h.Window).UnixMilli(), atMs)
	s.samples = s.samples[cut:]
	i, _ := slices.BinarySearchFunc(s.samples, sinceMs, atMs)
	return s.samples[i:len(s.samples):len(s.samples)], nil
}

func atMs(x storage.FlowSample, ms int64) int {
	switch {
	case x.AtMs < ms:
		return -1
	case x.AtMs > ms:
		return 1
	}
	return 0
}
