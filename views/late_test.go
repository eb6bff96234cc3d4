package views

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/model"
)

// A late refresh reads as late, with how old its figures are, on the flow
// page and the overview card: never as an unreachable cluster.
func TestLateRefreshShownAsLate(t *testing.T) {
	now := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	lag := int64(5)
	ok := Reachability{Checked: true, OK: true, Since: now.Add(-time.Hour), LastOK: now}
	s := &FlowSnapshot{Flow: &FlowConfig{Name: "primary->dr", Source: "primary", Target: "dr"}, At: now,
		Source: ok, Target: ok, Status: model.FlowStatusUnknown, Reason: "refresh late (12 s)",
		Partitions: []model.PartitionLag{{Topic: model.Intern("events"), LagMessages: model.Known(lag), AsOf: model.StampOf(now.Add(-12 * time.Second))}}, FiguresStale: true,
		Late: &model.LateRefresh{Side: "source", Timeout: 10 * time.Second, Since: now.Add(-7 * time.Second), FiguresAt: now.Add(-12 * time.Second),
			Err: "listing end offsets: context deadline exceeded"}}
	var flow, card strings.Builder
	if err := flowSummary(s, now).Render(context.Background(), &flow); err != nil {
		t.Fatal(err)
	}
	if err := flowCard(FlowCard{Snap: s}, now, time.Hour).Render(context.Background(), &card); err != nil {
		t.Fatal(err)
	}
	for where, page := range map[string]string{"flow page": flow.String(), "overview card": card.String()} {
		if !strings.Contains(page, `data-testid="refresh-late"`) || !strings.Contains(page, "refresh late (12 s)") ||
			!strings.Contains(page, "figures stale") {
			t.Errorf("%s does not say the refresh is late:\n%s", where, page)
		}
		if strings.Contains(page, "UNREACHABLE") {
			t.Errorf("%s shows a late refresh as an unreachable cluster:\n%s", where, page)
		}
	}
	s.Late, s.Reason = nil, "within thresholds"
	flow.Reset()
	if err := flowSummary(s, now).Render(context.Background(), &flow); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(flow.String(), "refresh late") {
		t.Errorf("a refresh on time shown late:\n%s", flow.String())
	}
}
