// Package report answers a manager's question, "did we meet our RPO
// objective?", from the stored per-minute RPO rollups: per flow, the share
// of the recorded time within its objective over the last 7, 30 and 90
// days (time without data counted apart, never in the share), the worst
// episodes (runs with a breach; a stretch with the RPO only unknown, like
// the console's start-up, is listed apart), and the data-loss incidents. Time after a completed failover,
// until the failback completed, is counted apart as failed over: DR was
// active, and the old primary's lag was no data at risk. It is conservative by
// construction: a minute counts as within only when every sample in it was
// known, exact and within the objective; a lower bound above the objective
// is over; anything else with data is unknown; and a minute the console did
// not record is "no data", never within.
package report

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// Windows are the periods a report covers, shortest first.
var Windows = []time.Duration{7 * 24 * time.Hour, 30 * 24 * time.Hour, 90 * 24 * time.Hour}

// PlotWindow is how far back the report's RPO plot reaches, minute by
// minute; the per-day plot covers the longest window.
const PlotWindow = 7 * 24 * time.Hour

// MaxEpisodes is how many of the worst episodes a report lists per flow.
const MaxEpisodes = 10

// MaxLosses is how many data-loss incidents a report reads per flow; past
// it the count is a lower bound (LossesAtLeast).
const MaxLosses = 1000

// Source is what a report reads (storage.Store).
type Source interface {
	FlowMinutes(ctx context.Context, flow string, sinceMs int64) ([]storage.FlowMinute, error)
	LossIncidents(ctx context.Context, flow string, unacked bool, limit int) ([]model.LossIncident, error)
	FailedOverSpans(ctx context.Context, flow string) ([]model.FailedOverSpan, error)
}

// Class is what one minute says about the objective.
type Class int

const (
	NoData     Class = iota // the console recorded nothing that minute
	Within                  // every sample known, exact and within
	Over                    // some sample (or lower bound) above the objective
	Unknown                 // data, but not enough to say within
	FailedOver              // the whole minute after a completed failover, before its failback
)

// Classify judges one minute against objective.
func Classify(m storage.FlowMinute, objective time.Duration) Class {
	obj := objective.Milliseconds()
	switch {
	case m.Samples == 0:
		return NoData
	case m.MaxRPOMs != nil && *m.MaxRPOMs > obj:
		return Over // a lower bound above it is over too
	case m.Unknown == 0 && m.AtLeast == 0 && m.MaxRPOMs != nil:
		return Within
	}
	return Unknown
}

// Compute builds a flow's report from its minutes (oldest first) as of now.
func Compute(flow string, objective time.Duration, minutes []storage.FlowMinute, now time.Time) model.FlowReport {
	return ComputeFailedOver(flow, objective, minutes, nil, now)
}

// ComputeFailedOver is Compute with the times the flow was failed over
// (oldest first) counted apart.
func ComputeFailedOver(flow string, objective time.Duration, minutes []storage.FlowMinute, spans []model.FailedOverSpan, now time.Time) model.FlowReport {
	to := now.UnixMilli() / 60000 * 60000 // the current minute is not complete
	r := model.FlowReport{Flow: flow, Objective: objective, At: now}
	fo := failedOver(spans)
	if len(minutes) > 0 {
		r.HistoryFromMs = minutes[0].MinuteMs
	}
	for _, length := range Windows {
		w := model.ReportWindow{Length: length, ToMs: to, FromMs: to - length.Milliseconds()}
		w.Minutes = length.Milliseconds() / 60000
		i, _ := slices.BinarySearchFunc(minutes, w.FromMs, func(m storage.FlowMinute, ms int64) int { return cmp.Compare(m.MinuteMs, ms) })
		w.FailedOver = fo.minutes(w.FromMs, to)
		for _, m := range minutes[i:] {
			if m.MinuteMs >= to {
				break
			}
			if fo.has(m.MinuteMs) {
				continue // counted in w.FailedOver
			}
			switch Classify(m, objective) {
			case Within:
				w.Within++
			case Over:
				w.Over++
			case Unknown:
				w.Unknown++
			}
		}
		w.NoData = w.Minutes - w.Within - w.Over - w.Unknown - w.FailedOver
		switch {
		case r.HistoryFromMs == 0:
			w.BeforeHistory = w.Minutes
		case r.HistoryFromMs > w.FromMs:
			w.BeforeHistory = min((r.HistoryFromMs-w.FromMs)/60000, w.Minutes)
		}
		r.Windows = append(r.Windows, w)
	}
	longest := r.Windows[len(r.Windows)-1]
	for _, sp := range spans {
		if sp.UntilMs == 0 || sp.UntilMs > longest.FromMs {
			r.FailedOver = append(r.FailedOver, sp)
		}
	}
	r.PlotFromMs = to - PlotWindow.Milliseconds()
	r.Minutes = plotMinutes(minutes, fo, r.PlotFromMs, to)
	r.Days = days(minutes, objective, fo, longest.FromMs, to)
	// A run with no minute over is no breach: the RPO was unknown, and may
	// have been within (the start-up minutes before the first complete
	// refresh hold only lower bounds below the objective).
	var eps, unknown []model.ReportEpisode
	for _, e := range episodes(minutes, objective, fo, longest.FromMs, to) {
		if e.Over {
			eps = append(eps, e)
		} else {
			unknown = append(unknown, e)
		}
	}
	r.EpisodeCount, r.UnknownCount = len(eps), len(unknown)
	r.Episodes, r.Unknown = worst(eps), worst(unknown)
	return r
}

