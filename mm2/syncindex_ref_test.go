package mm2

// The REFERENCE copy of the offset-sync index as it was before issue 17
// (plain slices of 40-byte entries): the compact index must answer every
// query exactly as this does on the same inputs (syncindex_compare_test.go).
// Test code only; the one allowed twin of syncindex.go, kept as it was.

import (
	"slices"
	"sort"
	"sync"

	"github.com/drconsole/drconsole/model"
)

// refSyncIndex is a flow's whole offset-sync history in memory, per partition
// in MM2's write order. SQLite stores syncs in arrival order (append-only,
// fast); this index answers per-partition questions (latest sync, history,
// translation) without scanning the table.
type refSyncIndex struct {
	mu    sync.RWMutex
	parts map[model.TP]*refHistory
	n     int
}

// history is one partition's syncs; start is the index of the newest
// upstream rewind, where translation's usable history begins.
type refHistory struct {
	syncs []refEntry
	start int
	// floor is where the source log's current incarnation begins: syncs
	// below it describe a log that was deleted (see Restart).
	floor int
	// lateAt is the newest sync MM2 wrote late (writtenLate), 0: none.
	lateAt int
}

// refEntry is a stored sync without its partition (the map key holds it):
// 40 bytes a sync, so millions fit.
type refEntry struct {
	Upstream, Downstream, LogOffset, RecordMs int64
	Incarnation                               int64 // of the offset-syncs topic
}

func (e refEntry) key() model.SyncKey {
	return model.SyncKey{Incarnation: e.Incarnation, LogOffset: e.LogOffset}
}

func (e refEntry) pair() (int64, int64) { return e.Upstream, e.Downstream }

func (e refEntry) sync(tp model.TP) model.OffsetSync {
	return model.OffsetSync{Topic: tp.Topic, Partition: tp.Partition, Upstream: e.Upstream, Downstream: e.Downstream,
		LogOffset: e.LogOffset, RecordMs: e.RecordMs, Incarnation: e.Incarnation}
}

// newRefSyncIndex returns an empty index.
func newRefSyncIndex() *refSyncIndex { return &refSyncIndex{parts: map[model.TP]*refHistory{}} }

// AddFrom adds every sync each passes to add, holding the lock throughout so
// a reader never sees the index half loaded. each is typically a walk over
// the stored syncs (monitor.LoadrefSyncIndex); mm2 itself knows no storage.
func (x *refSyncIndex) AddFrom(each func(add func(model.OffsetSync) error) error) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return each(func(s model.OffsetSync) error {
		x.addLocked(s)
		return nil
	})
}

// Add appends syncs; ones at or before a partition's newest (incarnation,
// log offset) are already known and skipped. A new incarnation of the
// offset-syncs topic restarts its log offsets at 0, so comparing log
// offsets alone would drop most of its syncs.
func (x *refSyncIndex) Add(syncs []model.OffsetSync) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, s := range syncs {
		x.addLocked(s)
	}
}

func (x *refSyncIndex) addLocked(s model.OffsetSync) {
	tp := model.TP{Topic: s.Topic, Partition: s.Partition}
	h := x.parts[tp]
	if h == nil {
		h = &refHistory{}
		x.parts[tp] = h
	}
	if n := len(h.syncs); n > 0 {
		last := h.syncs[n-1]
		if !last.key().Before(s.Key()) {
			return
		}
		if s.Upstream < last.Upstream {
			if writtenLate(h.syncs[h.start:], refEntry.pair, s.Upstream, s.Downstream) {
				h.lateAt = n
			} else {
				h.start = n
			}
		}
	}
	h.syncs = append(h.syncs, refEntry{s.Upstream, s.Downstream, s.LogOffset, s.RecordMs, s.Incarnation})
	x.n++
}

// Translate maps an upstream next-to-read offset of tp to DR with MM2's
// rule over the partition's whole history.
func (x *refSyncIndex) Translate(tp model.TP, upstream int64) Translation {
	x.mu.RLock()
	defer x.mu.RUnlock()
	h := x.parts[tp]
	if h == nil {
		return Translation{Method: MethodUnknown}
	}
	if h.start == len(h.syncs) {
		return Translation{Method: MethodUnknown} // restarted log, no sync of it yet
	}
	return translateIn(h.syncs, refEntry.pair, h.start, h.lateAt, upstream)
}

// Restart starts a new history for tp: its source log restarted (topic
// deleted and recreated), so none of the syncs held so far may translate
// offsets of the new log. Only syncs added afterwards are used. Held in
// memory: after a console restart an upstream rewind in the new syncs is
// what separates the histories again.
func (x *refSyncIndex) Restart(tp model.TP) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if h := x.parts[tp]; h != nil {
		h.floor, h.start = len(h.syncs), len(h.syncs)
	}
}

// Partitions lists the partitions with syncs.
func (x *refSyncIndex) Partitions() []model.TP {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := make([]model.TP, 0, len(x.parts))
	for tp := range x.parts {
		out = append(out, tp)
	}
	return out
}

