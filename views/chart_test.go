package views

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
)

// series is a known series of values one second apart.
func series(vs ...float64) Series {
	s := Series{Name: "s"}
	for i, v := range vs {
		s.Points = append(s.Points, Point{AtMs: 1_700_000_000_000 + int64(i)*1000, Y: v, Known: true})
	}
	return s
}

func labels(ts []Tick) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Label)
	}
	return out
}

// distinctLabels returns the ticks' labels, failing when one repeats.
func distinctLabels(t *testing.T, name string, ts []Tick) []string {
	t.Helper()
	ls := labels(ts)
	seen := map[string]bool{}
	for _, l := range ls {
		if seen[l] {
			t.Errorf("%s: label %q twice in %q", name, l, ls)
		}
		seen[l] = true
	}
	return ls
}

// Every y axis: distinct labels, bottom at 0, top covering the data,
// at most six ticks, evenly spaced.
func checkYTicks(t *testing.T, name string, c Chart, max float64, y Axis) {
	t.Helper()
	ls := distinctLabels(t, name, c.YTicks)
	if n := len(c.YTicks); n < 2 || n > maxIntervals+1 {
		t.Fatalf("%s: %d ticks %q", name, n, ls)
	}
	if c.YTicks[0].Pos != c.Bottom || ls[0] != y.label(0) {
		t.Errorf("%s: first tick %+v, want 0 at the bottom", name, c.YTicks[0])
	}
	top := c.YTicks[len(c.YTicks)-1]
	if math.Abs(top.Pos-c.Top) > 0.01 {
		t.Errorf("%s: top tick at %.2f, plot top %.2f", name, top.Pos, c.Top)
	}
	topV, _, _ := y.scale(max)
	if topV < max {
		t.Errorf("%s: axis top %v below the data's %v", name, topV, max)
	}
}

func TestLagTicksDistinctAndCovering(t *testing.T) {
	for _, tc := range []struct {
		name string
		vs   []float64
		want []string // tick labels, bottom up
	}{
		{"flat zero", []float64{0, 0, 0}, []string{"0", "200 ms", "400 ms", "600 ms", "800 ms", "1 s"}},
		{"tiny", []float64{0, 3, 1}, []string{"0", "1 ms", "2 ms", "3 ms"}},
		{"sub-ms", []float64{0, 0.2}, []string{"0", "1 ms"}},
		{"seconds", []float64{800, 12_000, 4_000}, []string{"0", "5 s", "10 s", "15 s"}},
		{"fractional seconds", []float64{0, 2_300}, []string{"0", "500 ms", "1 s", "1.5 s", "2 s", "2.5 s"}},
		{"minutes", []float64{0, 95_000}, []string{"0", "30 s", "1 min", "1 min 30 s", "2 min"}},
		{"hours", []float64{0, 5*3600e3 + 1}, []string{"0", "2 h", "4 h", "6 h"}},
		{"huge", []float64{0, 400 * 86400e3}, []string{"0", "100 d", "200 d", "300 d", "400 d"}},
	} {
		c := NewChart(900, 220, LagAxis(), series(tc.vs...))
		checkYTicks(t, tc.name, c, slicesMax(tc.vs), LagAxis())
		if got := strings.Join(labels(c.YTicks), "|"); got != strings.Join(tc.want, "|") {
			t.Errorf("%s: ticks %q, want %q", tc.name, got, strings.Join(tc.want, "|"))
		}
	}
}

func TestCountTicksDistinctAndCovering(t *testing.T) {
	for _, tc := range []struct {
		name string
		vs   []float64
		top  string
	}{
		{"flat zero", []float64{0, 0}, "1"},
		{"tiny", []float64{1, 3}, "3"},
		{"offsets", []float64{1_234_567, 1_240_001}, "1,500,000"},
		{"huge", []float64{0, 9e15}, "10,000,000,000,000,000"},
	} {
		c := NewChart(900, 240, CountAxis, series(tc.vs...))
		checkYTicks(t, tc.name, c, slicesMax(tc.vs), CountAxis)
		if got := c.YTicks[len(c.YTicks)-1].Label; got != tc.top {
			t.Errorf("%s: top %q, want %q (%q)", tc.name, got, tc.top, labels(c.YTicks))
		}
	}
}

func slicesMax(vs []float64) float64 {
	m := 0.0
	for _, v := range vs {
		m = max(m, v)
	}
	return m
}

// An unknown sample never lowers or raises the axis: it is a gap, not 0
// and not a guess.
func TestUnknownPointsDoNotScale(t *testing.T) {
	s := series(10_000, 20_000)
	s.Points = append(s.Points, Point{AtMs: s.Points[1].AtMs + 1000, Y: 9e9, Known: false})
	c := NewChart(900, 220, LagAxis(), s)
	if top := c.YTicks[len(c.YTicks)-1].Label; top != "20 s" {
		t.Fatalf("top %q: an unknown point's Y moved the axis", top)
	}
	if strings.Count(c.Lines[0].D, "M") != 1 || strings.Count(c.Lines[0].D, "L") != 1 {
		t.Fatalf("path %q draws the unknown point", c.Lines[0].D)
	}
}

