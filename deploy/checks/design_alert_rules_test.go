package checks

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	promstorage "github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/tsdb/chunks"
	"github.com/prometheus/prometheus/util/annotations"
	"go.yaml.in/yaml/v3"
)

// designRules are the alert rules of the design the console follows,
// verbatim (/work/shared/reference/alert-rules.md), indentation included.
const designRules = `groups:
- name: kafka_mirror
  rules:
  - alert: KafkaMirrorLagHigh
    expr: kafka_mirror_lag_ms > 30000
    for: 5m
    labels:
      severity: warning
    annotations:
      summary: "MirrorMaker lag > 30s for {{ $labels.topic }}"
      description: "Current lag: {{ $value }}ms"

  - alert: KafkaMirrorLagCritical
    expr: kafka_mirror_lag_ms > 120000
    for: 2m
    labels:
      severity: critical
    annotations:
      summary: "MirrorMaker lag > 2min for {{ $labels.topic }} — RPO at risk"
`

// The design's alert rules select kafka_mirror_lag_ms by topic and
// partition: with the console's default settings they must fire on the
// sandbox's /metrics. The sandbox's mirror is paused and the monitor's
// clock set three minutes on (a three-minute outage of the mirror); the
// scrape is replayed every 15 s for ten minutes (the lag only grows while
// the mirror is paused, so its value at one moment is a lower bound), and
// each rule is evaluated as Prometheus does: firing once its expression
// has held for its for: duration.
func TestDesignAlertRulesFireOnTheSandbox(t *testing.T) {
	file, err := os.ReadFile("../design-alert-rules.yaml")
	if err != nil || !strings.HasSuffix(string(file), designRules) {
		t.Fatalf("deploy/design-alert-rules.yaml does not end with the design's rules verbatim (%v)", err)
	}
	var doc struct {
		Groups []struct {
			Rules []struct {
				Alert, Expr, For string
				Labels           map[string]string
			}
		}
	}
	if err := yaml.Unmarshal([]byte(designRules), &doc); err != nil || len(doc.Groups) != 1 || len(doc.Groups[0].Rules) != 2 {
		t.Fatalf("rules: %v %+v", err, doc)
	}
	metrics := sandboxMetricsAfterOutage(t)
	series := parseExposition(t, metrics)
	eng := promql.NewEngine(promql.EngineOpts{MaxSamples: 1_000_000, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})
	t0 := time.Unix(1_800_000_000, 0)
	q := replay(series, t0, 10*time.Minute, 15*time.Second)
	for _, r := range doc.Groups[0].Rules {
		hold, err := model.ParseDuration(r.For)
		if err != nil {
			t.Fatal(err)
		}
		firing := firingAfter(t, eng, q, r.Alert, r.Expr, time.Duration(hold), t0, 10*time.Minute)
		for _, s := range firing {
			if s.Metric.Get("topic") == "" || s.Metric.Get("partition") == "" {
				t.Errorf("%s fires on %s: no topic or partition for its summary", r.Alert, s.Metric)
			}
		}
		if len(firing) == 0 {
			t.Errorf("%s (%s for %s) never fired on the sandbox's /metrics:\n%s", r.Alert, r.Expr, r.For, lagLines(metrics))
		} else {
			t.Logf("%s fires on %d series, e.g. %s", r.Alert, len(firing), firing[0].Metric)
		}
	}
}

// firingAfter evaluates an alert rule's expr over q every 15 s from t0
// for span, as Prometheus does, and returns the series firing at the end:
// those its expression has returned for hold (its for: duration). It
// fails the test if any fires before hold has passed since t0.
func firingAfter(t *testing.T, eng *promql.Engine, q promstorage.Queryable, alert, expr string, hold time.Duration, t0 time.Time, span time.Duration) []promql.Sample {
	t.Helper()
	// held[k]: since when the expression has returned series k.
	held := map[string]time.Time{}
	var firing []promql.Sample
	for at := t0; !at.After(t0.Add(span)); at = at.Add(15 * time.Second) {
		qr, err := eng.NewInstantQuery(context.Background(), q, nil, expr, at)
		if err != nil {
			t.Fatal(err)
		}
		res := qr.Exec(context.Background())
		if res.Err != nil {
			t.Fatalf("%s: %v", alert, res.Err)
		}
		vec, _ := res.Vector()
		now := map[string]bool{}
		firing = firing[:0]
		for _, s := range vec {
			k := s.Metric.String()
			now[k] = true
			if _, ok := held[k]; !ok {
				held[k] = at
			}
			if at.Sub(held[k]) >= hold {
				firing = append(firing, s)
			}
		}
		for k := range held {
			if !now[k] {
				delete(held, k)
			}
		}
		if at.Sub(t0) < hold && len(firing) > 0 {
			t.Fatalf("%s firing %s after %s, before its for: %s", alert, firing[0].Metric, at.Sub(t0), hold)
		}
	}
	return firing
}

