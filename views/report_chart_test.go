package views

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/model"
)

func i64p(v int64) *int64 { return &v }

// shapes returns c's shapes of class.
func shapes(c Chart, class string) []Shape {
	var out []Shape
	for _, s := range c.Shapes {
		if s.Class == class {
			out = append(out, s)
		}
	}
	return out
}

// pathYs are the y coordinates of a path made of M, L, H, V commands.
func pathYs(d string) []float64 {
	var ys []float64
	for _, m := range regexp.MustCompile(`[ML](-?[\d.]+) (-?[\d.]+)|V(-?[\d.]+)`).FindAllStringSubmatch(d, -1) {
		s := m[2]
		if s == "" {
			s = m[3]
		}
		y, _ := strconv.ParseFloat(s, 64)
		ys = append(ys, y)
	}
	return ys
}

// A week of a healthy new console: an hour of 1 ms RPO, two hours
// unrecorded (the console was down), 30 minutes with the RPO unknown, one
// start-up minute with a lower bound of 3 ms, then 10 minutes of 1 ms.
// The scale is 0 to the 30 s objective (a 1 ms wiggle stays at the
// bottom), the objective is drawn, every gap is a labelled shape.
func TestRPOPlotScaleObjectiveAndGaps(t *testing.T) {
	to := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC).UnixMilli()
	f := model.FlowReport{Flow: "f", Objective: 30 * time.Second, PlotFromMs: to - 7*86400e3,
		Windows: []model.ReportWindow{{Length: 7 * 24 * time.Hour, FromMs: to - 7*86400e3, ToMs: to}}}
	start := to - 4*3600e3 // 08:00
	add := func(from, n int64, m model.ReportMinute) {
		for i := range n {
			m.MinuteMs = from + i*60000
			f.Minutes = append(f.Minutes, m)
		}
	}
	add(start, 60, model.ReportMinute{RPOMs: i64p(1)})                         // 08:00-09:00
	add(start+180*60000, 30, model.ReportMinute{})                             // 11:00-11:30 unknown
	add(start+210*60000, 1, model.ReportMinute{RPOMs: i64p(3), AtLeast: true}) // 11:30 start-up
	add(start+211*60000, 10, model.ReportMinute{RPOMs: i64p(1)})               // 11:31-11:41
	c, sum := RPOPlot(f)

	if top := c.YTicks[len(c.YTicks)-1].Label; top != "30 s" {
		t.Errorf("scale top %q, want the 30 s objective (ticks %q)", top, labels(c.YTicks))
	}
	if len(c.Rules) != 1 || c.Rules[0].Label != "objective 30 s" {
		t.Errorf("rules %+v, want the objective", c.Rules)
	}
	if c.YLabel == "" || c.XLabel == "" || !strings.Contains(c.XLabel, "UTC") {
		t.Errorf("axis labels %q %q", c.YLabel, c.XLabel)
	}
	// No data: before 08:00, 09:00-11:00, after 11:41.
	nd := shapes(c, "gap-nodata")
	if len(nd) != 3 || !strings.Contains(nd[1].Title, "2026-12-01 09:00 to 2026-12-01 11:00 UTC (2 h 00 m)") {
		t.Errorf("no-data gaps %+v", nd)
	}
	if u := shapes(c, "gap-unknown"); len(u) != 1 || !strings.Contains(u[0].Title, "RPO unknown, 2026-12-01 11:00 to 2026-12-01 11:30") {
		t.Errorf("unknown gaps %+v", u)
	}
	// The lower bound is drawn from 3 ms up, never below it.
	al := shapes(c, "gap-atleast")
	if len(al) != 1 {
		t.Fatalf("lower-bound shapes %+v", al)
	}
	floor := c.Bottom - (c.Bottom-c.Top)*3/30_000
	for _, y := range pathYs(al[0].D) {
		if y > floor+0.05 {
			t.Errorf("the lower bound's area reaches y %.2f, below 3 ms at %.2f: %s", y, floor, al[0].D)
		}
	}
	// The exact line stays at the bottom: 1 ms of 30 s.
	for _, y := range pathYs(c.Lines[0].D) {
		if c.Bottom-y > 0.1 {
			t.Errorf("1 ms drawn %.2f px above 0 on a 30 s scale: %s", c.Bottom-y, c.Lines[0].D)
			break
		}
	}
	// The wide gaps are named inside the plot (7 days: 900 px is ~1 px
	// per 11 minutes, so the 2 h gap is 10 px wide and named by its
	// tooltip; the week before 08:00 is wide).
	var marks []string
	for _, m := range c.Marks {
		marks = append(marks, m.Label)
	}
	if len(marks) == 0 || marks[0] != "no data" {
		t.Errorf("marks %q, want the week's first no-data gap named", marks)
	}
	for _, want := range []string{"30 s objective", "highest at least 3 ms", "none with a figure over the objective",
		"no data: 6 d 22 h in 3 stretch(es)", "RPO unknown: 30 m 00 s in 1 stretch(es)", "≥ (lower bound): 1 m 00 s in 1 stretch(es)"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary %q lacks %q", sum, want)
		}
	}
}