func TestTimeTicksDistinct(t *testing.T) {
	const t0 = 1_700_000_000_000 // 22:13:20 UTC
	for _, span := range []int64{0, 400, 3_000, 10 * 60e3, 3600e3, 6 * 3600e3, 30 * 3600e3, 9 * 86400e3} {
		c := NewChart(900, 220, LagAxis(), Series{Points: []Point{{AtMs: t0, Known: true}, {AtMs: t0 + span, Known: true}}})
		ls := distinctLabels(t, fmt.Sprintf("span %d ms", span), c.XTicks)
		if len(ls) == 0 || len(ls) > maxIntervals+1 {
			t.Errorf("span %d ms: %d x ticks %q", span, len(ls), ls)
		}
		for _, x := range c.XTicks {
			if x.Pos < c.Left-0.01 || x.Pos > c.Right+0.01 {
				t.Errorf("span %d ms: tick %+v outside the plot", span, x)
			}
		}
	}
}

func defaultThresholds() Axis {
	return LagAxis(Threshold{Name: "critical", Value: 120_000}, Threshold{Name: "warning", Value: 30_000})
}

func TestThresholdRules(t *testing.T) {
	rules := func(c Chart) string {
		var s []string
		for _, r := range c.Rules {
			s = append(s, r.Class+"="+r.Label)
		}
		return strings.Join(s, "|")
	}
	for _, tc := range []struct {
		name         string
		vs           []float64
		rules, above string
		top          string
	}{
		// A lag of 0 is shown 0..1 s; both thresholds are named, not drawn.
		{"flat zero", []float64{0, 0}, "", "warning 30 s|critical 2 min", "1 s"},
		// 20 s of lag: the 30 s warning is near, so the axis reaches it.
		{"near warning", []float64{5_000, 20_000}, "warning=warning 30 s", "critical 2 min", "30 s"},
		{"past warning", []float64{0, 70_000}, "warning=warning 30 s|critical=critical 2 min", "", "2 min"},
		{"past critical", []float64{0, 10 * 60e3}, "warning=warning 30 s|critical=critical 2 min", "", "10 min"},
	} {
		c := NewChart(900, 220, defaultThresholds(), series(tc.vs...))
		if got := rules(c); got != tc.rules {
			t.Errorf("%s: rules %q, want %q", tc.name, got, tc.rules)
		}
		if got := strings.Join(c.Above, "|"); got != tc.above {
			t.Errorf("%s: above %q, want %q", tc.name, got, tc.above)
		}
		if got := c.YTicks[len(c.YTicks)-1].Label; got != tc.top {
			t.Errorf("%s: top %q, want %q", tc.name, got, tc.top)
		}
		for _, r := range c.Rules {
			if r.Pos < c.Top-0.01 || r.Pos > c.Bottom {
				t.Errorf("%s: rule %+v outside the plot", tc.name, r)
			}
		}
	}
	// Not configured (zero): no line, no note.
	c := NewChart(900, 220, LagAxis(Threshold{Name: "warning"}), series(0, 40_000))
	if len(c.Rules)+len(c.Above) != 0 {
		t.Fatalf("an unset threshold is drawn: %+v %q", c.Rules, c.Above)
	}
}

func TestSparkSpan(t *testing.T) {
	for _, tc := range []struct {
		span int64
		want string
	}{{0, "just now"}, {900, "just now"}, {42_500, "last 42 s"}, {42*60e3 + 30e3, "last 42 min"}, {6 * 3600e3, "last 6 h"}, {90 * 60e3, "last 1 h 30 min"}} {
		pts := []Point{{AtMs: 5_000, Known: true}, {AtMs: 5_000 + tc.span, Known: false}}
		if got := SparkSpan(pts); got != tc.want {
			t.Errorf("span %d: %q, want %q", tc.span, got, tc.want)
		}
	}
	if SparkSpan(nil) != "no history yet" || NewChart(900, 220, LagAxis()).Span != "no history yet" {
		t.Error("no points")
	}
	if got := NewChart(900, 220, LagAxis(), series(1, 2, 3)).Span; got != "last 2 s" {
		t.Errorf("chart span %q", got)
	}
}

// The chart's SVG draws the rules inside the range and says which
// thresholds lie above it.
func TestChartSVGRendersThresholds(t *testing.T) {
	render := func(c Chart) string {
		var b strings.Builder
		if err := ChartSVG(c, "RPO").Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	near := render(NewChart(900, 220, defaultThresholds(), series(5_000, 20_000)))
	for _, want := range []string{`class="rule warning"`, `>warning 30 s</text>`, `data-testid="chart-above"`, "Above this chart's range: critical 2 min."} {
		if !strings.Contains(near, want) {
			t.Errorf("chart near the warning lacks %q:\n%s", want, near)
		}
	}
	if strings.Contains(near, `class="rule critical"`) {
		t.Error("the critical line is drawn outside the range")
	}
	far := render(NewChart(900, 220, defaultThresholds(), series(0, 10*60e3)))
	if !strings.Contains(far, `class="rule critical"`) || strings.Contains(far, "chart-above") {
		t.Errorf("past critical: both lines, no note:\n%s", far)
	}
}
