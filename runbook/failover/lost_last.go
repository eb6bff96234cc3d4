package failover

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// lostMemo keeps, per flow, the last lost-to-DR figures read from the old
// primary, so that while it cannot be read the page shows the last known
// bounds with their age instead of "unknown". They are kept in the store
// too (storage.LostLast), so a restarted console shows them while the
// primary is down: the first fill after a restart reads them back.
type lostMemo struct {
	mu    sync.Mutex
	last  map[string]*model.LostToDR
	saved map[string]time.Time // when a flow's figures were last stored
}

// lostSaveEvery bounds how often unchanged figures are stored again (for
// a newer read time); changed figures are stored at once.
const lostSaveEvery = time.Minute

// keepLost remembers the partitions of l that were read (of its failover
// run), and stores the ones read now when they changed or the stored ones
// are older than lostSaveEvery.
func (rb Book) keepLost(ctx context.Context, flow string, l *model.LostToDR) {
	m := &rb.state().lastLost
	m.mu.Lock()
	prev := m.last[flow]
	if prev != nil && prev.Active.Run != l.Active.Run {
		prev = nil
	}
	c := &model.LostToDR{Active: l.Active, Recorded: l.Recorded, AtMs: l.AtMs}
	var fresh []model.LostPartition
	changed := prev == nil
	for _, p := range l.Partitions {
		switch {
		case p.Known() && p.AsOfMs == 0:
			p.AsOfMs = l.AtMs
			c.Partitions = append(c.Partitions, p)
			fresh = append(fresh, p)
			changed = changed || !samePartitionFigures(prev, p)
		case prev != nil:
			if i := slices.IndexFunc(prev.Partitions, func(q model.LostPartition) bool { return q.TP() == p.TP() }); i >= 0 {
				c.Partitions = append(c.Partitions, prev.Partitions[i])
			}
		}
	}
	if m.last == nil {
		m.last, m.saved = map[string]*model.LostToDR{}, map[string]time.Time{}
	}
	m.last[flow] = c
	now := rb.Now()
	save := len(fresh) > 0 && (changed || now.Sub(m.saved[flow]) >= lostSaveEvery)
	if save {
		m.saved[flow] = now
	}
	m.mu.Unlock()
	if !save {
		return
	}
	rows := make([]storage.LostFigure, 0, len(fresh))
	for _, p := range fresh {
		b, err := json.Marshal(p)
		if err != nil {
			continue
		}
		rows = append(rows, storage.LostFigure{Topic: p.Topic, Partition: p.Partition, AsOfMs: p.AsOfMs, Figures: string(b)})
	}
	if err := rb.Store.SaveLostLast(context.WithoutCancel(ctx), l.Active.Run, rows); err != nil && rb.Log != nil {
		rb.Log.Error("keeping the last lost-to-DR figures", "flow", flow, "run", l.Active.Run, "err", err)
	}
}

// samePartitionFigures: prev holds p's partition with the same figures
// (its read time aside).
func samePartitionFigures(prev *model.LostToDR, p model.LostPartition) bool {
	if prev == nil {
		return false
	}
	i := slices.IndexFunc(prev.Partitions, func(q model.LostPartition) bool { return q.TP() == p.TP() })
	if i < 0 {
		return false
	}
	q := prev.Partitions[i]
	q.AsOfMs = p.AsOfMs
	return q == p
}

// fillLost puts the last known figures of the same run in place of l's
// partitions the primary could not be read for, each with its age: kept
// in memory, or, after a restart, read back from the store. A stored
// figure that cannot be decoded stays unknown.
func (rb Book) fillLost(ctx context.Context, flow string, l *model.LostToDR) {
	m := &rb.state().lastLost
	m.mu.Lock()
	prev := m.last[flow]
	m.mu.Unlock()
	if prev == nil || prev.Active.Run != l.Active.Run {
		prev = rb.storedLost(ctx, flow, l)
	}
	if prev == nil {
		return
	}
	for i := range l.Partitions {
		p := &l.Partitions[i]
		if p.Read {
			continue
		}
		j := slices.IndexFunc(prev.Partitions, func(q model.LostPartition) bool { return q.TP() == p.TP() })
		if j < 0 {
			continue
		}
		*p = prev.Partitions[j]
		if l.LastKnownMs == 0 || p.AsOfMs < l.LastKnownMs {
			l.LastKnownMs = p.AsOfMs
		}
	}
}

// storedLost reads l's run's stored figures back into the memo; nil when
// none are stored (or the store cannot be read: unknown stays unknown).
func (rb Book) storedLost(ctx context.Context, flow string, l *model.LostToDR) *model.LostToDR {
	rows, err := rb.Store.LostLast(ctx, l.Active.Run)
	if err != nil || len(rows) == 0 {
		return nil
	}
	c := &model.LostToDR{Active: l.Active, Recorded: l.Recorded}
	for _, row := range rows {
		var p model.LostPartition
		if json.Unmarshal([]byte(row.Figures), &p) != nil || p.Topic != row.Topic || p.Partition != row.Partition || !p.Known() {
			continue
		}
		p.AsOfMs = row.AsOfMs
		c.Partitions = append(c.Partitions, p)
		c.AtMs = max(c.AtMs, row.AsOfMs)
	}
	m := &rb.state().lastLost
	m.mu.Lock()
	defer m.mu.Unlock()
	if cur := m.last[flow]; cur != nil && cur.Active.Run == l.Active.Run {
		return cur // kept by a read meanwhile
	}
	if m.last == nil {
		m.last, m.saved = map[string]*model.LostToDR{}, map[string]time.Time{}
	}
	m.last[flow] = c
	return c
}
