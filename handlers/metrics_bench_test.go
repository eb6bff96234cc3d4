package handlers

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// countingWriter is a ResponseWriter that only counts the body.
type countingWriter struct {
	h http.Header
	n int
}

func (w *countingWriter) Header() http.Header         { return w.h }
func (w *countingWriter) WriteHeader(int)             {}
func (w *countingWriter) Write(b []byte) (int, error) { w.n += len(b); return len(b), nil }

func processCollectors() []prometheus.Collector {
	return []prometheus.Collector{collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})}
}

// The cost of one scrape of /metrics on a synthetic snapshot, before (the
// collector through promhttp: every series re-collected, sorted and
// encoded per scrape, per-partition series always) and after: a scrape
// that finds the refresh's bytes built ("cached"), the first scrape after a
// refresh that builds them ("build"), with per-topic aggregates only and
// with metrics.per_partition. resp-B is what goes over the wire.
func BenchmarkMetricsScrape(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		snaps := syntheticSnapshots(n)
		for _, enc := range []string{"plain", "gzip"} {
			req := httptest.NewRequest("GET", "/metrics", nil)
			if enc == "gzip" {
				req.Header.Set("Accept-Encoding", "gzip")
			}
			run := func(name string, h http.Handler, refresh func()) {
				b.Run(fmt.Sprintf("partitions=%d/%s/%s", n, name, enc), func(b *testing.B) {
					w := &countingWriter{h: http.Header{}}
					h.ServeHTTP(w, req) // warm: the cached cases measure cached scrapes
					b.ReportAllocs()
					b.ResetTimer()
					for b.Loop() {
						if refresh != nil {
							refresh()
						}
						w.n = 0
						clear(w.h)
						h.ServeHTTP(w, req)
					}
					b.ReportMetric(float64(w.n), "resp-B")
				})
			}
			reg := prometheus.NewRegistry()
			reg.MustRegister(append(processCollectors(), MetricsCollector{Monitor: newFakeSource(snaps), Series: config.Metrics{PerPartition: new(true)}})...)
			run("old-collector", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), nil)
			for _, perPartition := range []bool{false, true} {
				mode := "topics"
				if perPartition {
					mode = "per-partition"
				}
				src := newFakeSource(snaps)
				live := prometheus.NewRegistry()
				live.MustRegister(processCollectors()...)
				x := &MetricsExposition{Collector: MetricsCollector{Monitor: src, Series: config.Metrics{PerPartition: &perPartition}}, Live: live}
				run("cached-"+mode, x, nil)
				// A refresh publishes new snapshots (same figures, new pointers).
				run("build-"+mode, x, func() {
					next := make([]*flowstate.FlowSnapshot, len(snaps))
					for i, s := range snaps {
						c := *s
						next[i] = &c
					}
					src.snaps.Store(&next)
				})
			}
		}
	}
}
