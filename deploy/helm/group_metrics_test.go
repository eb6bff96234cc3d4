package helm_test

import (
	"bytes"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/handlers"
	"github.com/drconsole/drconsole/model"
)

const groupMetricsFile = "../checks/testdata/group-metrics.txt"

// groupSource is one refresh of a flow with the consumer groups the group
// alert rules are tested on (deploy/checks' TestGroupAlertRules).
type groupSource struct{}

func (groupSource) Thresholds() config.Thresholds { return config.Thresholds{} }

func (groupSource) Snapshots() []*flowstate.FlowSnapshot {
	at := time.UnixMilli(1_800_000_000_000)
	n := func(v int64) *int64 { return &v }
	gs := &model.FlowGroups{At: at, Cap: config.GroupsPerFlow, Groups: []model.GroupQuality{
		// critical, 19 > 10: over its objective
		{Group: "billing", Configured: true, Critical: true, Objective: 10, Reread: n(19), OffsetsAt: at},
		// critical, 50 <= 100: within
		{Group: "payments", Configured: true, Critical: true, Objective: 100, Reread: n(50), OffsetsAt: at},
		// over its objective but not critical
		{Group: "analytics", Configured: true, Objective: 5, Reread: n(30), OffsetsAt: at},
		// critical, a partition untranslated: unknown
		{Group: "ledger", Configured: true, Critical: true, Objective: 10, Untranslated: 1, OffsetsAt: at},
		// unknown but not critical
		{Group: "orders", Untranslated: 2, OffsetsAt: at},
	}}
	model.WorstFirst(gs.Groups)
	return []*flowstate.FlowSnapshot{{Flow: &config.Flow{Name: "primary->dr", Kind: config.FlowMM2}, At: at, Status: model.FlowStatusOK, Groups: gs}}
}

// The group alert rules' test input is what the collector exports for
// those groups.
func TestGroupMetricsFile(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(handlers.MetricsCollector{Monitor: groupSource{}})
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("collector: %d %s", rec.Code, rec.Body)
	}
	want := rec.Body.Bytes()
	if *update {
		if err := os.WriteFile(groupMetricsFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := os.ReadFile(groupMetricsFile); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("deploy/checks/testdata/group-metrics.txt is not what /metrics exports for these groups (%v); run go test ./deploy/helm -run TestGroupMetricsFile -update\nwant:\n%s", err, want)
	}
}
