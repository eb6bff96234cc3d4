package handlers

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/drconsole/drconsole/views"
)

// benchScales are the estates the page benchmarks run at: topics x
// partitions per topic, with 6 h of RPO samples every 5 s (4,320).
var benchScales = []struct {
	name          string
	topics, parts int
}{{"1k", 100, 10}, {"10k", 1000, 10}}

// benchPage serves path b.N times from one rig, as a browser's poll does
// between refreshes, and reports the page's bytes raw and gzipped (level
// 1, as web.compressHTML sends it). Per estate, three ways a request can
// go for the cached pages (pagecache.go): miss (every request renders,
// as if a state-changing request came between each: the old per-request
// cost plus the cache's), hit (a gzip-accepting browser served the held
// copy) and 304 (a poll that holds the page already). The partition page
// is not cached: all three render it.
func benchPage(b *testing.B, path func(*pagesRig) string) {
	for _, sc := range benchScales {
		b.Run(sc.name, func(b *testing.B) {
			rig := newPagesRig(b, sc.topics, sc.parts, 6*time.Hour)
			url := path(rig)
			w := rig.get(b, url)
			if w.Code != http.StatusOK {
				b.Fatalf("%s: %d", url, w.Code)
			}
			var z bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&z, gzip.BestSpeed)
			zw.Write(w.Body.Bytes())
			zw.Close()
			gz := []string{"Accept-Encoding", "gzip"}
			for _, mode := range []struct {
				name    string
				before  func()
				revalid bool // ask with the page's ETag
			}{{"miss", rig.h.StateChanged, false}, {"hit", func() {}, false}, {"304", func() {}, true}} {
				b.Run(mode.name, func(b *testing.B) {
					header, want := gz, http.StatusOK
					if etag := rig.get(b, url, gz...).Header().Get("ETag"); mode.revalid && etag != "" {
						header, want = append(gz, "If-None-Match", etag), http.StatusNotModified
					}
					b.ReportAllocs()
					b.ResetTimer()
					for range b.N {
						mode.before()
						if w := rig.get(b, url, header...); w.Code != want {
							b.Fatal(w.Code)
						}
					}
					b.ReportMetric(float64(w.Body.Len()), "page-B")
					b.ReportMetric(float64(z.Len()), "gzip-B")
				})
			}
		})
	}
}

func BenchmarkFlowPage(b *testing.B) {
	benchPage(b, func(rig *pagesRig) string { return views.FlowPath(rig.flow) })
}

func BenchmarkOverviewPage(b *testing.B) {
	benchPage(b, func(*pagesRig) string { return "/" })
}

func BenchmarkTopicPage(b *testing.B) {
	benchPage(b, func(rig *pagesRig) string { return views.TopicPath(rig.flow, fmt.Sprintf("t-%04d", 42)) })
}

func BenchmarkPartitionPage(b *testing.B) {
	benchPage(b, func(rig *pagesRig) string { return views.PartitionPath(rig.flow, fmt.Sprintf("t-%04d", 42), 7) })
}

// BenchmarkFlowPageConcurrent is issue 17's load on the flow page in
// process (no network, no web middleware): 32 clients polling one
// listing while the clock runs, so each second's first request renders
// and the rest are served the held page. It reports requests per second
// and the 99th percentile of the handler's time.
func BenchmarkFlowPageConcurrent(b *testing.B) {
	for _, sc := range benchScales {
		b.Run(sc.name, func(b *testing.B) {
			rig := newPagesRig(b, sc.topics, sc.parts, 6*time.Hour)
			start, base := time.Now(), rig.clock()
			rig.h.Now = func() time.Time { return base.Add(time.Since(start)) }
			url := views.FlowPath(rig.flow)
			var mu sync.Mutex
			var took []time.Duration
			b.SetParallelism(16) // x GOMAXPROCS (2 here): 32 clients
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				var mine []time.Duration
				for pb.Next() {
					t0 := time.Now()
					if w := rig.get(b, url, "Accept-Encoding", "gzip"); w.Code != http.StatusOK {
						b.Error(w.Code)
						return
					}
					mine = append(mine, time.Since(t0))
				}
				mu.Lock()
				took = append(took, mine...)
				mu.Unlock()
			})
			b.StopTimer()
			slices.Sort(took)
			b.ReportMetric(float64(len(took))/time.Since(start).Seconds(), "req/s")
			if len(took) > 0 {
				b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
			}
		})
	}
}
