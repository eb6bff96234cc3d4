package views

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/drconsole/drconsole/model"
)

// The RPO report's plots: the RPO minute by minute over the last week and
// the share of each day's recorded time within the objective. Both keep
// to the report's rules: a lower bound is drawn as the range it allows
// (from the bound up), never as a point that could be read as the figure;
// time without data, with the RPO unknown or failed over is a labelled
// gap, never a line at 0 or a bar.

// gapKind is what a stretch of the RPO plot without an exact figure was.
type gapKind int

const (
	gapExact gapKind = iota
	gapAtLeast
	gapUnknown
	gapNoData
	gapFailedOver
)

var gapNames = map[gapKind]string{gapAtLeast: "≥ (lower bound)", gapUnknown: "RPO unknown", gapNoData: "no data", gapFailedOver: "failed over"}
var gapMarks = map[gapKind]string{gapAtLeast: "≥", gapUnknown: "unknown", gapNoData: "no data", gapFailedOver: "failed over"}
var gapClasses = map[gapKind]string{gapAtLeast: "gap-atleast", gapUnknown: "gap-unknown", gapNoData: "gap-nodata", gapFailedOver: "gap-failedover"}

func minuteKind(m model.ReportMinute) gapKind {
	switch {
	case m.FailedOver:
		return gapFailedOver
	case m.RPOMs == nil:
		return gapUnknown
	case m.AtLeast:
		return gapAtLeast
	}
	return gapExact
}

// minLabelWidth is the narrowest gap (px) named inside the plot; a
// narrower one is named by its tooltip and the plot's summary.
const minLabelWidth = 44

// RPOPlot is f's RPO per minute from f.PlotFromMs to the report's end on
// a fixed scale from 0 to max(objective, the highest figure), the
// objective drawn, and its summary for the aria-label.
func RPOPlot(f model.FlowReport) (Chart, string) {
	from, to := f.PlotFromMs, f.Windows[0].ToMs
	obj := float64(f.Objective.Milliseconds())
	peak, peakAtLeast := 0.0, false
	var over int
	var pts []Point
	for i, m := range f.Minutes {
		if i > 0 && m.MinuteMs > f.Minutes[i-1].MinuteMs+60000 {
			pts = append(pts, Point{AtMs: f.Minutes[i-1].MinuteMs + 60000}) // a gap
		}
		k := minuteKind(m)
		if m.RPOMs != nil && k != gapFailedOver {
			if v := float64(*m.RPOMs); v > peak || v == peak && k == gapAtLeast {
				peak, peakAtLeast = v, k == gapAtLeast
			}
			if float64(*m.RPOMs) > obj {
				over++
			}
		}
		if k != gapExact {
			pts = append(pts, Point{AtMs: m.MinuteMs})
			continue
		}
		// The minute's figure across the minute, so a lone one shows.
		v := float64(*m.RPOMs)
		pts = append(pts, Point{AtMs: m.MinuteMs, Y: v, Known: true}, Point{AtMs: m.MinuteMs + 59999, Y: v, Known: true})
	}
	axis := LagAxis(Threshold{Name: "objective", Value: obj}).Floor(max(obj, peak))
	c := NewTimeChart(900, 240, axis, from, to, "RPO (largest in each minute)", "time (UTC)",
		Series{Name: "RPO", Class: "rpo", Points: pts})
	top, _, _ := axis.scale(peak)
	xpos, ypos := c.xpos(from, to), c.ypos(top)

	// The gaps: runs of minutes of one kind other than gapExact.
	gaps := map[gapKind]int64{}
	runs := map[gapKind]int{}
	i := 0
	emit := func(k gapKind, a, b int64, floors []model.ReportMinute) {
		if b <= a {
			return
		}
		gaps[k] += (b - a) / 60000
		runs[k]++
		x0, x1 := xpos(a), max(xpos(b), xpos(a)+1) // at least a pixel: a minute in a week is 0.09
		title := fmt.Sprintf("%s, %s to %s UTC (%s)", gapNames[k], ReportTime(a), ReportTime(b), Minutes((b-a)/60000))
		var d string
		if k == gapAtLeast {
			// From each minute's bound up to the top: the RPO was somewhere there.
			var sb strings.Builder
			fmt.Fprintf(&sb, "M%.1f %.1f", x0, c.Top)
			for _, m := range floors {
				y := ypos(float64(*m.RPOMs))
				fmt.Fprintf(&sb, " L%.1f %.1f L%.1f %.1f", xpos(m.MinuteMs), y, xpos(m.MinuteMs+60000), y)
			}
			fmt.Fprintf(&sb, " L%.1f %.1f Z", x1, c.Top)
			d = sb.String()
		} else {
			d = fmt.Sprintf("M%.1f %.1f H%.1f V%.1f H%.1f Z", x0, c.Top, x1, c.Bottom, x0)
		}
		c.Shapes = append(c.Shapes, Shape{D: d, Class: gapClasses[k], Title: title})
		if x1-x0 >= minLabelWidth {
			c.Marks = append(c.Marks, Mark{X: (x0 + x1) / 2, Y: c.Top + 12, Label: gapMarks[k], Class: gapClasses[k]})
		}
	}
	next := from
	for i < len(f.Minutes) {
		m := f.Minutes[i]
		emit(gapNoData, next, m.MinuteMs, nil)
		k := minuteKind(m)
		j := i + 1
		for j < len(f.Minutes) && f.Minutes[j].MinuteMs == f.Minutes[j-1].MinuteMs+60000 && minuteKind(f.Minutes[j]) == k {
			j++
		}
		end := f.Minutes[j-1].MinuteMs + 60000
		if k != gapExact {
			emit(k, m.MinuteMs, end, f.Minutes[i:j])
		}
		i, next = j, end
	}
	emit(gapNoData, next, to, nil)

	sum := fmt.Sprintf("RPO per minute, last %s, against the %s objective: ", Duration(time.Duration(to-from)*time.Millisecond), Duration(f.Objective))
	switch {
	case len(f.Minutes) == 0:
		sum += "nothing recorded"
	case peakAtLeast:
		sum += "highest at least " + DurationTick(peak)
	default:
		sum += "highest " + DurationTick(peak)
	}
	sum += fmt.Sprintf("; %s with a figure over the objective", Minutes(int64(over)))
	for _, k := range []gapKind{gapNoData, gapUnknown, gapAtLeast, gapFailedOver} {
		if runs[k] > 0 {
			sum += fmt.Sprintf("; %s: %s in %d stretch(es)", gapNames[k], Minutes(gaps[k]), runs[k])
		}
	}
	return c, sum + "."
}

