package handlers

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"weak"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/model"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	pmodel "github.com/prometheus/common/model"
)

// collectorText is what promhttp served before the pre-encoded path: the
// collector registered, gathered (checked for duplicates and
// inconsistencies, sorted) and text-encoded.
func collectorText(t testing.TB, c MetricsCollector) []byte {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("collector: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.Bytes()
}

// parseText parses the text format strictly (a family split in two, a
// second HELP or TYPE, a bad line: an error) into name → sorted
// "labels value" lines, with the family's help and type first.
func parseText(t testing.TB, b []byte) map[string][]string {
	t.Helper()
	p := expfmt.NewTextParser(pmodel.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("text format: %v\n%.2000s", err, b)
	}
	out := map[string][]string{}
	for name, mf := range mfs {
		var lines []string
		for _, m := range mf.Metric {
			var ls []string
			for _, l := range m.Label {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			slices.Sort(ls)
			v := m.GetGauge().GetValue()
			if mf.GetType() == dto.MetricType_COUNTER {
				v = m.GetCounter().GetValue()
			}
			lines = append(lines, fmt.Sprintf("%s %v", strings.Join(ls, ","), v))
		}
		slices.Sort(lines)
		out[name] = append([]string{mf.GetHelp(), mf.GetType().String()}, lines...)
	}
	return out
}

// The pre-encoded families are the collector's: the same families, help,
// types, labels and values, with per-partition series and without.
func TestMetricsExpositionMatchesCollector(t *testing.T) {
	for _, perPartition := range []bool{false, true} {
		c := MetricsCollector{Monitor: newFakeSource(syntheticSnapshots(2500)), Series: config.Metrics{PerPartition: &perPartition}}
		want := parseText(t, collectorText(t, c))
		plain, _ := encodeMirror(c, c.Monitor.Snapshots(), nil)
		got := parseText(t, plain)
		if len(want) < 15 || !slices.Equal(slices.Sorted(mapsKeys(want)), slices.Sorted(mapsKeys(got))) {
			t.Fatalf("per_partition %v: families %v, want %v", perPartition, slices.Sorted(mapsKeys(got)), slices.Sorted(mapsKeys(want)))
		}
		for name, w := range want {
			if g := got[name]; !slices.Equal(g, w) {
				t.Errorf("per_partition %v: %s differs: %d lines, want %d\n got %.300q\nwant %.300q", perPartition, name, len(g), len(w), g, w)
			}
		}
		_, has := want["kafka_mirror_lag_messages"]
		if has != perPartition {
			t.Errorf("per_partition %v: kafka_mirror_lag_messages exported: %v", perPartition, has)
		}
	}
}

func mapsKeys(m map[string][]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// Topic aggregates never understate: unknown partitions are counted, a
// topic with no known lag has no sum (not 0), and an age known only as a
// lower bound counts in the max, as in the flow RPO.
func TestMetricsTopicAggregates(t *testing.T) {
	s := syntheticSnapshots(0)
	s[0].Partitions = []model.PartitionLag{
		{Topic: model.Intern("a"), Partition: 0, LagMessages: model.Known(5), LagMs: model.Known(100)},
		{Topic: model.Intern("a"), Partition: 1, LagMessages: model.Known(7), LagMsAtLeast: model.Known(9000)},
		{Topic: model.Intern("a"), Partition: 2},
		{Topic: model.Intern("b"), Partition: 0},
		{Topic: model.Intern("c"), Partition: 0, LagMessages: model.Known(0), LagMs: model.Known(0)},
	}
	plain, _ := encodeMirror(MetricsCollector{Monitor: newFakeSource(s), Series: config.Metrics{PerPartition: new(false)}}, s, nil)
	got := parseText(t, plain)
	for name, want := range map[string][]string{
		"kafka_mirror_topic_lag_messages":       {"flow=link,topic=we\"ird\\topic 0", "flow=primary->dr,topic=a 12", "flow=primary->dr,topic=c 0"},
		"kafka_mirror_topic_lag_ms":             {"flow=link,topic=we\"ird\\topic 0", "flow=primary->dr,topic=a 9000", "flow=primary->dr,topic=c 0"},
		"kafka_mirror_topic_unknown_partitions": {"flow=link,topic=gone 1", "flow=link,topic=we\"ird\\topic 0", "flow=primary->dr,topic=a 2", "flow=primary->dr,topic=b 1", "flow=primary->dr,topic=c 0"},
	} {
		if g := got[name]; len(g) < 2 || !slices.Equal(g[2:], want) {
			t.Errorf("%s = %q, want %q", name, g, want)
		}
	}
	if _, ok := got["kafka_mirror_lag_ms"]; ok {
		t.Error("per-partition series exported with per_partition: false")
	}
}

// scrape serves one request through x.
func scrape(x *MetricsExposition, header ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("GET", "/metrics", nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	x.ServeHTTP(rec, r)
	return rec
}

// liveRegistry is a deterministic stand-in for the Go and process collectors.
func liveRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "go_goroutines", Help: "Goroutines."})
	g.Set(42)
	reg.MustRegister(g)
	return reg
}

// One scrape's response: the cached families and the live ones, plain or
// as one gzip member (decoded by a reader that refuses a second member),
// with promhttp's content type and an ETag per generation.
func TestMetricsExpositionServes(t *testing.T) {
	src := newFakeSource(syntheticSnapshots(300))
	x := &MetricsExposition{Collector: MetricsCollector{Monitor: src}, Live: liveRegistry()}
	plain := scrape(x)
	if plain.Code != 200 || plain.Header().Get("Content-Type") != "text/plain; version=0.0.4; charset=utf-8; escaping=underscores" ||
		plain.Header().Get("Content-Encoding") != "" || !strings.Contains(plain.Body.String(), "\ngo_goroutines 42\n") {
		t.Fatalf("plain: %d %v %.200s", plain.Code, plain.Header(), plain.Body)
	}
	parseText(t, plain.Body.Bytes())
	for _, ae := range []string{"gzip", "br;q=1.0, gzip;q=0.5", "*"} {
		zipped := scrape(x, "Accept-Encoding", ae)
		if zipped.Header().Get("Content-Encoding") != "gzip" || zipped.Body.Len() >= plain.Body.Len() {
			t.Fatalf("%q: %v, %d bytes", ae, zipped.Header(), zipped.Body.Len())
		}
		body := bytes.NewReader(zipped.Body.Bytes())
		zr, err := gzip.NewReader(body)
		if err != nil {
			t.Fatal(err)
		}
		zr.Multistream(false)
		b, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(b, plain.Body.Bytes()) || body.Len() != 0 {
			t.Fatalf("%q: gzip body (%v, %d bytes left after one member) differs from the plain one", ae, err, body.Len())
		}
	}
	for _, ae := range []string{"gzip;q=0", "identity", "br, *;q=0"} {
		if rec := scrape(x, "Accept-Encoding", ae); rec.Header().Get("Content-Encoding") != "" || !bytes.Equal(rec.Body.Bytes(), plain.Body.Bytes()) {
			t.Errorf("%q: %v", ae, rec.Header())
		}
	}
	etag := plain.Header().Get("ETag")
	if rec := scrape(x, "If-None-Match", etag); rec.Code != http.StatusNotModified || etag == "" {
		t.Errorf("If-None-Match %s: %d", etag, rec.Code)
	}
	// A new refresh: new figures, a new ETag, the old one no longer matches.
	next := syntheticSnapshots(300)
	*next[0].RPOMs = 777_777
	src.snaps.Store(&next)
	rec := scrape(x, "If-None-Match", etag)
	if rec.Code != 200 || rec.Header().Get("ETag") == etag || !strings.Contains(rec.Body.String(), `kafka_mirror_rpo_ms{flow="primary->dr"} 777777`) {
		t.Errorf("after a refresh: %d, ETag %s (was %s)", rec.Code, rec.Header().Get("ETag"), etag)
	}
	if n := src.builds.Load(); n != 2 {
		t.Errorf("%d builds for two snapshot generations", n)
	}
}

// Scrapes arriving while a build runs wait for it: one build per
// generation, however many scrapers.
func TestMetricsScrapesShareOneBuild(t *testing.T) {
	src := newFakeSource(syntheticSnapshots(300))
	src.gate = make(chan struct{})
	x := &MetricsExposition{Collector: MetricsCollector{Monitor: src}, Live: liveRegistry()}
	var wg sync.WaitGroup
	bodies := make([]string, 8)
	for i := range bodies {
		wg.Go(func() { bodies[i] = scrape(x).Body.String() })
	}
	deadline := time.Now().Add(10 * time.Second)
	// Every scraper has read the snapshots: each now waits for the build
	// in flight (or, late, finds it done).
	for src.reads.Load() < int32(len(bodies)) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	close(src.gate)
	wg.Wait()
	if n := src.builds.Load(); n != 1 {
		t.Errorf("%d builds for one generation", n)
	}
	for i, b := range bodies {
		if !strings.Contains(b, "kafka_mirror_rpo_ms{") {
			t.Errorf("scrape %d: %.200s", i, b)
		}
	}
}

// The cache names the snapshots it was built from without keeping them:
// an old snapshot (16 MB at 100k partitions) is freed once the monitor
// moves on, scraped again or not.
func TestMetricsCacheKeepsNoSnapshot(t *testing.T) {
	snaps := syntheticSnapshots(10)
	old := weak.Make(snaps[0])
	src := newFakeSource(snaps)
	x := &MetricsExposition{Collector: MetricsCollector{Monitor: src}, Live: liveRegistry()}
	if rec := scrape(x); rec.Code != 200 {
		t.Fatal(rec.Code)
	}
	next := syntheticSnapshots(10)
	src.snaps.Store(&next)
	snaps = nil
	for i := 0; old.Value() != nil && i < 20; i++ {
		runtime.GC()
	}
	if old.Value() != nil {
		t.Error("the metrics cache keeps a replaced snapshot alive")
	}
	runtime.KeepAlive(x) // the cache, with whatever it holds
}

// countingGatherer counts its gatherings.
type countingGatherer struct {
	prometheus.Gatherer
	n atomic.Int32
}

func (g *countingGatherer) Gather() ([]*dto.MetricFamily, error) {
	g.n.Add(1)
	return g.Gatherer.Gather()
}

// Scrapes within a second share one gathering of the live series and one
// gzipped body, so concurrent scrapers hold one compressor, not one each;
// a scrape a second later, or of a new generation, gathers again.
func TestMetricsScrapesShareTheLiveSeries(t *testing.T) {
	src := newFakeSource(syntheticSnapshots(300))
	live := &countingGatherer{Gatherer: liveRegistry()}
	x := &MetricsExposition{Collector: MetricsCollector{Monitor: src}, Live: live}
	var wg sync.WaitGroup
	bodies := make([][]byte, 16)
	for i := range bodies {
		wg.Go(func() { bodies[i] = scrape(x, "Accept-Encoding", "gzip").Body.Bytes() })
	}
	wg.Wait()
	if n := live.n.Load(); n != 1 {
		t.Errorf("%d gatherings for 16 scrapes at once", n)
	}
	for i, b := range bodies {
		if !bytes.Equal(b, bodies[0]) {
			t.Errorf("scrape %d differs from the first", i)
		}
	}
	e := x.get(httptest.NewRequest(http.MethodGet, "/metrics", nil))
	first := x.liveBody(e, time.Now())
	if again := x.liveBody(e, first.at.Add(liveMaxAge-time.Millisecond)); again != first {
		t.Error("a scrape within liveMaxAge gathered again")
	}
	if later := x.liveBody(e, first.at.Add(liveMaxAge)); later == first {
		t.Error("a scrape liveMaxAge later reused the old live series")
	}
	if earlier := x.liveBody(e, first.at.Add(-time.Second)); earlier == first {
		t.Error("a clock gone backwards reused the live series")
	}
	next := syntheticSnapshots(300)
	src.snaps.Store(&next)
	e2 := x.get(httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if l := x.liveBody(e2, time.Now()); l.e != e2 {
		t.Error("a new generation's scrape got the live series appended to the old one")
	}
}
