package checks

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"
)

// exportedMetrics are the names /metrics exports and, among them, the
// families it leaves out for flows above config.PerPartitionBound partitions
// (or with metrics.per_partition: false): testdata/exported-metrics.txt, which
// deploy/helm keeps equal to what the console's collector describes.
func exportedMetrics(t *testing.T) (names, perPartitionOnly []string) {
	t.Helper()
	b, err := os.ReadFile("testdata/exported-metrics.txt")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		name, mark, _ := strings.Cut(strings.TrimSpace(line), " ")
		names = append(names, name)
		if mark == "per_partition" {
			perPartitionOnly = append(perPartitionOnly, name)
		}
	}
	if len(names) < 15 || len(perPartitionOnly) == 0 {
		t.Fatalf("only %d metrics described, %d per partition: %v", len(names), len(perPartitionOnly), names)
	}
	return names, perPartitionOnly
}

// grafanaVars stands in for the dashboard's variables so its queries parse
// as Prometheus would receive them.
var grafanaVars = strings.NewReplacer("$__range", "1h", "$__rate_interval", "1m", "$flow", ".*", "$topic", ".*")

// checkQuery parses expr with Prometheus's own PromQL parser, reports the
// metric names it selects that /metrics does not export (Prometheus's own
// `up` aside), and returns the names it selects.
func checkQuery(t *testing.T, where, expr string, exported []string) []string {
	t.Helper()
	e, err := parser.NewParser(parser.Options{}).ParseExpr(grafanaVars.Replace(expr))
	if err != nil {
		t.Errorf("%s: %q does not parse: %v", where, expr, err)
		return nil
	}
	var selected []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			selected = append(selected, vs.Name)
			if vs.Name != "up" && !slices.Contains(exported, vs.Name) {
				t.Errorf("%s: %q selects %s, which /metrics does not export", where, expr, vs.Name)
			}
		}
		return nil
	})
	if len(selected) == 0 {
		t.Errorf("%s: %q selects no metric", where, expr)
	}
	return selected
}

// needsPerPartition names the per-partition-only families among names.
func needsPerPartition(names, perPartitionOnly []string) []string {
	var out []string
	for _, n := range names {
		if slices.Contains(perPartitionOnly, n) {
			out = append(out, n)
		}
	}
	return out
}

// Every panel query of the Grafana dashboard parses and selects only
// metrics the console exports: a renamed metric would otherwise leave an
// empty panel nobody notices until the day it is needed.
func TestGrafanaDashboardQueriesUseExportedMetrics(t *testing.T) {
	b, err := os.ReadFile("../grafana/drconsole.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		UID        string `json:"uid"`
		Templating struct {
			List []struct {
				Name, Type string
				Query      any `json:"query"`
			} `json:"list"`
		} `json:"templating"`
		Panels []struct {
			Title       string `json:"title"`
			Description string `json:"description"`
			Targets     []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	exported, perPartitionOnly := exportedMetrics(t)
	queries := 0
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			queries++
			// Per-partition series exist only with the setting: a panel
			// that needs them says so.
			if pp := needsPerPartition(checkQuery(t, "panel "+p.Title, tg.Expr, exported), perPartitionOnly); pp != nil &&
				!strings.Contains(p.Title+p.Description, "per_partition") {
				t.Errorf("panel %q selects %v, exported only with metrics.per_partition, and does not say so", p.Title, pp)
			}
		}
	}
	// Variable queries: label_values(SELECTOR, label).
	labelValues := regexp.MustCompile(`^label_values\((.+), *[a-z_]+\)$`)
	for _, v := range dash.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(string)
		m := labelValues.FindStringSubmatch(q)
		if m == nil {
			t.Errorf("variable %s: query %q is not label_values(selector, label)", v.Name, q)
			continue
		}
		if pp := needsPerPartition(checkQuery(t, "variable "+v.Name, m[1], exported), perPartitionOnly); pp != nil {
			t.Errorf("variable %s selects %v, empty without metrics.per_partition", v.Name, pp)
		}
	}
	// The panels the README promises.
	for _, want := range []string{"kafka_mirror_rpo_ms", "kafka_mirror_rpo_threshold_ms", "kafka_mirror_lag_ms", "kafka_mirror_heartbeat_age_ms",
		"kafka_mirror_topic_lag_ms", "kafka_mirror_topic_lag_messages",
		"kafka_mirror_unknown_partitions", "kafka_mirror_data_lost_partitions", "kafka_mirror_cluster_up", "drconsole_failover_runs"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the dashboard shows no %s", want)
		}
	}
	if dash.UID == "" || queries < 12 {
		t.Fatalf("uid %q, %d queries", dash.UID, queries)
	}
}

// The shipped alerting rules parse with Prometheus's parser, and every
// metric they use is one the collector exports (a renamed metric would
// otherwise silence an alert without any error), with or without
// metrics.per_partition.
func TestPrometheusRulesUseExportedMetrics(t *testing.T) {
	b, err := os.ReadFile("../prometheus-rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &rules); err != nil {
		t.Fatal(err)
	}
	exported, perPartitionOnly := exportedMetrics(t)
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			n++
			if r.Alert == "" || strings.TrimSpace(r.Expr) == "" {
				t.Errorf("rule %+v: alert and expr required", r)
				continue
			}
			if pp := needsPerPartition(checkQuery(t, "alert "+r.Alert, r.Expr, exported), perPartitionOnly); pp != nil {
				t.Errorf("alert %s selects %v: silent without metrics.per_partition", r.Alert, pp)
			}
		}
	}
	if n < 6 {
		t.Fatalf("%d rules", n)
	}
}
