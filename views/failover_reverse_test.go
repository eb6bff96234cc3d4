package views

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/model"
)

// The reverse flow's fragment: the offsets not yet committed (the total
// over every partition, the table bounded), a partition without a
// reverse position as unknown, the heartbeat's age, and an unreadable
// flow as unknown, never as caught up.
func TestReverseFlowFragment(t *testing.T) {
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	render := func(v *model.ReverseView) string {
		var b bytes.Buffer
		if err := ReverseFlowFragment(ReverseFlowBlock{Run: 7, View: v, Now: now}).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	next := int64(90)
	hb := now.Add(-4 * time.Second)
	v := &model.ReverseView{At: now.Add(-2 * time.Second), States: map[string]string{"dr-to-primary-MirrorSourceConnector": "RUNNING"},
		Rows:   []model.ReverseRow{{Partition: "events-1", Cut: 50, DREnd: 100, Next: &next, Behind: 10}, {Partition: "events-2", Cut: 40, DREnd: 45, Behind: 5}},
		Behind: 15, Unknown: 1, Heartbeat: &hb}
	for i := range 60 {
		v.Rows = append(v.Rows, model.ReverseRow{Partition: fmt.Sprintf("events-%d", 3+i), Cut: 1, DREnd: 2, Next: &next})
	}
	got := render(v)
	for _, want := range []string{"15 offset(s) of DR not yet committed", "in 2 of 62 partition(s)", "1 partition(s) with no committed reverse position",
		"emitted in DR 4 s ago", "<td><code>events-1</code></td>", "unknown", "and 12 more partition(s)"} {
		if !strings.Contains(got, want) {
			t.Errorf("fragment lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Every record written in DR") {
		t.Error("a reverse flow behind is shown as caught up")
	}
	if got := render(&model.ReverseView{At: now, Err: "reading DR's log ends: dial tcp: refused"}); !strings.Contains(got, "Unknown, read") || strings.Contains(got, "Every record") {
		t.Errorf("an unreadable reverse flow:\n%s", got)
	}
	if got := render(&model.ReverseView{At: now, HeartbeatErr: "no heartbeat on the primary's dr.heartbeats yet"}); !strings.Contains(got, "Every record written in DR") || !strings.Contains(got, "No heartbeat carried") {
		t.Errorf("a caught-up reverse flow without a heartbeat:\n%s", got)
	}
}
