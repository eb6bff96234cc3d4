package views

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Point is one sample of a series; Known false is a gap in the line
// (an unknown value is not drawn as 0). AtLeast: Y is only a lower bound
// (a sparkline marks it; a chart draws it as a point).
type Point struct {
	AtMs    int64
	Y       float64
	Known   bool
	AtLeast bool
}

// Series is one line of a chart.
type Series struct {
	Name   string
	Class  string // CSS class giving its colour
	Points []Point
}

// Chart is a server-rendered SVG line chart, laid out in Go so the
// template only draws.
type Chart struct {
	W, H   int
	Lines  []ChartLine
	YTicks []Tick
	XTicks []Tick
	// Rules are the threshold lines inside the plotted range; Above names
	// the thresholds above it ("critical 2 min"), said in the legend so a
	// calm-looking chart does not hide how far the alarm is.
	Rules []Rule
	Above []string
	// Span says how far back the drawn points reach ("last 42 min").
	Span  string
	Empty bool
	// Shapes are filled areas drawn behind the lines (gaps, bars), Marks
	// text inside the plot (a gap's name); YLabel and XLabel name the axes.
	Shapes         []Shape
	Marks          []Mark
	YLabel, XLabel string
	// Plot area.
	Left, Top, Right, Bottom float64
}

// ChartLine is a drawn series.
type ChartLine struct {
	Name, Class, D string
}

// Shape is a filled area: D its SVG path, Title what it stands for (its
// tooltip, read out by screen readers).
type Shape struct {
	D, Class, Title string
}

// Mark is a text label at (X, Y), middle-anchored.
type Mark struct {
	X, Y         float64
	Label, Class string
}

// Tick is an axis label at a position.
type Tick struct {
	Pos   float64
	Label string
}

// Rule is a drawn threshold line.
type Rule struct {
	Pos          float64
	Label, Class string
}

// Threshold is a y value worth a line: Name is also its CSS class
// ("warning", "critical").
type Threshold struct {
	Name  string
	Value float64
}

// Axis scales and labels a chart's y axis. Ticks are multiples of a
// "nice" step in the axis' unit, so their labels are exact and distinct.
type Axis struct {
	step    func(rough float64) float64 // the smallest nice step >= rough
	label   func(v float64) string
	flatTop float64 // the top when every known value is zero (or none is known)
	// Thresholds are drawn when within or near the data's range.
	Thresholds []Threshold
	// floor is the least top: a fixed scale reaching at least it.
	floor float64
}

// Floor is a with a top of at least v: the scale is 0 to max(v, the
// data's peak), so a tiny wiggle is drawn tiny and v always shows.
func (a Axis) Floor(v float64) Axis {
	a.floor = v
	return a
}

// maxIntervals bounds the number of y tick intervals (six labels).
const maxIntervals = 5

// LagAxis is an axis of durations in milliseconds (lag, RPO): steps of
// ms, s, min, h or days; a flat-zero series is shown 0 to 1 s, not 0 to
// 1 ms. Thresholds with a zero value are left out (not configured).
func LagAxis(th ...Threshold) Axis {
	a := Axis{step: durationStep, label: DurationTick, flatTop: 1000}
	for _, t := range th {
		if t.Value > 0 {
			a.Thresholds = append(a.Thresholds, t)
		}
	}
	slices.SortFunc(a.Thresholds, func(x, y Threshold) int { return cmp.Compare(x.Value, y.Value) })
	return a
}

// CountAxis is an axis of whole counts (offsets, records).
var CountAxis = Axis{step: countStep, label: func(v float64) string { return Count(int64(math.Round(v))) }, flatTop: 1}

// scale returns the axis top and tick step covering max. A threshold up
// to twice the top so far widens the range to show it; one further away
// is only named in the legend (Above), so it does not flatten the data.
func (a Axis) scale(max float64) (top, step float64, above []Threshold) {
	if !(max > 0) { // also NaN
		max = a.flatTop
	}
	if a.floor > max {
		max = a.floor
	}
	fit := func(v float64) (float64, float64) {
		s := a.step(v / maxIntervals)
		return math.Ceil(v/s-1e-9) * s, s
	}
	top, step = fit(max)
	for i, t := range a.Thresholds {
		if t.Value > 2*top {
			return top, step, a.Thresholds[i:]
		}
		if t.Value > top {
			top, step = fit(t.Value)
		}
	}
	return top, step, nil
}

