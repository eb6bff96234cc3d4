package handlers

import (
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/model"
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
		snap *flowstate.FlowSnapshot
		want string
	}{
		{"primary down", &flowstate.FlowSnapshot{Flow: flow, Source: model.Reachability{Checked: true, Since: since}},
			"the primary (primary) has not answered since 2026-12-06 01:02:03"},
		{"broken", &flowstate.FlowSnapshot{Flow: flow, Source: model.Reachability{Checked: true, OK: true}, Status: model.FlowStatusBroken,
			StatusSince: since, Reason: "MirrorSourceConnector FAILED"}, "BROKEN since 2026-12-06 01:02:03 UTC: MirrorSourceConnector FAILED"},
		{"over by now", &flowstate.FlowSnapshot{Flow: flow, Source: model.Reachability{Checked: true, OK: true}, Status: model.FlowStatusOK},
			"failover started from the incident view"},
		{"not watched", nil, "failover started from the incident view"},
	} {
		if got := incidentReason(c.snap, "primary->dr"); !strings.HasPrefix(got, "Incident") || !strings.Contains(got, c.want) {
			t.Errorf("%s: reason %q, want it to contain %q", c.name, got, c.want)
		}
	}
}