// worst is the longest MaxEpisodes of eps, then by highest peak, newest.
func worst(eps []model.ReportEpisode) []model.ReportEpisode {
	slices.SortStableFunc(eps, func(a, b model.ReportEpisode) int {
		return cmp.Or(cmp.Compare(b.Minutes, a.Minutes), cmp.Compare(peak(b), peak(a)), cmp.Compare(b.StartMs, a.StartMs))
	})
	return eps[:min(len(eps), MaxEpisodes)]
}

func peak(e model.ReportEpisode) int64 {
	if e.PeakMs == nil {
		return -1
	}
	return *e.PeakMs
}

// episodes finds the runs of not-within minutes in [from, to), breaches
// (Over) and unknown stretches alike. A failed-over minute ends a run and
// is none.
func episodes(minutes []storage.FlowMinute, objective time.Duration, fo failedOver, from, to int64) []model.ReportEpisode {
	var out []model.ReportEpisode
	var cur *model.ReportEpisode
	for _, m := range minutes {
		if m.MinuteMs < from || m.MinuteMs >= to {
			continue
		}
		c := Classify(m, objective)
		if fo.has(m.MinuteMs) {
			c = NoData
		}
		if c == Within || c == NoData || (cur != nil && m.MinuteMs != cur.EndMs) {
			cur = nil // a within minute or a gap ends the run
		}
		if c == Within || c == NoData {
			continue
		}
		if cur == nil {
			out = append(out, model.ReportEpisode{StartMs: m.MinuteMs, EndMs: m.MinuteMs})
			cur = &out[len(out)-1]
		}
		cur.EndMs = m.MinuteMs + 60000
		cur.Minutes++
		cur.Over = cur.Over || c == Over
		if m.MaxRPOMs != nil && (cur.PeakMs == nil || *m.MaxRPOMs > *cur.PeakMs) {
			v := *m.MaxRPOMs
			cur.PeakMs = &v
		}
		cur.PeakAtLeast = cur.PeakAtLeast || m.Unknown > 0 || m.AtLeast > 0
	}
	for i := range out {
		out[i].Ongoing = out[i].EndMs == to
	}
	return out
}

// plotMinutes are the minutes in [from, to) the RPO plot draws: the
// recorded ones, and the failed-over ones whether recorded or not (DR was
// active then, which the plot says rather than "no data").
func plotMinutes(minutes []storage.FlowMinute, fo failedOver, from, to int64) []model.ReportMinute {
	var out []model.ReportMinute
	i, _ := slices.BinarySearchFunc(minutes, from, func(m storage.FlowMinute, ms int64) int { return cmp.Compare(m.MinuteMs, ms) })
	for ms := from; ms < to; ms += 60000 {
		for i < len(minutes) && minutes[i].MinuteMs < ms {
			i++
		}
		var m *storage.FlowMinute
		if i < len(minutes) && minutes[i].MinuteMs == ms && minutes[i].Samples > 0 {
			m = &minutes[i]
		}
		switch {
		case fo.has(ms):
			out = append(out, model.ReportMinute{MinuteMs: ms, FailedOver: true})
		case m != nil:
			out = append(out, model.ReportMinute{MinuteMs: ms, RPOMs: m.MaxRPOMs, AtLeast: m.Unknown > 0 || m.AtLeast > 0})
		}
	}
	return out
}