// Three days: one with 1,438 minutes within and 2 over, one with nothing
// recorded, one with 12 hours within and 12 without data. Bars are shares
// of the recorded time: the third is all within, its no data in the
// tooltip; the second is a gap.
func TestDayPlotBarsOfRecordedTime(t *testing.T) {
	day := int64(86400e3)
	from := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC).UnixMilli()
	f := model.FlowReport{Flow: "f", Objective: 30 * time.Second,
		Windows: []model.ReportWindow{{Length: 3 * 24 * time.Hour, FromMs: from, ToMs: from + 3*day}},
		Days: []model.ReportDay{
			{StartMs: from, EndMs: from + day, Within: 1438, Over: 2},
			{StartMs: from + day, EndMs: from + 2*day, NoData: 1440},
			{StartMs: from + 2*day, EndMs: from + 3*day, Within: 720, NoData: 720},
		}}
	c, sum := DayPlot(f)
	if got := strings.Join(labels(c.YTicks), "|"); got != "0 %|20 %|40 %|60 %|80 %|100 %" {
		t.Errorf("y ticks %q", got)
	}
	w, o := shapes(c, "bar-within"), shapes(c, "bar-over")
	if len(w) != 2 || len(o) != 1 || len(shapes(c, "bar-unknown")) != 0 {
		t.Fatalf("bars: within %d over %d", len(w), len(o))
	}
	height := c.Bottom - c.Top
	if ys := pathYs(o[0].D); len(ys) < 2 || abs(ys[0]-c.Top) > 0.01 || abs((ys[1]-ys[0])-height*2/1440) > 0.01 {
		t.Errorf("over segment %s: want the top 2/1440 of %.1f px", o[0].D, height)
	}
	if ys := pathYs(w[1].D); abs(ys[0]-c.Top) > 0.01 || abs(ys[1]-c.Bottom) > 0.01 {
		t.Errorf("a day all within of its recorded half %s: want the full height", w[1].D)
	}
	if hit := shapes(c, "bar-hit"); len(hit) != 2 || !strings.Contains(hit[1].Title, "2026-11-30 UTC: 100.00 % within (12 h 00 m of 12 h 00 m recorded)") ||
		!strings.Contains(hit[1].Title, "no data 12 h 00 m") || pathYs(hit[1].D)[0] != c.Top {
		t.Errorf("bar tooltips %+v", hit)
	}
	if g := shapes(c, "gap-nodata"); len(g) != 1 || !strings.Contains(g[0].Title, "2026-11-29 00:00 to 2026-11-30 00:00") {
		t.Errorf("no-data days %+v", g)
	}
	if want := "2 day(s) with data, the lowest 99.86 % on 2026-11-28; 1 day(s) with nothing recorded."; !strings.HasSuffix(sum, want) {
		t.Errorf("summary %q, want it to end %q", sum, want)
	}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// The drawn chart carries its axis names, the objective line, the gaps
// with their tooltips and names, and the summary as its accessible name.
func TestReportPlotSVG(t *testing.T) {
	to := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC).UnixMilli()
	f := model.FlowReport{Flow: "f", Objective: 30 * time.Second, PlotFromMs: to - 7*86400e3,
		Windows: []model.ReportWindow{{Length: 7 * 24 * time.Hour, FromMs: to - 7*86400e3, ToMs: to}},
		Minutes: []model.ReportMinute{{MinuteMs: to - 60000, RPOMs: i64p(45_000)}}}
	c, sum := RPOPlot(f)
	var b bytes.Buffer
	if err := ChartSVG(c, sum).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	for _, want := range []string{`aria-label="RPO per minute, last 7 d 0 h, against the 30 s objective: highest 45 s; 1 m 00 s with a figure over the objective; no data: 6 d 23 h in 1 stretch(es)."`,
		`data-testid="chart-ylabel">RPO (largest in each minute)<`, `data-testid="chart-xlabel">time (UTC)<`,
		`data-testid="chart-rule">objective 30 s<`, `class="shape gap-nodata"`, `<title>no data, 2026-11-24 12:00 to 2026-12-01 11:59 UTC`,
		`data-testid="chart-mark">no data<`} {
		if !strings.Contains(svg, want) {
			t.Errorf("SVG lacks %s", want)
		}
	}
}
