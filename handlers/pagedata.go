package handlers

import (
	"context"
	"math"
	"strconv"
	"sync/atomic"
	"time"
	"weak"

	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/pages"
	"github.com/drconsole/drconsole/report"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/views"
)

// pageData is what the pages show that changes once per refresh: the RPO
// history (read once per new sample) and what is drawn from it, keyed by
// the exact samples it was drawn from.
type pageData struct {
	history pages.History
	charts  pages.Memo[seriesKey, views.Chart]
	sparks  pages.Memo[seriesKey, views.FlowCard]
	topics  pages.Memo[topicsKey, []int32]

	// The rendered pages (pagecache.go); gens numbers the snapshots their
	// keys name; changes counts state-changing requests.
	rendered pages.Rendered
	gens     pages.Gens[flowstate.FlowSnapshot]
	changes  atomic.Uint64
}

// seriesKey names a run of held samples: their first element's address and
// count (held samples are never changed in place, so equal keys are equal
// samples), the thresholds the chart draws and the objective the
// sparkline draws.
type seriesKey struct {
	first          *storage.FlowSample
	n              int
	warn, bad, obj time.Duration
}

func (h *Handlers) pageData() *pageData {
	h.pagesOnce.Do(func() {
		// The overview's window starts up to a SparkStep before now-SparkWindow.
		h.pages = &pageData{history: pages.History{Store: h.Store, Window: SparkWindow + views.SparkStep, Now: h.Now},
			charts: pages.Memo[seriesKey, views.Chart]{Max: 64}, sparks: pages.Memo[seriesKey, views.FlowCard]{Max: 64},
			topics:   pages.Memo[topicsKey, []int32]{Max: 64},
			rendered: pages.Rendered{MaxEntries: renderedMaxEntries, MaxBytes: renderedMaxBytes}}
	})
	return h.pages
}

// rpoSamples is a flow's RPO history from sinceMs to untilMs, as stored once
// s's refresh saved its sample; nil (logged) when it cannot be read.
func (h *Handlers) rpoSamples(ctx context.Context, s *flowstate.FlowSnapshot, sinceMs, untilMs int64) (seriesKey, []storage.FlowSample) {
	xs, err := h.pageData().history.Since(ctx, s.Flow.Name, sinceMs, s.At.UnixMilli())
	if err != nil {
		h.Log.Error("loading RPO history", "flow", s.Flow.Name, "err", err)
		return seriesKey{}, nil
	}
	for len(xs) > 0 && xs[len(xs)-1].AtMs > untilMs {
		xs = xs[:len(xs)-1]
	}
	th := h.Monitor.Thresholds()
	k := seriesKey{n: len(xs), warn: th.Warning.Lag.D(), bad: th.Critical.Lag.D(), obj: report.Objective(s.Flow, th.Warning.Lag.D())}
	if len(xs) > 0 {
		k.first = &xs[0]
	}
	return k, xs
}

// rpoPoints turns RPO samples into chart points (unknown: a gap; a lower
// bound marked AtLeast).
func rpoPoints(samples []storage.FlowSample) []views.Point {
	pts := make([]views.Point, len(samples))
	for i, s := range samples {
		pts[i] = views.Point{AtMs: s.AtMs, Known: s.RPOMs != nil, AtLeast: s.RPOAtLeast}
		if s.RPOMs != nil {
			pts[i].Y = float64(*s.RPOMs)
		}
	}
	return pts
}

// rpoChart is the flow page's RPO chart over the SparkWindow before now,
// drawn once per distinct run of samples.
func (h *Handlers) rpoChart(ctx context.Context, s *flowstate.FlowSnapshot, now time.Time) views.Chart {
	k, xs := h.rpoSamples(ctx, s, now.Add(-SparkWindow).UnixMilli(), math.MaxInt64)
	return h.pageData().charts.Get(s.Flow.Name, k, func() views.Chart {
		return views.NewChart(900, 220, h.lagAxis(), views.Series{Name: "RPO", Class: "rpo", Points: rpoPoints(xs)})
	})
}

// overviewCard is one flow's overview card as of now; its sparkline ends
// at views.SparkEnd(now) and holds nothing newer, so that it changes once
// per views.SparkStep while the figures change every tick.
func (h *Handlers) overviewCard(ctx context.Context, s *flowstate.FlowSnapshot, now time.Time) views.FlowCard {
	end := views.SparkEnd(now)
	k, xs := h.rpoSamples(ctx, s, end.Add(-SparkWindow).UnixMilli(), end.UnixMilli())
	// The line depends on the points only; the card's figures and end are
	// this request's.
	c := h.pageData().sparks.Get(s.Flow.Name, k, func() views.FlowCard { return views.NewFlowCard(nil, rpoPoints(xs), time.Time{}, k.obj) })
	c.Snap, c.SparkEnd = snapshotView(s), end
	return c
}

// topicsKey is what a flow's sorted, filtered topic list is derived from:
// the snapshot (one per refresh) and the listing's filter and order. The
// value is indexes into its TopicLags, so a held entry costs 4 B a topic.
type topicsKey struct {
	snap    weak.Pointer[flowstate.FlowSnapshot] // holds no old snapshot alive
	q, sort string
	desc    bool
}

// sortedTopics is sortTopics, once per snapshot, filter and order; the
// result is shared (paginate only reslices it).
func (h *Handlers) sortedTopics(s *flowstate.FlowSnapshot, l views.Listing) []int32 {
	k := topicsKey{snap: weak.Make(s), q: l.Query, sort: l.Sort, desc: l.Desc}
	slot := s.Flow.Name + "\x00" + k.q + "\x00" + k.sort + "\x00" + strconv.FormatBool(k.desc)
	return h.pageData().topics.Get(slot, k, func() []int32 { return sortTopics(s, l) })
}
