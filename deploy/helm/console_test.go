package helm_test

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/demo"
	"github.com/drconsole/drconsole/handlers"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/storage"
)

var update = flag.Bool("update", false, "rewrite deploy/checks/testdata/exported-metrics.txt from the collector")

const exportedMetricsFile = "../checks/testdata/exported-metrics.txt"

// exportedMetrics lists the names handlers.MetricsCollector describes, one a
// line; those with a partition label, the families /metrics leaves out for
// flows above config.PerPartitionBound partitions (or with
// metrics.per_partition: false), marked "per_partition".
func exportedMetrics(t *testing.T) string {
	t.Helper()
	ch := make(chan *prometheus.Desc, 64)
	handlers.MetricsCollector{}.Describe(ch)
	close(ch)
	nameRE := regexp.MustCompile(`fqName: "([a-z_]+)"`)
	partitionRE := regexp.MustCompile(`variableLabels: \{[^}]*\bpartition\b`)
	var lines []string
	perPartition := 0
	for d := range ch {
		if m := nameRE.FindStringSubmatch(d.String()); m != nil {
			if partitionRE.MatchString(d.String()) {
				m[1] += " per_partition"
				perPartition++
			}
			lines = append(lines, m[1])
		}
	}
	if len(lines) < 15 || perPartition == 0 {
		t.Fatalf("only %d metrics described, %d per partition: %v", len(lines), perPartition, lines)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n") + "\n"
}

// The dashboard and rule checks of deploy/checks read the exported metrics
// from a file: it must be what the collector describes.
func TestExportedMetricsFile(t *testing.T) {
	want := exportedMetrics(t)
	if *update {
		if err := os.WriteFile(exportedMetricsFile, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(exportedMetricsFile)
	if err != nil || string(got) != want {
		t.Fatalf("deploy/checks/testdata/exported-metrics.txt is not what /metrics exports (%v); run go test ./deploy/helm -run TestExportedMetricsFile -update\nwant:\n%s", err, want)
	}
}

// The rendered config loads with drconsole's own loader: the secret files
// it names are where the chart mounts them. deploy/checks keeps
// testdata/rendered-config.yaml equal to the chart's rendering with every
// optional part on.
func TestRenderedConfigLoads(t *testing.T) {
	b, err := os.ReadFile("../checks/testdata/rendered-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	dir := t.TempDir()
	secretDir := "/run/secrets/drconsole"
	os.WriteFile(filepath.Join(dir, "kafka-password"), []byte("s3cret"), 0o600)
	cfg, err := config.Parse("rendered.yaml", strings.NewReader(strings.ReplaceAll(text, secretDir, dir)))
	if err != nil {
		t.Fatalf("rendered config: %v\n%s", err, text)
	}
	if cfg.Listen != "0.0.0.0:8080" || cfg.DataDir != "/var/lib/drconsole" || cfg.Clusters["primary"].SASL.Password != "s3cret" {
		t.Errorf("rendered config: listen %s data_dir %s", cfg.Listen, cfg.DataDir)
	}
	// /metrics is behind the host check: pod IPs (the ServiceMonitor's
	// scrapes) always pass; the Service's DNS names are allowed for a
	// scrape by name.
	if !slices.Contains(cfg.Metrics.AllowedHosts, "drconsole.kafka-dr.svc") || !slices.Contains(cfg.Metrics.AllowedHosts, "drconsole.kafka-dr.svc.cluster.local") {
		t.Errorf("metrics.allowed_hosts %v lacks the Service's DNS names", cfg.Metrics.AllowedHosts)
	}
}

// TestSandboxMetricsAfterOutage writes to $DRCONSOLE_SANDBOX_METRICS the
// sandbox's /metrics, as the console serves it with its default settings,
// after its mirror stopped for three minutes (the monitor's clock moved on
// once the mirror paused). deploy/checks runs it and evaluates the design's
// alert rules on it; alone it is skipped.
func TestSandboxMetricsAfterOutage(t *testing.T) {
	out := os.Getenv("DRCONSOLE_SANDBOX_METRICS")
	if out == "" {
		t.Skip("run by deploy/checks (design_alert_rules_test.go)")
	}
	const outage = 3 * time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	sb, err := demo.Start(ctx, demo.Options{Logger: log, Seed: 28})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sb.Close)
	cfg := &config.Config{
		Clusters: map[string]*config.Cluster{"primary": {Bootstrap: sb.PrimaryBootstrap()}, "dr": {Bootstrap: sb.DRBootstrap()}},
		Flows: []*config.Flow{{Source: "primary", Target: "dr", ReplicationPolicy: "identity", OffsetSyncsLocation: "target",
			ConnectOffsetsTopic: mm2.ConnectOffsetsTopic("primary"), Topics: config.Topics{Include: demo.Topics}}},
		RefreshInterval: config.Duration(time.Second),
	}
	if err := cfg.Normalize("test"); err != nil {
		t.Fatal(err)
	}
	st, err := storage.Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	mon, err := monitor.NewMonitor(ctx, cfg, st, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mon.Close)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); mon.Run(runCtx) }()
	deadline := time.Now().Add(30 * time.Second)
	for { // MM2's positions ingested: every partition's lag known
		if s := mon.Snapshot(cfg.Flows[0].Name); s != nil && !s.At.IsZero() && s.Unknown == 0 && len(s.Partitions) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sandbox lag not known within 30 s: %+v", mon.Snapshot(cfg.Flows[0].Name))
		}
		time.Sleep(200 * time.Millisecond)
	}
	stop()
	<-done
	sb.SetMirrorRunning(false)
	time.Sleep(2 * time.Second) // the primary writes on, DR does not
	mon.Now = func() time.Time { return time.Now().Add(outage) }
	mon.Refresh(ctx)
	x := &handlers.MetricsExposition{Collector: handlers.MetricsCollector{Monitor: mon, Series: cfg.Metrics}, Live: prometheus.NewRegistry(), Log: log}
	rec := httptest.NewRecorder()
	x.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("/metrics: %d %s", rec.Code, rec.Body)
	}
	if err := os.WriteFile(out, rec.Body.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}
