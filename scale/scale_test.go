package scale

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain lets the rig start this test binary as its console.
func TestMain(m *testing.M) {
	ChildMain()
	os.Exit(m.Run())
}

// TestSmoke runs the whole rig at a tiny N for a few seconds: the estate
// is written and ingested, the console serves every endpoint to the
// signed-in load generator, memory, CPU and refreshes are observed, and
// the table has a figure in every row. It keeps `make scale` working; it
// measures nothing, so it runs beside TestSoakSmoke (each rig has its own
// clusters, console process and ports).
func TestSmoke(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts two clusters and a console")
	}
	o := Options{Partitions: []int{100}, PerTopic: 30, SyncsPerPart: 3, Checkpoints: true, Concurrency: []int{2},
		PhaseDuration: 300 * time.Millisecond, Rounds: 1, RefreshInterval: time.Second, RPOHistory: 10 * time.Minute,
		PartHistory: 2 * time.Minute, WorkDir: t.TempDir(), SetupTimeout: time.Minute, ProfileDir: t.TempDir()}
	rs, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 {
		t.Fatalf("%d results", len(rs))
	}
	r := rs[0]
	if len(r.Shape.topics()) != 4 || r.Shape.partitionsOf(3) != 10 {
		t.Errorf("shape: %d topics, last has %d partitions", len(r.Shape.topics()), r.Shape.partitionsOf(3))
	}
	if r.Seen.Topics != 4 || r.Seen.Unknown != 0 || r.Seen.LagMessages != r.Shape.expectedLag() || r.Seen.LagMessages == 0 || r.Seen.Heartbeat < 0 {
		t.Errorf("the console saw %+v", r.Seen)
	}
	for _, ph := range r.Rounds[0] {
		if ph.Requests == 0 || ph.Errors != 0 || ph.Bytes == 0 || ph.P99 < ph.P50 {
			t.Errorf("phase %+v", ph)
		}
	}
	if len(r.Rounds[0]) != 5 {
		t.Errorf("%d phases, want one scraper and 4 endpoints", len(r.Rounds[0]))
	}
	if r.RSSIdle <= 0 || r.HWM < r.RSSIdle || len(r.RSSLoad) == 0 {
		t.Errorf("memory: idle %d KiB, peak %d KiB, %d samples", r.RSSIdle, r.HWM, len(r.RSSLoad))
	}
	if r.Metrics.Raw <= r.Metrics.Gzip || r.Metrics.Gzip == 0 {
		t.Errorf("/metrics raw %d B, gzip %d B", r.Metrics.Raw, r.Metrics.Gzip)
	}
	if len(r.Refreshes) == 0 {
		t.Error("no refresh recorded during the load phases")
	}
	if len(r.Profiles) != 2 {
		t.Errorf("profiles: %v", r.Profiles)
	}
	for _, p := range r.Profiles {
		if fi, err := os.Stat(p); err != nil || fi.Size() == 0 {
			t.Errorf("profile %s: %v", p, err)
		}
	}
	if r.LogErrors != 0 {
		t.Errorf("%d ERROR lines in the console's log", r.LogErrors)
	}
	var b strings.Builder
	Report(&b, o, rs)
	if strings.Contains(b.String(), "?") || !strings.Contains(b.String(), "| flow req/s, p50 / p99, server p99 (c=2) |") {
		t.Errorf("report:\n%s", b.String())
	}
	t.Logf("\n%s", b.String())
}

// TestSoakSmoke runs a soak for a few seconds at a tiny N: the churn's
// syncs reach the console's database, the tab and the scraper are
// answered, refreshes and RSS are recorded and the report has its lines.
func TestSoakSmoke(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts two clusters and a console")
	}
	o := SoakOptions{Options: Options{Partitions: []int{100}, PerTopic: 30, SyncsPerPart: 3, Checkpoints: true,
		RefreshInterval: time.Second, RPOHistory: 10 * time.Minute, WorkDir: t.TempDir(), SetupTimeout: time.Minute, ProfileDir: t.TempDir()},
		Duration: 20 * time.Second, ChurnPerSecond: 50, SampleEvery: time.Second}
	r, err := Soak(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if r.SyncsWritten == 0 || r.SyncsStored != r.SyncsWritten {
		t.Errorf("churn wrote %d syncs, the console stored %d", r.SyncsWritten, r.SyncsStored)
	}
	if r.Tab == 0 || r.TabErrs != 0 || r.Scrapes == 0 || r.ScrapeE != 0 {
		t.Errorf("tab %d/%d errors, scrapes %d/%d errors", r.Tab, r.TabErrs, r.Scrapes, r.ScrapeE)
	}
	if len(r.Refreshes) < 5 || len(r.RSS) < 10 || r.HWM == 0 {
		t.Errorf("%d refreshes, %d RSS samples, HWM %d", len(r.Refreshes), len(r.RSS), r.HWM)
	}
	for _, when := range []string{"start", "end"} {
		if fi, err := os.Stat(filepath.Join(o.ProfileDir, "soak-n100-heap-"+when+".pprof")); err != nil || fi.Size() == 0 {
			t.Errorf("heap profile at the %s: %v", when, err)
		}
	}
	var b strings.Builder
	SoakReport(&b, o, r)
	for _, want := range []string{"RSS: median of the first fifth", "refreshes missed", "stored by the console", "ERROR lines"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

// WindowDrift compares the second hour's median RSS with the last hour's
// in a soak of three hours or more, quarters in a shorter one, and
// declines one too short to tell.
func TestWindowDrift(t *testing.T) {
	every := 10 * time.Minute // 6 samples an hour
	r := SoakResult{RSS: []int64{900, 100, 100, 100, 100, 100, 100, 110, 120, 110, 110, 110, 110, 130, 130, 130, 140, 130, 130}}
	window, second, last, ok := r.WindowDrift(every)
	if !ok || window != time.Hour || second != 110 || last != 130 {
		t.Errorf("window %s: second %d, last %d, ok %v; want 1h0m0s, 110, 130, true", window, second, last, ok)
	}
	// 17 samples (2 h 50 min): quarters of 4 samples, the second one
	// being samples 4-7 and the last 13-16.
	window, second, last, ok = (SoakResult{RSS: r.RSS[:17]}).WindowDrift(every)
	if !ok || window != 40*time.Minute || second != 100 || last != 130 {
		t.Errorf("short soak: window %s, second %d, last %d, ok %v; want 40m0s, 100, 130, true", window, second, last, ok)
	}
	if _, _, _, ok := (SoakResult{RSS: r.RSS[:15]}).WindowDrift(every); ok {
		t.Error("15 samples: quarters of 3 samples, want no figure")
	}
}
