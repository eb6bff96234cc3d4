package views

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/drconsole/drconsole/model"
)

// BenchmarkReportPlots draws one flow's two report plots from a full
// week of minutes (a lower bound every 97th, an hour unknown a day) and 91
// days; svg-bytes is what the page carries for them.
func BenchmarkReportPlots(b *testing.B) {
	to := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC).UnixMilli()
	f := model.FlowReport{Flow: "f", Objective: 30 * time.Second, PlotFromMs: to - 7*86400e3,
		Windows: []model.ReportWindow{{Length: 7 * 24 * time.Hour, FromMs: to - 7*86400e3, ToMs: to},
			{Length: 90 * 24 * time.Hour, FromMs: to - 90*86400e3, ToMs: to}}}
	for i := range int64(7 * 1440) {
		m := model.ReportMinute{MinuteMs: f.PlotFromMs + i*60000, RPOMs: i64p(800 + i%61*37), AtLeast: i%97 == 0}
		if i%1440 < 60 {
			m.RPOMs = nil
		}
		f.Minutes = append(f.Minutes, m)
	}
	for d := range int64(91) {
		f.Days = append(f.Days, model.ReportDay{StartMs: to - (91-d)*86400e3, EndMs: to - (90-d)*86400e3, Within: 1370, Over: 10, Unknown: 60})
	}
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		c, s := RPOPlot(f)
		_ = ChartSVG(c, s).Render(context.Background(), &buf)
		c, s = DayPlot(f)
		_ = ChartSVG(c, s).Render(context.Background(), &buf)
	}
	b.ReportMetric(float64(buf.Len()), "svg-bytes")
}
