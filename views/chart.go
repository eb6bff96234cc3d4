package views

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Point is one sample of a series; Known false is a gap in the line
// (an unknown value is not drawn as 0).
type Point struct {
	AtMs  int64
	Y     float64
	Known bool
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
	Empty  bool
	// Plot area.
	Left, Top, Right, Bottom float64
}

// ChartLine is a drawn series.
type ChartLine struct {
	Name, Class, D string
}

// Tick is an axis label at a position.
type Tick struct {
	Pos   float64
	Label string
}

// NewChart scales series into a w x h chart; yFmt labels the y axis.
func NewChart(w, h int, yFmt func(float64) string, series ...Series) Chart {
	c := Chart{W: w, H: h, Left: 64, Top: 8, Right: float64(w) - 8, Bottom: float64(h) - 22}
	var xmin, xmax int64 = math.MaxInt64, math.MinInt64
	ymax := 0.0
	for _, s := range series {
		for _, p := range s.Points {
			xmin, xmax = min(xmin, p.AtMs), max(xmax, p.AtMs)
			if p.Known {
				ymax = max(ymax, p.Y)
			}
		}
	}
	if xmin > xmax {
		c.Empty = true
		return c
	}
	if xmax == xmin {
		xmax = xmin + 1
	}
	ymax = niceCeil(ymax)
	x := func(ms int64) float64 {
		return c.Left + (c.Right-c.Left)*float64(ms-xmin)/float64(xmax-xmin)
	}
	y := func(v float64) float64 { return c.Bottom - (c.Bottom-c.Top)*v/ymax }
	for _, s := range series {
		c.Lines = append(c.Lines, ChartLine{Name: s.Name, Class: s.Class, D: path(s.Points, x, y)})
	}
	for i := 0; i <= 4; i++ {
		v := ymax * float64(i) / 4
		c.YTicks = append(c.YTicks, Tick{Pos: y(v), Label: yFmt(v)})
	}
	span := time.Duration(xmax-xmin) * time.Millisecond
	for i := 0; i <= 4; i++ {
		ms := xmin + (xmax-xmin)*int64(i)/4
		c.XTicks = append(c.XTicks, Tick{Pos: x(ms), Label: timeLabel(time.UnixMilli(ms), span)})
	}
	return c
}

// Sparkline returns the SVG path of points scaled to w x h, gaps kept.
func Sparkline(points []Point, w, h float64) string {
	if len(points) == 0 {
		return ""
	}
	xmin, xmax := points[0].AtMs, points[len(points)-1].AtMs
	if xmax == xmin {
		xmax++
	}
	ymax := 0.0
	for _, p := range points {
		if p.Known {
			ymax = max(ymax, p.Y)
		}
	}
	ymax = niceCeil(ymax)
	return path(points,
		func(ms int64) float64 { return w * float64(ms-xmin) / float64(xmax-xmin) },
		func(v float64) float64 { return h - 1 - (h-2)*v/ymax })
}

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

// niceCeil rounds v up to 1, 2 or 5 times a power of ten (at least 1).
func niceCeil(v float64) float64 {
	if v <= 1 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func timeLabel(t time.Time, span time.Duration) string {
	switch {
	case span > 48*time.Hour:
		return t.UTC().Format("01-02 15h")
	case span < 10*time.Minute:
		return t.UTC().Format("15:04:05")
	}
	return t.UTC().Format("15:04")
}

// MillisLabel labels a lag axis.
func MillisLabel(v float64) string { return Duration(time.Duration(v) * time.Millisecond) }

// CountLabel labels a count axis.
func CountLabel(v float64) string { return Count(int64(v)) }
