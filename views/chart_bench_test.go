package views

import "testing"

// BenchmarkChartSixHours lays out the flow page's RPO chart over six hours
// of 1 s samples; path-bytes is what the page carries for the line.
func BenchmarkChartSixHours(b *testing.B) {
	pts := sixHours()
	var d string
	for b.Loop() {
		d = NewChart(900, 220, LagAxis(), Series{Name: "rpo", Points: pts}).Lines[0].D
	}
	b.ReportMetric(float64(len(d)), "path-bytes")
}

// BenchmarkSparklineSixHours is one overview card's sparkline over six
// hours of 1 s samples.
func BenchmarkSparklineSixHours(b *testing.B) {
	pts := sixHours()
	var d string
	for b.Loop() {
		d = NewSpark(pts, 300, 40, 30_000).Line
	}
	b.ReportMetric(float64(len(d)), "path-bytes")
}

// sixHours is six hours of 1 s lag samples around one second.
func sixHours() []Point {
	pts := make([]Point, 6*3600)
	for i := range pts {
		pts[i] = Point{AtMs: int64(i) * 1000, Y: float64(1000 + i%97*13), Known: true}
	}
	return pts
}