// durationSteps are the nice steps of a duration axis, in ms.
var durationSteps = []float64{1, 2, 5, 10, 20, 50, 100, 200, 500,
	1e3, 2e3, 5e3, 10e3, 15e3, 30e3,
	60e3, 2 * 60e3, 5 * 60e3, 10 * 60e3, 15 * 60e3, 30 * 60e3,
	3600e3, 2 * 3600e3, 3 * 3600e3, 6 * 3600e3, 12 * 3600e3,
	86400e3, 2 * 86400e3, 7 * 86400e3}

func durationStep(rough float64) float64 {
	if i, _ := slices.BinarySearch(durationSteps, rough); i < len(durationSteps) {
		return durationSteps[i]
	}
	const day = 86400e3
	return day * countStep(rough/day)
}

// countStep is the smallest of 1, 2 or 5 times a power of ten that is at
// least rough (and at least 1: counts are whole).
func countStep(rough float64) float64 {
	if rough <= 1 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(rough)))
	for _, m := range []float64{1, 2, 5, 10} {
		if rough <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// DurationTick labels a duration in ms exactly and compactly: "0",
// "200 ms", "1.5 s", "30 s", "1 min 30 s", "2 h", "1 d 12 h". Unlike
// Duration it never rounds, so two ticks never share a label.
func DurationTick(ms float64) string {
	v := int64(math.Round(ms))
	switch {
	case v == 0:
		return "0"
	case v < 0:
		return "-" + DurationTick(float64(-v))
	case v < 1000:
		return strconv.FormatInt(v, 10) + " ms"
	case v < 60e3 && v%1000 != 0:
		return strconv.FormatFloat(float64(v)/1000, 'f', -1, 64) + " s"
	}
	var parts []string
	for _, u := range []struct {
		ms   int64
		name string
	}{{86400e3, "d"}, {3600e3, "h"}, {60e3, "min"}, {1e3, "s"}, {1, "ms"}} {
		if n := v / u.ms; n > 0 {
			parts = append(parts, strconv.FormatInt(n, 10)+" "+u.name)
			v -= n * u.ms
		}
	}
	return strings.Join(parts, " ")
}

// NewChart scales series into a w x h chart on the y axis y. Unknown
// points are gaps and do not count towards the range.
func NewChart(w, h int, y Axis, series ...Series) Chart {
	var xmin, xmax int64 = math.MaxInt64, math.MinInt64
	for _, s := range series {
		for _, p := range s.Points {
			xmin, xmax = min(xmin, p.AtMs), max(xmax, p.AtMs)
		}
	}
	c := Chart{W: w, H: h, Left: 64, Top: 8, Right: float64(w) - 8, Bottom: float64(h) - 22}
	if xmin > xmax {
		c.Empty, c.Span = true, "no history yet"
		return c
	}
	return c.layout(y, xmin, xmax, series)
}

// NewTimeChart is a w x h chart of [from, to] whatever the data reaches,
// with its axes named: yLabel above the plot, xLabel below its ticks.
func NewTimeChart(w, h int, y Axis, from, to int64, yLabel, xLabel string, series ...Series) Chart {
	c := Chart{W: w, H: h, Left: 64, Top: 22, Right: float64(w) - 8, Bottom: float64(h) - 36, YLabel: yLabel, XLabel: xLabel}
	return c.layout(y, from, to, series)
}

// layout scales series into c's plot area over [xmin, xmax].
func (c Chart) layout(y Axis, xmin, xmax int64, series []Series) Chart {
	ymax := 0.0
	for _, s := range series {
		for _, p := range s.Points {
			if p.Known {
				ymax = max(ymax, p.Y)
			}
		}
	}
	c.Span = spanLabel(xmax - xmin)
	if xmax == xmin {
		xmax = xmin + 1
	}
	top, step, above := y.scale(ymax)
	xpos := c.xpos(xmin, xmax)
	ypos := c.ypos(top)
	for _, s := range series {
		c.Lines = append(c.Lines, ChartLine{Name: s.Name, Class: s.Class, D: path(s.Points, xpos, ypos)})
	}
	for i := 0.0; i*step <= top*(1+1e-9); i++ {
		c.YTicks = append(c.YTicks, Tick{Pos: ypos(i * step), Label: y.label(i * step)})
	}
	for _, t := range y.Thresholds {
		if t.Value <= top {
			c.Rules = append(c.Rules, Rule{Pos: ypos(t.Value), Label: t.Name + " " + y.label(t.Value), Class: t.Name})
		}
	}
	for _, t := range above {
		c.Above = append(c.Above, t.Name+" "+y.label(t.Value))
	}
	c.XTicks = timeTicks(xmin, xmax, xpos)
	return c
}

func (c Chart) xpos(xmin, xmax int64) func(int64) float64 {
	return func(ms int64) float64 { return c.Left + (c.Right-c.Left)*float64(ms-xmin)/float64(xmax-xmin) }
}

func (c Chart) ypos(top float64) func(float64) float64 {
	return func(v float64) float64 { return c.Bottom - (c.Bottom-c.Top)*v/top }
}

// timeSteps are the nice steps of a time axis, in ms.
var timeSteps = []int64{1e3, 2e3, 5e3, 10e3, 15e3, 30e3,
	60e3, 2 * 60e3, 5 * 60e3, 10 * 60e3, 15 * 60e3, 30 * 60e3,
	3600e3, 2 * 3600e3, 3 * 3600e3, 6 * 3600e3, 12 * 3600e3,
	86400e3, 2 * 86400e3, 7 * 86400e3, 14 * 86400e3, 28 * 86400e3}

// timeTicks labels the x axis at whole steps of UTC time (every 15 min,
// every hour...), at most six, each label precise enough for its step so
// none repeats. A range under a second is labelled at its start only.
func timeTicks(xmin, xmax int64, xpos func(int64) float64) []Tick {
	rough := (xmax - xmin) / maxIntervals
	i, _ := slices.BinarySearch(timeSteps, rough)
	step := timeSteps[min(i, len(timeSteps)-1)]
	layout := "15:04"
	switch {
	case step < 60e3:
		layout = "15:04:05"
	case step >= 86400e3:
		layout = "01-02"
	case xmax-xmin > 24*3600e3:
		layout = "01-02 15:04"
	}
	var ticks []Tick
	for ms := (xmin + step - 1) / step * step; ms <= xmax; ms += step {
		ticks = append(ticks, Tick{Pos: xpos(ms), Label: time.UnixMilli(ms).UTC().Format(layout)})
	}
	if len(ticks) == 0 {
		ticks = append(ticks, Tick{Pos: xpos(xmin), Label: time.UnixMilli(xmin).UTC().Format("15:04:05")})
	}
	return ticks
}

// Spark is an overview sparkline drawn into a w x h box on a fixed scale
// from 0 to Top (max(objective, peak), to a nice step), so that a 1 ms
// wiggle is drawn flat, not as a ramp; the gaps are marked.
type Spark struct {
	Line string
	// Top is the scale's top (ms), TopLabel it in words ("30 s");
	// ObjectiveY is the objective line's y, or -1 without one.
	Top        float64
	TopLabel   string
	ObjectiveY float64
	// Gaps are the stretches without an exact figure, oldest first;
	// GapNote says them in words ("" when none).
	Gaps    []SparkGap
	GapNote string
}

// SparkGap is a marked stretch of a sparkline: no samples, the RPO
// unknown, or only a lower bound.
type SparkGap struct {
	X, W         float64
	Class, Title string
}

// SparkGapAfter is the shortest time without samples marked as a gap;
// a longer one is marked when samples are further apart (three times the
// median spacing: a slow refresh interval is not a gap).
const SparkGapAfter = time.Minute

// NewSpark draws RPO points (ms) into w x h against objective (ms; 0:
// none): the first point is the left edge and the last the right, so the
// line fills the width with the history there is (see SparkSpan). A point
// with only a lower bound (AtLeast) is no point of the line but a marked
// "≥" stretch, and its bound counts towards the scale.
func NewSpark(points []Point, w, h, objective float64) Spark {
	sp := Spark{ObjectiveY: -1}
	peak := 0.0
	for _, p := range points {
		if p.Known {
			peak = max(peak, p.Y)
		}
	}
	axis := LagAxis().Floor(objective)
	sp.Top, _, _ = axis.scale(peak)
	sp.TopLabel = DurationTick(sp.Top)
	ypos := func(v float64) float64 { return h - 1 - (h-2)*v/sp.Top }
	if objective > 0 {
		sp.ObjectiveY = ypos(objective)
	}
	if len(points) == 0 {
		return sp
	}
	xmin, xmax := points[0].AtMs, points[len(points)-1].AtMs
	if xmax == xmin {
		xmax++
	}
	xpos := func(ms int64) float64 { return w * float64(ms-xmin) / float64(xmax-xmin) }
	gapAfter := sparkGapAfter(points)
	line := make([]Point, 0, len(points))
	var totals [3]int64
	var counts [3]int
	kinds := [3]struct{ class, name string }{{"gap-nodata", "no data"}, {"gap-unknown", "RPO unknown"}, {"gap-atleast", "≥ lower bound"}}
	mark := func(k int, from, to int64, extra string) {
		x := xpos(from)
		sp.Gaps = append(sp.Gaps, SparkGap{X: x, W: max(xpos(to)-x, 1), Class: kinds[k].class,
			Title: fmt.Sprintf("%s, %s to %s UTC%s", kinds[k].name, sparkClock(from), sparkClock(to), extra)})
		totals[k] += to - from
		counts[k]++
	}
	kind := func(p Point) int {
		switch {
		case !p.Known:
			return 1
		case p.AtLeast:
			return 2
		}
		return -1
	}
	for i := 0; i < len(points); {
		p := points[i]
		if i > 0 && p.AtMs-points[i-1].AtMs > gapAfter {
			mark(0, points[i-1].AtMs, p.AtMs, "")
			line = append(line, Point{AtMs: points[i-1].AtMs})
		}
		k := kind(p)
		if k < 0 {
			line = append(line, p)
			i++
			continue
		}
		// A run of unknown or lower-bound points, up to the next point.
		j, hi := i, 0.0
		for j < len(points) && kind(points[j]) == k && (j == i || points[j].AtMs-points[j-1].AtMs <= gapAfter) {
			hi = max(hi, points[j].Y)
			j++
		}
		end := points[j-1].AtMs
		if j < len(points) && points[j].AtMs-end <= gapAfter {
			end = points[j].AtMs
		}
		extra := ""
		if k == 2 {
			extra = ", at least " + DurationTick(hi) + " at the highest"
		}
		mark(k, p.AtMs, end, extra)
		line = append(line, Point{AtMs: p.AtMs})
		i = j
	}
	sp.Line = path(line, xpos, ypos)
	var notes []string
	for k, n := range counts {
		if n > 0 {
			notes = append(notes, fmt.Sprintf("%s %s", kinds[k].name, Duration(time.Duration(totals[k])*time.Millisecond)))
		}
	}
	if len(notes) > 0 {
		sp.GapNote = "gaps: " + strings.Join(notes, ", ")
	}
	return sp
}

// sparkGapAfter is the time without samples marked as a gap among points:
// SparkGapAfter, or three times their median spacing if that is longer.
func sparkGapAfter(points []Point) int64 {
	if len(points) < 3 {
		return SparkGapAfter.Milliseconds()
	}
	ds := make([]int64, len(points)-1)
	for i := range ds {
		ds[i] = points[i+1].AtMs - points[i].AtMs
	}
	slices.Sort(ds)
	return max(SparkGapAfter.Milliseconds(), 3*ds[len(ds)/2])
}

func sparkClock(ms int64) string { return time.UnixMilli(ms).UTC().Format("15:04:05") }

// path draws points as SVG path commands, gaps kept. Points landing in
// the same pixel column are reduced to that column's first, lowest,
// highest and last (in time order): hours of samples draw in a few
// segments per pixel, and no spike is lost.
func path(points []Point, x func(int64) float64, y func(float64) float64) string {
	var b strings.Builder
	pen := false
	draw := func(p Point) {
		cmd := "L"
		if !pen {
			cmd = "M"
		}
		fmt.Fprintf(&b, "%s%.1f %.1f ", cmd, x(p.AtMs), y(p.Y))
		pen = true
	}
	// The current column: indexes into points of its first, lowest,
	// highest and last known point; first < 0 when empty.
	col, first, lo, hi, last := math.MinInt, -1, -1, -1, -1
	flush := func() {
		if first < 0 {
			return
		}
		keep := []int{first, lo, hi, last}
		slices.Sort(keep)
		for i, k := range keep {
			if i == 0 || k != keep[i-1] {
				draw(points[k])
			}
		}
		first = -1
	}
	for i, p := range points {
		if !p.Known {
			flush()
			pen = false
			continue
		}
		if c := int(math.Floor(x(p.AtMs))); c != col || first < 0 {
			flush()
			col, first, lo, hi = c, i, i, i
		}
		if p.Y < points[lo].Y {
			lo = i
		}
		if p.Y > points[hi].Y {
			hi = i
		}
		last = i
	}
	flush()
	return strings.TrimSpace(b.String())
}

// SparkSpan says over how long a sparkline's points reach: "last 42 min",
// "last 6 h"; "just now" under a second, "no history yet" without points.
func SparkSpan(points []Point) string {
	if len(points) == 0 {
		return "no history yet"
	}
	return spanLabel(points[len(points)-1].AtMs - points[0].AtMs)
}

// spanLabel names a span of history in whole seconds below a minute and
// whole minutes above.
func spanLabel(ms int64) string {
	switch {
	case ms < 1e3:
		return "just now"
	case ms < 60e3:
		return "last " + DurationTick(float64(ms/1e3*1e3))
	}
	return "last " + DurationTick(float64(ms/60e3*60e3))
}
