package monitor

import (
	"maps"
	"time"

	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/model"
)

// A flow after a completed failover: DR is active, the mirror from the old
// primary is stopped on purpose, and what the old primary holds past the
// cut was written after the failover, not data at risk. The runbook says
// which flows are failed over (SetFailedOver, from its records of completed
// runs); the monitor goes on reading the old direction, and its snapshot
// says FAILED_OVER instead of judging a lag nobody is meant to close.
// A completed failback (the primary active again) takes the mark away: the
// flow returns to normal watching.

// SetFailedOver marks exactly the flows of marks (by name) as failed over;
// every other flow is watched normally. The snapshots published change at
// once, not at the next refresh.
func (m *Monitor) SetFailedOver(marks map[string]model.FailedOver) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.failedOver = maps.Clone(marks)
	for _, fm := range m.flows {
		if fm.snap == nil {
			continue
		}
		f, marked := m.failedOver[fm.flow.Name]
		if was := fm.snap.FailedOver; (!marked && was == nil) || (marked && was != nil && was.Run == f.Run && was.SinceMs == f.SinceMs) {
			continue
		}
		// A copy: readers hold the published snapshot.
		s := *fm.snap
		if held := fm.snap.FailedOver; held != nil { // back to what the thresholds say
			// The tracker belongs to the refresh goroutine: its verdict
			// comes from the snapshot, and never OK on lower bounds.
			s.Status, s.Reason, s.StatusSince, s.FailedOver = held.Held, held.HeldReason, held.HeldSince, nil
			if s.Status == model.FlowStatusOK && s.Bound != "" {
				s.Status, s.Reason = model.FlowStatusUnknown, s.Bound
			}
		}
		m.applyFailedOverLocked(&s)
		fm.snap = &s
	}
}

// applyFailedOver marks s failed over when its flow is (m.mu not held).
func (m *Monitor) applyFailedOver(s *flowstate.FlowSnapshot) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	m.applyFailedOverLocked(s)
}

func (m *Monitor) applyFailedOverLocked(s *flowstate.FlowSnapshot) {
	f, ok := m.failedOver[s.Flow.Name]
	if !ok {
		return
	}
	f.Held, f.HeldReason, f.HeldSince = s.Status, s.Reason, s.StatusSince
	s.FailedOver = &f
	s.Status, s.Reason, s.StatusSince = model.FlowStatusFailedOver, f.Reason(), time.UnixMilli(f.SinceMs)
}