const dayMs = 24 * 3600 * 1000

// days accounts for each UTC day reaching into [from, to), its part in
// it only, as the windows do.
func days(minutes []storage.FlowMinute, objective time.Duration, fo failedOver, from, to int64) []model.ReportDay {
	var out []model.ReportDay
	for start := from / dayMs * dayMs; start < to; start += dayMs {
		d := model.ReportDay{StartMs: max(start, from), EndMs: min(start+dayMs, to)}
		d.FailedOver = fo.minutes(d.StartMs, d.EndMs)
		out = append(out, d)
	}
	for _, m := range minutes {
		if m.MinuteMs < from || m.MinuteMs >= to || fo.has(m.MinuteMs) {
			continue
		}
		d := &out[(m.MinuteMs/dayMs*dayMs-from/dayMs*dayMs)/dayMs]
		switch Classify(m, objective) {
		case Within:
			d.Within++
		case Over:
			d.Over++
		case Unknown:
			d.Unknown++
		}
	}
	for i := range out {
		d := &out[i]
		d.NoData = (d.EndMs-d.StartMs)/60000 - d.Recorded() - d.FailedOver
	}
	return out
}

// failedOver are the times a flow was failed over. A minute counts as
// failed over only when all of it lies inside one: the minute of the
// failover's completion held samples of a lag still at risk.
type failedOver []model.FailedOverSpan

// spanMinutes is the span's whole minutes [lo, hi) within [from, to).
func spanMinutes(sp model.FailedOverSpan, from, to int64) (lo, hi int64) {
	lo = max((sp.FromMs+59999)/60000*60000, from)
	hi = to
	if sp.UntilMs != 0 {
		hi = min(sp.UntilMs/60000*60000, to)
	}
	return lo, hi
}

// has says whether the minute starting at ms is failed over.
func (f failedOver) has(ms int64) bool {
	for _, sp := range f {
		if lo, hi := spanMinutes(sp, ms, ms+60000); lo == ms && hi == ms+60000 {
			return true
		}
	}
	return false
}

// minutes counts the failed-over minutes in [from, to); spans do not overlap.
func (f failedOver) minutes(from, to int64) int64 {
	var n int64
	for _, sp := range f {
		if lo, hi := spanMinutes(sp, from, to); hi > lo {
			n += (hi - lo) / 60000
		}
	}
	return n
}

// Objective is flow f's RPO objective: its own, else def (the warning lag).
func Objective(f *config.Flow, def time.Duration) time.Duration {
	if f.Objectives.RPO > 0 {
		return f.Objectives.RPO.D()
	}
	return def
}

// Build reads and computes the flows' reports as of now, in their order;
// a flow without an objective of its own is held to def.
func Build(ctx context.Context, src Source, flows []*config.Flow, def time.Duration, now time.Time) ([]model.FlowReport, error) {
	longest := Windows[len(Windows)-1]
	since := now.Add(-longest).UnixMilli()/60000*60000 - 60000
	var out []model.FlowReport
	for _, f := range flows {
		minutes, err := src.FlowMinutes(ctx, f.Name, since)
		if err != nil {
			return nil, fmt.Errorf("report: %s: %w", f.Name, err)
		}
		spans, err := src.FailedOverSpans(ctx, f.Name)
		if err != nil {
			return nil, fmt.Errorf("report: %s: %w", f.Name, err)
		}
		r := ComputeFailedOver(f.Name, Objective(f, def), minutes, spans, now)
		losses, err := src.LossIncidents(ctx, f.Name, false, MaxLosses)
		if err != nil {
			r.LossErr = err
		}
		r.LossesAtLeast = len(losses) == MaxLosses
		from := r.Windows[len(r.Windows)-1].FromMs
		for _, l := range losses {
			if l.DetectedMs >= from {
				r.Losses = append(r.Losses, l)
				r.LostOffsets += l.Lost
			}
		}
		out = append(out, r)
	}
	return out, nil
}
