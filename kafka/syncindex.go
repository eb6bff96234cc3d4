package kafka

import (
	"context"
	"slices"
	"sync"

	"github.com/drconsole/drconsole/storage"
)

// SyncIndex is a flow's whole offset-sync history in memory, per partition
// in MM2's write order. SQLite stores syncs in arrival order (append-only,
// fast); this index answers per-partition questions (latest sync, history,
// translation) without scanning the table.
type SyncIndex struct {
	mu    sync.RWMutex
	parts map[TP][]storage.Sync
	n     int
}

// NewSyncIndex returns an empty index.
func NewSyncIndex() *SyncIndex { return &SyncIndex{parts: map[TP][]storage.Sync{}} }

// Load adds every stored sync of flow.
func (x *SyncIndex) Load(ctx context.Context, store *storage.Store, flow string) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return store.EachSync(ctx, flow, func(s storage.Sync) error {
		x.addLocked(s)
		return nil
	})
}

// Add appends syncs; ones at or below a partition's newest log offset are
// already known and skipped.
func (x *SyncIndex) Add(syncs []storage.Sync) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, s := range syncs {
		x.addLocked(s)
	}
}

func (x *SyncIndex) addLocked(s storage.Sync) {
	tp := TP{s.Topic, s.Partition}
	h := x.parts[tp]
	if len(h) > 0 && s.LogOffset <= h[len(h)-1].LogOffset {
		return
	}
	x.parts[tp] = append(h, s)
	x.n++
}

// Len is the number of syncs held.
func (x *SyncIndex) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.n
}

// Latest returns the newest sync of every partition.
func (x *SyncIndex) Latest() map[TP]storage.Sync {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := make(map[TP]storage.Sync, len(x.parts))
	for tp, h := range x.parts {
		out[tp] = h[len(h)-1]
	}
	return out
}

// History returns the newest limit syncs of a partition, oldest first, and
// how many the partition has in all.
func (x *SyncIndex) History(tp TP, limit int) ([]storage.Sync, int) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	h := x.parts[tp]
	return slices.Clone(h[max(len(h)-limit, 0):]), len(h)
}

// Thin chooses which syncs recorded before cutoffMs to delete so that about
// one per intervalMs bucket remains, per partition and history segment. It
// returns their log offsets; nothing is removed until Remove.
//
// Why this is safe: within a segment (upstream and downstream both rising)
// translation uses the greatest sync at or below an offset, so deleting a
// sync only makes an offset fall back to an earlier sync with a smaller
// downstream offset: more re-reading, never skipped records. A segment
// boundary (an upstream rewind or a downstream truncation) and the sync just
// before it are kept, because translation finds rewinds by comparing
// neighbours; so is the newest sync of each partition.
func (x *SyncIndex) Thin(cutoffMs, intervalMs int64) []int64 {
	if intervalMs <= 0 {
		return nil
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	var doomed []int64
	for _, h := range x.parts {
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
				doomed = append(doomed, s.LogOffset)
			}
		}
	}
	return doomed
}

// Remove drops syncs by log offset.
func (x *SyncIndex) Remove(logOffsets []int64) {
	if len(logOffsets) == 0 {
		return
	}
	gone := make(map[int64]bool, len(logOffsets))
	for _, o := range logOffsets {
		gone[o] = true
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for tp, h := range x.parts {
		kept := slices.DeleteFunc(h, func(s storage.Sync) bool { return gone[s.LogOffset] })
		x.n -= len(h) - len(kept)
		x.parts[tp] = kept
	}
}

// OffsetSyncs converts stored syncs to the codec type translation uses.
func OffsetSyncs(xs []storage.Sync) []OffsetSync {
	out := make([]OffsetSync, len(xs))
	for i, x := range xs {
		out[i] = OffsetSync{Topic: x.Topic, Partition: x.Partition, Upstream: x.Upstream, Downstream: x.Downstream}
	}
	return out
}