// ShareAxis is an axis of shares from 0 to 100 %.
var ShareAxis = Axis{step: func(float64) float64 { return 0.2 }, flatTop: 1,
	label: func(v float64) string { return fmt.Sprintf("%d %%", int(math.Round(v*100))) }}

// DayPlot is f's days as bars of their recorded time, 0 to 100 %: within
// the objective from the bottom, then unknown, then over at the top. A day
// without recorded time is a labelled gap, never a bar; each bar's tooltip
// gives the day's minutes, no data included. The summary is for the
// aria-label.
func DayPlot(f model.FlowReport) (Chart, string) {
	long := f.Windows[len(f.Windows)-1]
	c := NewTimeChart(900, 200, ShareAxis.Floor(1), long.FromMs, long.ToMs, "share of each UTC day's recorded time", "day (UTC)")
	xpos, ypos := c.xpos(long.FromMs, long.ToMs), c.ypos(1)
	withData, lowest, lowestAt := 0, 2.0, int64(0)
	var gapFrom int64 = -1
	var gapDays int
	flush := func(end int64) {
		if gapFrom < 0 {
			return
		}
		x0, x1 := xpos(gapFrom), xpos(end)
		c.Shapes = append(c.Shapes, Shape{D: fmt.Sprintf("M%.1f %.1f H%.1f V%.1f H%.1f Z", x0, c.Top, x1, c.Bottom, x0),
			Class: "gap-nodata", Title: fmt.Sprintf("nothing recorded, %s to %s UTC (no data or failed over)", ReportTime(gapFrom), ReportTime(end))})
		if x1-x0 >= minLabelWidth {
			c.Marks = append(c.Marks, Mark{X: (x0 + x1) / 2, Y: c.Top + 12, Label: "no data", Class: "gap-nodata"})
		}
		gapFrom = -1
	}
	for _, d := range f.Days {
		if d.Recorded() == 0 {
			if gapFrom < 0 {
				gapFrom = d.StartMs
			}
			gapDays++
			continue
		}
		flush(d.StartMs)
		withData++
		rec := float64(d.Recorded())
		if share := float64(d.Within) / rec; share < lowest {
			lowest, lowestAt = share, d.StartMs
		}
		title := fmt.Sprintf("%s UTC: %s within (%s of %s recorded), over %s, unknown %s, no data %s, failed over %s",
			time.UnixMilli(d.StartMs).UTC().Format("2006-01-02"), ShareDown(float64(d.Within)/rec), Minutes(d.Within), Minutes(d.Recorded()),
			Minutes(d.Over), Minutes(d.Unknown), Minutes(d.NoData), Minutes(d.FailedOver))
		x0, x1 := xpos(d.StartMs)+0.5, max(xpos(d.EndMs)-0.5, xpos(d.StartMs)+1)
		lo := 0.0
		for _, seg := range []struct {
			n     int64
			class string
		}{{d.Within, "bar-within"}, {d.Unknown, "bar-unknown"}, {d.Over, "bar-over"}} {
			if seg.n == 0 {
				continue
			}
			hi := lo + float64(seg.n)/rec
			c.Shapes = append(c.Shapes, Shape{D: fmt.Sprintf("M%.1f %.2f H%.1f V%.2f H%.1f Z", x0, ypos(hi), x1, ypos(lo), x0), Class: seg.class})
			lo = hi
		}
		// One tooltip for the whole bar, over its segments.
		c.Shapes = append(c.Shapes, Shape{D: fmt.Sprintf("M%.1f %.1f H%.1f V%.1f H%.1f Z", x0, c.Top, x1, c.Bottom, x0), Class: "bar-hit", Title: title})
	}
	flush(long.ToMs)
	sum := fmt.Sprintf("Share of each UTC day's recorded time within the %s objective, last %d days: ", Duration(f.Objective), long.Days())
	if withData == 0 {
		sum += "nothing recorded"
	} else {
		sum += fmt.Sprintf("%d day(s) with data, the lowest %s on %s", withData, ShareDown(lowest), time.UnixMilli(lowestAt).UTC().Format("2006-01-02"))
	}
	if gapDays > 0 {
		sum += fmt.Sprintf("; %d day(s) with nothing recorded", gapDays)
	}
	return c, sum + "."
}
