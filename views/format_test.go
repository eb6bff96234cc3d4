package views

import (
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
	d := Sparkline(pts, 30, 10)
	if strings.Count(d, "M") != 2 || strings.Count(d, "L") != 1 {
		t.Fatalf("an unknown sample must break the line: %q", d)
	}
	c := NewChart(300, 100, CountLabel, Series{Name: "s", Points: pts})
	if c.Empty || len(c.Lines) != 1 || len(c.YTicks) != 5 || c.YTicks[4].Label != "5" {
		t.Fatalf("chart = %+v", c)
	}
	if !NewChart(300, 100, CountLabel).Empty {
		t.Fatal("a chart without points is not empty")
	}
}

func TestPathsEscapeFlowNames(t *testing.T) {
	if got := PartitionPath("primary->dr", "my topic", 3); got != "/flows/primary-%3Edr/topics/my%20topic/partitions/3" {
		t.Fatalf("got %q", got)
	}
}
