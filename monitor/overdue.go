package monitor

import (
	"context"
	"fmt"
	"time"

	"github.com/drconsole/drconsole/model"
)

// OverdueAfter is how long a refresh may read while neither of its
// clusters answers anything before the figures it is to replace are
// marked lower bounds and the flow stops being OK: a cluster that went
// away makes the reads wait out refresh_read_timeout, and the snapshot
// published before would meanwhile read exact and OK.
const OverdueAfter = 3 * time.Second

// overdueLoop marks overdue refreshes every second until ctx is done.
func (m *Monitor) overdueLoop(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		m.markOverdue(time.Now())
	}
}

// markOverdue publishes, for each MM2 flow whose refresh has been reading
// for OverdueAfter while neither cluster answered in that time, its last
// snapshot with the figures marked lower bounds and an OK status made
// UNKNOWN (no other status changes: the refresh judges it when it ends).
// The refresh's own snapshot replaces it when the reads end. now is wall
// clock time, as the refresh's start is.
func (m *Monitor) markOverdue(now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, fm := range m.flows {
		started := fm.reading.Load()
		if fm.link != nil || started == 0 || now.Sub(time.Unix(0, started)) < OverdueAfter {
			continue
		}
		// The cluster the refresh waits on must have answered lately; the
		// other one's answers (another flow's reads, the ingester's) say
		// nothing about this read.
		waitsOn := fm.flow.Source
		if fm.waitingTarget.Load() {
			waitsOn = fm.flow.Target
		}
		if m.answers[waitsOn].Since(now.Add(-OverdueAfter)) {
			continue // reading, and answered: slow at most (late), not gone
		}
		s := fm.snap
		if s == nil || s.Bound != "" || s.At.IsZero() {
			continue
		}
		t := *s
		boundBy(&t, fmt.Sprintf("refresh reading for %s without an answer from the cluster it waits on; figures are lower bounds from the read at %s",
			now.Sub(time.Unix(0, started)).Round(time.Second), t.FiguresAt.UTC().Format("15:04:05 UTC")))
		if t.Status == model.FlowStatusOK {
			t.Status, t.Reason, t.StatusSince = model.FlowStatusUnknown, t.Bound, now
		}
		fm.snap = &t
	}
}
