package views

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// every5s is n known points 5 s apart from t0 with values v(i).
func every5s(t0 int64, n int, v func(i int) float64) []Point {
	pts := make([]Point, n)
	for i := range pts {
		pts[i] = Point{AtMs: t0 + int64(i)*5000, Y: v(i), Known: true}
	}
	return pts
}

// A 1 ms wiggle against a 30 s objective is drawn flat at the bottom on
// a scale of 0 to 30 s, not as a ramp filling the height; a peak above
// the objective raises the scale to it, the objective still drawn.
func TestSparkFixedScale(t *testing.T) {
	wiggle := every5s(0, 100, func(i int) float64 { return float64(i % 2) })
	sp := NewSpark(wiggle, 300, 40, 30_000)
	if sp.Top != 30_000 || sp.TopLabel != "30 s" {
		t.Fatalf("scale top %v %q, want the 30 s objective", sp.Top, sp.TopLabel)
	}
	if sp.ObjectiveY != 1 {
		t.Errorf("objective line at y %v, want the top (1)", sp.ObjectiveY)
	}
	for _, y := range pathYs(sp.Line) {
		if 39-y > 0.01 { // 1 ms of 30 s is 0.001 px
			t.Fatalf("a 1 ms wiggle drawn %.2f px high: %s", 39-y, sp.Line)
		}
	}
	ramp := every5s(0, 100, func(i int) float64 { return float64(i) * 410 }) // to 40.6 s
	sp = NewSpark(ramp, 300, 40, 30_000)
	if sp.TopLabel != "50 s" || abs(sp.ObjectiveY-(39-38*30.0/50)) > 0.01 {
		t.Errorf("a 41 s ramp: top %q, objective at y %v", sp.TopLabel, sp.ObjectiveY)
	}
	// A lower bound counts towards the scale: at least 90 s is above 30 s.
	bound := every5s(0, 10, func(int) float64 { return 1 })
	bound[5].Y, bound[5].AtLeast = 90_000, true
	if sp = NewSpark(bound, 300, 40, 30_000); sp.TopLabel != "1 min 30 s" {
		t.Errorf("a 90 s lower bound: top %q", sp.TopLabel)
	}
}

// Ten minutes of samples, twelve without any (the console was down), a
// minute with the RPO unknown, half a minute of lower bounds, two more
// minutes: three gaps, each marked and named, and the line broken.
func TestSparkMarksGaps(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).UnixMilli()
	pts := every5s(t0, 120, func(int) float64 { return 2000 }) // 10:00:00-10:09:55
	after := every5s(t0+22*60000, 12+6+24, func(int) float64 { return 2000 })
	for i := range after {
		switch {
		case i < 12: // 10:22:00-10:22:55
			after[i].Known = false
		case i < 18: // 10:23:00-10:23:25
			after[i].AtLeast, after[i].Y = true, 3
		}
	}
	sp := NewSpark(append(pts, after...), 300, 40, 30_000)
	var got []string
	for _, g := range sp.Gaps {
		got = append(got, g.Class+": "+g.Title)
	}
	want := []string{
		"gap-nodata: no data, 10:09:55 to 10:22:00 UTC",
		"gap-unknown: RPO unknown, 10:22:00 to 10:23:00 UTC",
		"gap-atleast: ≥ lower bound, 10:23:00 to 10:23:30 UTC, at least 3 ms at the highest",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("gaps:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if sp.GapNote != "gaps: no data 12 m 05 s, RPO unknown 1 m 00 s, ≥ lower bound 30 s" {
		t.Errorf("note %q", sp.GapNote)
	}
	if n := strings.Count(sp.Line, "M"); n != 2 {
		t.Errorf("the line has %d pieces, want 2 (before the gaps and after): %s", n, sp.Line)
	}
	for _, g := range sp.Gaps {
		if g.X < 0 || g.W <= 0 || g.X+g.W > 300.01 {
			t.Errorf("gap %+v outside the box", g)
		}
	}
	// Samples a minute apart (a slow refresh) are no gap; four minutes are.
	slow := []Point{{AtMs: 0, Known: true}, {AtMs: 60e3, Known: true}, {AtMs: 120e3, Known: true}, {AtMs: 180e3, Known: true}, {AtMs: 420e3, Known: true}}
	if g := NewSpark(slow, 300, 40, 30_000).Gaps; len(g) != 1 || g[0].Class != "gap-nodata" || !strings.Contains(g[0].Title, "00:03:00 to 00:07:00") {
		t.Errorf("slow samples: gaps %+v", g)
	}
}

// The drawn sparkline carries its scale, objective line and marked gaps.
func TestSparkFragmentScaleAndGaps(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).UnixMilli()
	pts := append(every5s(t0, 12, func(int) float64 { return 1 }), every5s(t0+10*60000, 12, func(int) float64 { return 1 })...)
	var b bytes.Buffer
	if err := SparkFragment(NewFlowCard(nil, pts, time.Time{}, 30*time.Second)).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{`data-testid="spark-top" aria-hidden="true">30 s<`, `class="spark-objective"`,
		`<rect class="spark-gap gap-nodata"`, `<title>no data, 10:00:55 to 10:10:00 UTC</title>`,
		`data-testid="spark-scale">scale 0 to 30 s, dashed: objective 30 s; gaps: no data 9 m 05 s<`,
		`aria-label="RPO, last 10 min; scale 0 to 30 s, dashed: objective 30 s; gaps: no data 9 m 05 s"`} {
		if !strings.Contains(html, want) {
			t.Errorf("sparkline lacks %s\n%s", want, html)
		}
	}
}
