package views

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestNumbersNeverShowUnknownAsZero(t *testing.T) {
	zero := int64(0)
	if Int(nil) != "unknown" || Millis(nil) != "unknown" || Int(&zero) != "0" || Millis(&zero) != "0 s" {
		t.Fatalf("Int(nil)=%q Millis(nil)=%q Int(0)=%q Millis(0)=%q", Int(nil), Millis(nil), Int(&zero), Millis(&zero))
	}
	for d, want := range map[time.Duration]string{
		850 * time.Millisecond: "850 ms", 42 * time.Second: "42 s", 185 * time.Second: "3 m 05 s",
		130 * time.Minute: "2 h 10 m", 76 * time.Hour: "3 d 4 h", -time.Second: "0 s",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -45000: "-45,000"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
	if Ago(time.Time{}, time.Now()) != "never" {
		t.Error("zero time is not never")
	}
}

func TestChartsKeepGaps(t *testing.T) {
	pts := []Point{{AtMs: 0, Y: 1, Known: true}, {AtMs: 1, Y: 2, Known: true}, {AtMs: 2, Known: false}, {AtMs: 3, Y: 3, Known: true}}
	d := NewSpark(pts, 30, 10, 0).Line
	if strings.Count(d, "M") != 2 || strings.Count(d, "L") != 1 {
		t.Fatalf("an unknown sample must break the line: %q", d)
	}
	c := NewChart(300, 100, CountAxis, Series{Name: "s", Points: pts})
	if c.Empty || len(c.Lines) != 1 || len(c.YTicks) != 4 || c.YTicks[3].Label != "3" {
		t.Fatalf("chart = %+v", c)
	}
	if !NewChart(300, 100, CountAxis).Empty {
		t.Fatal("a chart without points is not empty")
	}
}

func TestPathsEscapeFlowNames(t *testing.T) {
	if got := PartitionPath("primary->dr", "my topic", 3); got != "/flows/primary-%3Edr/topics/my%20topic/partitions/3" {
		t.Fatalf("got %q", got)
	}
}

// Six hours of 1 s samples on a 900 px chart: a few segments per pixel
// column, and a one-sample spike still reaches the top.
func TestChartReducesDenseSeries(t *testing.T) {
	var pts []Point
	for i := range 6 * 3600 {
		v := float64(1000 + i%7*10)
		if i == 12345 {
			v = 90000 // one bad second
		}
		pts = append(pts, Point{AtMs: int64(i) * 1000, Y: v, Known: i < 20000 || i > 20010})
	}
	c := NewChart(900, 220, LagAxis(), Series{Name: "rpo", Points: pts})
	d := c.Lines[0].D
	cmds := strings.Count(d, "M") + strings.Count(d, "L")
	if cmds > 4*900+8 || strings.Count(d, "M") != 2 {
		t.Fatalf("%d path commands (%d M) for %d points", cmds, strings.Count(d, "M"), len(pts))
	}
	top := fmt.Sprintf(" %.1f", c.Top) // the axis tops at 90 s, three steps of 30 s
	if !strings.Contains(d, top) {
		t.Fatalf("the spike (y %s) is lost: %.300s...", top, d)
	}
	if s := NewSpark(pts, 120, 24, 30_000).Line; strings.Count(s, "M")+strings.Count(s, "L") > 4*121+8 {
		t.Fatalf("sparkline has %d commands", strings.Count(s, "M")+strings.Count(s, "L"))
	}
}
