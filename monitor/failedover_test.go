package monitor

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/model"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A flow marked failed over says FAILED_OVER at once and after every
// refresh, with the status its thresholds give the old direction held
// for the record; unmarked (a completed failback), it is judged again at
// once.
func TestFailedOverMarkAppliesAndLifts(t *testing.T) {
	ctx := context.Background()
	primary, pcl := newCluster(t, "primary", "events")
	dr, _ := newCluster(t, "dr", "events")
	for i := range 5 { // nothing of it in DR, no heartbeat: BROKEN
		produce(t, pcl, &kgo.Record{Topic: "events", Value: []byte{byte(i)}})
	}
	cfg := testConfig(t, primary, dr)
	m, _ := newTestMonitor(t, cfg, filepath.Join(t.TempDir(), "db"))
	flow := cfg.Flows[0].Name
	m.Refresh(ctx)
	before := m.Snapshot(flow)
	if before.Status == model.FlowStatusFailedOver || before.FailedOver != nil {
		t.Fatalf("failed over before any mark: %s", before.Status)
	}
	since := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	m.SetFailedOver(map[string]model.FailedOver{flow: {Run: 7, SinceMs: since.UnixMilli()}})
	for _, when := range []string{"at once", "after a refresh"} {
		s := m.Snapshot(flow)
		if s.Status != model.FlowStatusFailedOver || s.FailedOver == nil || s.FailedOver.Run != 7 || !s.StatusSince.Equal(since) ||
			s.FailedOver.Held != before.Status || !strings.Contains(s.Reason, "failed over by run 7") {
			t.Fatalf("%s: %s %q %+v (held %s)", when, s.Status, s.Reason, s.FailedOver, before.Status)
		}
		m.Refresh(ctx)
	}
	m.SetFailedOver(nil)
	if s := m.Snapshot(flow); s.Status != before.Status || s.FailedOver != nil || s.Reason == "" || strings.Contains(s.Reason, "failed over") {
		t.Fatalf("after the failback: %s %q", s.Status, s.Reason)
	}
	m.Refresh(ctx)
	if s := m.Snapshot(flow); s.Status == model.FlowStatusFailedOver || s.FailedOver != nil {
		t.Fatalf("after the failback and a refresh: %s", s.Status)
	}
}