// Len is the number of syncs held.
func (x *refSyncIndex) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.n
}

// Latest returns the newest sync of every partition.
func (x *refSyncIndex) Latest() map[model.TP]model.OffsetSync {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := make(map[model.TP]model.OffsetSync, len(x.parts))
	for tp, h := range x.parts {
		out[tp] = h.syncs[len(h.syncs)-1].sync(tp)
	}
	return out
}

// History returns the newest limit syncs of a partition, oldest first, and
// how many the partition has in all.
func (x *refSyncIndex) History(tp model.TP, limit int) ([]model.OffsetSync, int) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	h := x.parts[tp]
	if h == nil {
		return nil, 0
	}
	tail := h.syncs[max(len(h.syncs)-limit, 0):]
	out := make([]model.OffsetSync, len(tail))
	for i, e := range tail {
		out[i] = e.sync(tp)
	}
	return out, len(h.syncs)
}

// SyncBelow returns the newest sync of tp's current history with an
// upstream offset below first.
func (x *refSyncIndex) SyncBelow(tp model.TP, first int64) (model.OffsetSync, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	h := x.parts[tp]
	if h == nil {
		return model.OffsetSync{}, false
	}
	for i := len(h.syncs) - 1; i >= h.start; i-- {
		if h.syncs[i].Upstream < first {
			return h.syncs[i].sync(tp), true
		}
	}
	return model.OffsetSync{}, false
}

// SyncsPast returns tp's syncs from anchor (or the first written after
// it, when retention thinned it) through the first one written after it
// whose upstream offset is past last; ok is false when there is none yet.
// A partition's syncs are in write order.
func (x *refSyncIndex) SyncsPast(tp model.TP, anchor model.OffsetSync, last int64) ([]model.OffsetSync, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	h := x.parts[tp]
	if h == nil {
		return nil, false
	}
	from := sort.Search(len(h.syncs), func(i int) bool { return !h.syncs[i].key().Before(anchor.Key()) })
	out := []model.OffsetSync{anchor}
	for _, e := range h.syncs[from:] {
		if e.key() == anchor.Key() {
			continue
		}
		out = append(out, e.sync(tp))
		if e.Upstream > last {
			return out, true
		}
	}
	return nil, false
}

// Newest returns tp's newest sync.
func (x *refSyncIndex) Newest(tp model.TP) (model.OffsetSync, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	h := x.parts[tp]
	if h == nil || len(h.syncs) == 0 {
		return model.OffsetSync{}, false
	}
	return h.syncs[len(h.syncs)-1].sync(tp), true
}

// Thin chooses which syncs recorded before cutoffMs to delete so that about
// one per intervalMs bucket remains, per partition and history segment. It
// returns their keys; nothing is removed until Remove.
//
// Why this is safe: within a segment (upstream and downstream both rising)
// translation uses the greatest sync at or below an offset, so deleting a
// sync only makes an offset fall back to an earlier sync with a smaller
// downstream offset: more re-reading, never skipped records. A segment
// boundary (an upstream rewind or a downstream truncation) and the sync just
// before it are kept, because translation finds rewinds by comparing
// neighbours; so is the newest sync of each partition.
func (x *refSyncIndex) Thin(cutoffMs, intervalMs int64) []model.SyncKey {
	if intervalMs <= 0 {
		return nil
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	var doomed []model.SyncKey
	for _, hist := range x.parts {
		h := hist.syncs
		var lastKeptBucket int64
		for i, s := range h {
			boundary := i == 0 || s.Upstream < h[i-1].Upstream || s.Downstream < h[i-1].Downstream
			beforeBoundary := i+1 < len(h) && (h[i+1].Upstream < s.Upstream || h[i+1].Downstream < s.Downstream)
			bucket := s.RecordMs / intervalMs
			switch {
			case boundary || s.RecordMs >= cutoffMs || bucket != lastKeptBucket:
				lastKeptBucket = bucket
			case beforeBoundary || i == len(h)-1:
				// kept, but does not start a bucket
			default:
				doomed = append(doomed, s.key())
			}
		}
	}
	return doomed
}

// Remove drops syncs by key.
func (x *refSyncIndex) Remove(keys []model.SyncKey) {
	if len(keys) == 0 {
		return
	}
	gone := make(map[model.SyncKey]bool, len(keys))
	for _, k := range keys {
		gone[k] = true
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, h := range x.parts {
		before := len(h.syncs)
		for _, e := range h.syncs[:h.floor] {
			if gone[e.key()] {
				h.floor--
			}
		}
		h.syncs = slices.DeleteFunc(h.syncs, func(e refEntry) bool { return gone[e.key()] })
		x.n -= before - len(h.syncs)
		h.start, h.lateAt = histories(h.syncs, refEntry.pair, h.floor) // boundaries are never removed, but their indexes moved
	}
}
