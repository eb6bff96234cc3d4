package checks

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql"
	"go.yaml.in/yaml/v3"
)

// The shipped group rules fire for exactly the groups they promise, on
// what /metrics exports for a flow's groups (testdata/group-metrics.txt,
// which deploy/helm keeps equal to the collector's output): a critical
// group over its objective (not one within it, nor a non-critical one
// over), and a critical group whose bound is unknown (fail closed), each
// only once its expression has held for its for: duration.
func TestGroupAlertRules(t *testing.T) {
	b, err := os.ReadFile("../prometheus-rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Groups []struct {
			Rules []struct {
				Alert, Expr, For string
				Labels           map[string]string
			}
		}
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile("testdata/group-metrics.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"KafkaMirrorGroupReprocessOverObjective": {"billing"},
		"KafkaMirrorGroupReprocessUnknown":       {"ledger"},
	}
	eng := promql.NewEngine(promql.EngineOpts{MaxSamples: 100_000, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})
	t0 := time.Unix(1_800_000_000, 0)
	q := replay(parseExposition(t, string(text)), t0, 30*time.Minute, 15*time.Second)
	found := 0
	for _, g := range doc.Groups {
		for _, r := range g.Rules {
			groups, ok := want[r.Alert]
			if !ok {
				continue
			}
			found++
			hold, err := model.ParseDuration(r.For)
			if err != nil || hold <= 0 || r.Labels["severity"] == "" {
				t.Fatalf("%s: for %q (%v), labels %v", r.Alert, r.For, err, r.Labels)
			}
			var firing []string
			for _, s := range firingAfter(t, eng, q, r.Alert, r.Expr, time.Duration(hold), t0, 30*time.Minute) {
				if s.Metric.Get("group") == "" || s.Metric.Get("flow") == "" {
					t.Fatalf("%s returns %s: no flow or group for its summary", r.Alert, s.Metric)
				}
				firing = append(firing, s.Metric.Get("group"))
			}
			slices.Sort(firing)
			if !slices.Equal(firing, groups) {
				t.Errorf("%s fires on %v, want %v", r.Alert, firing, groups)
			}
		}
	}
	if found != len(want) {
		t.Fatalf("%d of the %d group rules in deploy/prometheus-rules.yaml", found, len(want))
	}
}
