package views

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/model"
)

func renderIncidents(t *testing.T, s *FlowSnapshot, now time.Time, canOperate bool) string {
	t.Helper()
	var b strings.Builder
	if err := Incidents([]FlowCard{{Snap: s}}, now, canOperate).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// With the primary down the overview leads with the incident: since when,
// the last heartbeat, the data at risk as "≥" (producers may have written
// after the last read, whatever the snapshot's own bound says) with its
// age, what DR holds, and the way to a failover for operators only.
func TestIncidentLeadsWhenThePrimaryIsDown(t *testing.T) {
	now := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	rpo, lag, end0, end1 := int64(4200), int64(37), int64(1000), int64(234)
	hb := 95 * time.Second
	s := &FlowSnapshot{Flow: &FlowConfig{Name: "primary->dr", Source: "primary", Target: "dr"}, At: now,
		Topics: FlowTopics{OffsetSyncs: "mm2-offset-syncs.dr.internal"},
		Source: Reachability{Checked: true, OK: false, Since: now.Add(-90 * time.Second), LastOK: now.Add(-91 * time.Second), Err: "dial tcp: connection refused"},
		Target: Reachability{Checked: true, OK: true, Since: now.Add(-time.Hour), LastOK: now},
		Status: model.FlowStatusCritical, RPOMs: &rpo, TotalLagMessages: &lag, HeartbeatAge: &hb,
		FiguresAt: now.Add(-91 * time.Second),
		Ingest:    []model.IngestStats{{Topic: "mm2-offset-syncs.dr.internal", LastRecordAt: now.Add(-92 * time.Second)}},
		Partitions: []model.PartitionLag{{Topic: model.Intern("events"), Partition: 0, TargetEnd: model.Known(end0)}, {Topic: model.Intern("events"), Partition: 1, TargetEnd: model.Known(end1)},
			{Topic: model.Intern("events"), Partition: 2}}}
	page := renderIncidents(t, s, now, true)
	for _, want := range []string{
		`data-testid="incident"`, "the primary (primary) does not answer",
		"Primary unreachable since", "2026-12-01 07:58:30 UTC (1 m 30 s ago)",
		"Last replicated heartbeat", "2026-12-01 07:58:25 UTC",
		"Newest offset sync read", "2026-12-01 07:58:28 UTC",
		"≥ 4 s (≥ 37 offsets not in DR)", "from a read 1 m 31 s ago",
		"2 partition(s), their end offsets totalling 1,234; the end of 1 partition(s) unknown",
		`href="/failover?flow=primary-%3Edr&amp;from=incident#plan-form"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the incident lacks %q:\n%s", want, page)
		}
	}
	if page := renderIncidents(t, s, now, false); strings.Contains(page, "from=incident") || !strings.Contains(page, "An operator can start a failover") {
		t.Errorf("a viewer is offered the failover:\n%s", page)
	}
	// No lag figure: unknown, never a number.
	s.RPOMs, s.TotalLagMessages = nil, nil
	if page := renderIncidents(t, s, now, true); !strings.Contains(page, "unknown: the console has no lag figure") {
		t.Errorf("no figure, not unknown:\n%s", page)
	}
	// A healthy flow, and a flow already failed over, lead nothing.
	s.Source = s.Target
	if page := renderIncidents(t, s, now, true); strings.Contains(page, "incident") {
		t.Errorf("a healthy flow leads as an incident:\n%s", page)
	}
	s.Status = model.FlowStatusBroken
	s.StatusSince = now.Add(-time.Minute)
	s.Reason = "no replicated heartbeat for 60 s"
	if page := renderIncidents(t, s, now, true); !strings.Contains(page, "replication is broken") || !strings.Contains(page, "BROKEN since") {
		t.Errorf("a BROKEN flow does not lead:\n%s", page)
	}
	// BROKEN while the primary's last check still passed (the sandbox's
	// mirror fails before the console's next read of the primary): the
	// last read's 0 is a floor, not "nothing at risk".
	zero := int64(0)
	s.RPOMs, s.TotalLagMessages = &zero, &zero
	if page := renderIncidents(t, s, now, true); !strings.Contains(page, "≥ 0 s (≥ 0 offsets not in DR)") {
		t.Errorf("a BROKEN flow's last 0 reads as a figure, not a floor:\n%s", page)
	}
	s.FailedOver = &model.FailedOver{Run: 3}
	if page := renderIncidents(t, s, now, true); strings.Contains(page, "incident") {
		t.Errorf("a failed-over flow leads as an incident:\n%s", page)
	}
}
