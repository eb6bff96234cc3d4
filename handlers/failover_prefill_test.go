package handlers

import (
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/monitor"
)

// The plan opened from the incident view always carries a reason, whatever
// the snapshot says by the time the form is read: the incident view and
// the form read it at different moments, and a required reason left empty
// stopped the sandbox journey at Create without a word on the page.
func TestIncidentReasonAlwaysSaysWhy(t *testing.T) {
	since := time.Date(2026, 12, 6, 1, 2, 3, 0, time.UTC)
	flow := &config.Flow{Name: "primary->dr", Source: "primary", Target: "dr"}
	for _, c := range []struct {
		name string
		snap *monitor.FlowSnapshot
		want string
	}{
		{"primary down", &monitor.FlowSnapshot{Flow: flow, Source: monitor.Reachability{Checked: true, Since: since}},
			"the primary (primary) has not answered since 2026-12-06 01:02:03"},
		{"broken", &monitor.FlowSnapshot{Flow: flow, Source: monitor.Reachability{Checked: true, OK: true}, Status: monitor.StatusBroken,
			StatusSince: since, Reason: "MirrorSourceConnector FAILED"}, "BROKEN since 2026-12-06 01:02:03 UTC: MirrorSourceConnector FAILED"},
		{"over by now", &monitor.FlowSnapshot{Flow: flow, Source: monitor.Reachability{Checked: true, OK: true}, Status: monitor.StatusOK},
			"failover started from the incident view"},
		{"not watched", nil, "failover started from the incident view"},
	} {
		if got := incidentReason(c.snap, "primary->dr"); !strings.HasPrefix(got, "Incident") || !strings.Contains(got, c.want) {
			t.Errorf("%s: reason %q, want it to contain %q", c.name, got, c.want)
		}
	}
}