// sandboxMetricsAfterOutage is the sandbox's /metrics, as the console
// serves it with its default settings, after its mirror stopped for three
// minutes: deploy/helm's TestSandboxMetricsAfterOutage, run in the console's
// module, writes it.
func sandboxMetricsAfterOutage(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "metrics.txt")
	cmd := exec.Command("go", "test", "-count=1", "-run", "^TestSandboxMetricsAfterOutage$", "./deploy/helm/")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "DRCONSOLE_SANDBOX_METRICS="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test ./deploy/helm/ -run TestSandboxMetricsAfterOutage: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func lagLines(text string) string {
	var out []string
	for l := range strings.Lines(text) {
		if strings.HasPrefix(l, "kafka_mirror_lag_ms") && len(out) < 20 {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

// parseExposition reads a text exposition into labelled values.
func parseExposition(t *testing.T, text string) map[string]labeledValue {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]labeledValue{}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			b := labels.NewBuilder(labels.EmptyLabels()).Set(labels.MetricName, name)
			for _, lp := range m.GetLabel() {
				b.Set(lp.GetName(), lp.GetValue())
			}
			v := m.GetGauge().GetValue()
			if m.GetCounter() != nil {
				v = m.GetCounter().GetValue()
			}
			ls := b.Labels()
			out[ls.String()] = labeledValue{ls, v}
		}
	}
	return out
}

type labeledValue struct {
	l labels.Labels
	v float64
}

// replay is a Queryable holding every series at its value every step
// from t0 for span.
func replay(series map[string]labeledValue, t0 time.Time, span, step time.Duration) promstorage.Queryable {
	var all []promstorage.Series
	for _, s := range series {
		var samples []chunks.Sample
		for at := t0; !at.After(t0.Add(span)); at = at.Add(step) {
			samples = append(samples, fSample{at.UnixMilli(), s.v})
		}
		all = append(all, promstorage.NewListSeries(s.l, samples))
	}
	slices.SortFunc(all, func(a, b promstorage.Series) int { return labels.Compare(a.Labels(), b.Labels()) })
	return promstorage.QueryableFunc(func(int64, int64) (promstorage.Querier, error) { return listQuerier(all), nil })
}

type listQuerier []promstorage.Series

func (q listQuerier) Select(_ context.Context, _ bool, _ *promstorage.SelectHints, ms ...*labels.Matcher) promstorage.SeriesSet {
	var out []promstorage.Series
	for _, s := range q {
		if slices.IndexFunc(ms, func(m *labels.Matcher) bool { return !m.Matches(s.Labels().Get(m.Name)) }) < 0 {
			out = append(out, s)
		}
	}
	return &listSet{s: out}
}

func (listQuerier) LabelValues(context.Context, string, *promstorage.LabelHints, ...*labels.Matcher) ([]string, annotations.Annotations, error) {
	return nil, nil, nil
}

func (listQuerier) LabelNames(context.Context, *promstorage.LabelHints, ...*labels.Matcher) ([]string, annotations.Annotations, error) {
	return nil, nil, nil
}

func (listQuerier) Close() error { return nil }

type listSet struct {
	s []promstorage.Series
	i int
}

func (l *listSet) Next() bool                        { l.i++; return l.i <= len(l.s) }
func (l *listSet) At() promstorage.Series            { return l.s[l.i-1] }
func (l *listSet) Err() error                        { return nil }
func (l *listSet) Warnings() annotations.Annotations { return nil }

// fSample is a float sample.
type fSample struct {
	t int64
	f float64
}

func (s fSample) T() int64                      { return s.t }
func (s fSample) ST() int64                     { return 0 }
func (s fSample) F() float64                    { return s.f }
func (s fSample) H() *histogram.Histogram       { return nil }
func (s fSample) FH() *histogram.FloatHistogram { return nil }
func (s fSample) Type() chunkenc.ValueType      { return chunkenc.ValFloat }
func (s fSample) Copy() chunks.Sample           { return s }
