package config

import (
	"slices"
	"strings"
	"testing"
)

// metrics.allowed_hosts holds bare host names: a URL or a host:port would
// never match a Host header, and the scrape would fail with 421 instead.
func TestMetricsAllowedHosts(t *testing.T) {
	c, err := Parse("ok.yaml", strings.NewReader(minimal+"metrics: {allowed_hosts: [drconsole.kafka-dr.svc]}\n"))
	if err != nil || !slices.Equal(c.Metrics.AllowedHosts, []string{"drconsole.kafka-dr.svc"}) {
		t.Fatalf("allowed_hosts: %v %v", c.Metrics.AllowedHosts, err)
	}
	for _, bad := range []string{"http://drconsole:8080", "drconsole:8080", `""`} {
		_, err := Parse("bad.yaml", strings.NewReader(minimal+"metrics: {allowed_hosts: ["+bad+"]}\n"))
		if err == nil || !strings.Contains(err.Error(), "metrics.allowed_hosts[0]") {
			t.Errorf("allowed_hosts [%s]: %v, want refused", bad, err)
		}
	}
}
