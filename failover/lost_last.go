package failover

import (
	"slices"
	"sync"
)

// lostMemo keeps, per flow, the last lost-to-DR figures read from the old
// primary, so that while it cannot be read the page shows the last known
// bounds with their age instead of "unknown". Kept in memory: after a
// console restart, unreadable partitions are unknown until the primary
// answers again.
type lostMemo struct {
	mu   sync.Mutex
	last map[string]*LostToDR
}

// keep remembers the partitions of l that were read (of its failover run).
func (m *lostMemo) keep(flow string, l *LostToDR) {
	m.mu.Lock()
	defer m.mu.Unlock()
	prev := m.last[flow]
	if prev != nil && prev.Active.Run != l.Active.Run {
		prev = nil
	}
	c := &LostToDR{Active: l.Active, Recorded: l.Recorded, AtMs: l.AtMs}
	for _, p := range l.Partitions {
		switch {
		case p.Known() && p.AsOfMs == 0:
			p.AsOfMs = l.AtMs
			c.Partitions = append(c.Partitions, p)
		case prev != nil:
			if i := slices.IndexFunc(prev.Partitions, func(q LostPartition) bool { return q.TP() == p.TP() }); i >= 0 {
				c.Partitions = append(c.Partitions, prev.Partitions[i])
			}
		}
	}
	if m.last == nil {
		m.last = map[string]*LostToDR{}
	}
	m.last[flow] = c
}

// fill puts the last known figures of the same run in place of l's
// partitions the primary could not be read for, each with its age.
func (m *lostMemo) fill(flow string, l *LostToDR) {
	m.mu.Lock()
	prev := m.last[flow]
	m.mu.Unlock()
	if prev == nil || prev.Active.Run != l.Active.Run {
		return
	}
	for i := range l.Partitions {
		p := &l.Partitions[i]
		if p.Read {
			continue
		}
		j := slices.IndexFunc(prev.Partitions, func(q LostPartition) bool { return q.TP() == p.TP() })
		if j < 0 {
			continue
		}
		*p = prev.Partitions[j]
		if l.LastKnownMs == 0 || p.AsOfMs < l.LastKnownMs {
			l.LastKnownMs = p.AsOfMs
		}
	}
}
