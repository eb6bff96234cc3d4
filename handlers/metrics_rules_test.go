package handlers

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v3"
)

// The shipped alerting rules parse, and every kafka_mirror_* metric they
// use is one the collector exports (a renamed metric would otherwise
// silence an alert without any error).
func TestPrometheusRulesUseExportedMetrics(t *testing.T) {
	b, err := os.ReadFile("../deploy/prometheus-rules.yaml")
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
	ch := make(chan *prometheus.Desc, 32)
	MetricsCollector{}.Describe(ch)
	close(ch)
	nameRE := regexp.MustCompile(`fqName: "([a-z_]+)"`)
	var exported []string
	for d := range ch {
		if m := nameRE.FindStringSubmatch(d.String()); m != nil {
			exported = append(exported, m[1])
		}
	}
	used := regexp.MustCompile(`kafka_mirror_[a-z_]+`)
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			n++
			if r.Alert == "" || strings.TrimSpace(r.Expr) == "" {
				t.Errorf("rule %+v: alert and expr required", r)
			}
			for _, m := range used.FindAllString(r.Expr, -1) {
				if !slices.Contains(exported, m) {
					t.Errorf("alert %s uses %s, which is not exported (exported: %v)", r.Alert, m, exported)
				}
			}
		}
	}
	if n < 6 || len(exported) < 9 {
		t.Fatalf("%d rules, %d exported metrics", n, len(exported))
	}
}
