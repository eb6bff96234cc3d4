package mm2

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"sync"

	"github.com/drconsole/drconsole/model"
)

// SyncIndex is a flow's whole offset-sync history in memory, per partition
// in MM2's write order. SQLite stores syncs in arrival order (append-only,
// fast); this index answers per-partition questions (latest sync, history,
// translation) without scanning the table.
//
// Memory: a partition's syncs are delta-varint encoded (history), ~11 bytes
// a sync instead of 40, plus ~130 bytes per partition: 19 bytes per stored
// sync at 20 syncs a partition, where the plain slices took 69
// (BenchmarkSyncIndexBytes100k). ThinBounded keeps their number bounded.
type SyncIndex struct {
	mu    sync.RWMutex
	parts partIndex // index into hs
	hs    []history
	n     int
}

// blockLen is how many syncs share one run of deltas: the first sync of a
// block is stored whole, so translation binary-searches the blocks and
// decodes at most one block (plus the one holding start).
const blockLen = 16

// history is one partition's syncs, oldest first, encoded in buf; start is
// the index of the newest upstream rewind, where translation's usable
// history begins.
type history struct {
	// buf holds the syncs: the first of each block as five zigzag varints
	// (upstream, downstream, incarnation, log offset, record time), the
	// others as deltas from their predecessor (see appendEntry).
	buf []byte
	// blocks[b] is where block b+1 begins in buf (block 0 at 0).
	blocks []uint32
	// last is the newest sync, decoded: Add compares with it and the next
	// delta starts from it. Meaningless when n is 0.
	last entry
	n    int32
	// start is the index of the newest upstream rewind (or floor).
	start int32
	// floor is where the source log's current incarnation begins: syncs
	// below it describe a log that was deleted (see Restart).
	floor int32
	// lateAt is the index of the newest sync MM2 wrote late (see
	// writtenLate), 0 when none: when it is past start, the current
	// history is not in upstream order and translation scans all of it.
	lateAt int32
}

// entry is a stored sync without its partition (the map key holds it).
type entry struct {
	Upstream, Downstream, LogOffset, RecordMs int64
	Incarnation                               int64 // of the offset-syncs topic
}

func (e entry) key() model.SyncKey {
	return model.SyncKey{Incarnation: e.Incarnation, LogOffset: e.LogOffset}
}

func (e entry) pair() (int64, int64) { return e.Upstream, e.Downstream }

func (e entry) sync(tp model.TP) model.OffsetSync {
	return model.OffsetSync{Topic: tp.Topic, Partition: tp.Partition, Upstream: e.Upstream, Downstream: e.Downstream,
		LogOffset: e.LogOffset, RecordMs: e.RecordMs, Incarnation: e.Incarnation}
}

func zig(v int64) uint64   { return uint64(v<<1) ^ uint64(v>>63) }
func unzig(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// appendEntry encodes e after the partition's current syncs. Differences
// are taken with wrapping int64 arithmetic, which decoding undoes exactly,
// so any values round-trip.
func (h *history) appendEntry(e entry) {
	b := h.buf
	if h.n%blockLen == 0 {
		if h.n > 0 {
			h.blocks = append(h.blocks, uint32(len(b)))
		}
		b = binary.AppendUvarint(b, zig(e.Upstream))
		b = binary.AppendUvarint(b, zig(e.Downstream))
		b = binary.AppendUvarint(b, zig(e.Incarnation))
		b = binary.AppendUvarint(b, zig(e.LogOffset))
		b = binary.AppendUvarint(b, zig(e.RecordMs))
	} else {
		p := h.last
		b = binary.AppendUvarint(b, zig(e.Upstream-p.Upstream))
		b = binary.AppendUvarint(b, zig(e.Downstream-p.Downstream))
		// Keys rise: in the same incarnation the log offset grows, so its
		// delta shifted left by one (low bit 0) says so; low bit 1 means
		// incarnation and log offset follow whole.
		if d := uint64(e.LogOffset - p.LogOffset); e.Incarnation == p.Incarnation && d < 1<<63 {
			b = binary.AppendUvarint(b, d<<1)
		} else {
			b = binary.AppendUvarint(b, 1)
			b = binary.AppendUvarint(b, zig(e.Incarnation))
			b = binary.AppendUvarint(b, zig(e.LogOffset))
		}
		b = binary.AppendUvarint(b, zig(e.RecordMs-p.RecordMs))
	}
	h.buf = b
	h.last = e
	h.n++
}

// blockAt is where block b begins in buf.
func (h *history) blockAt(b int) int {
	if b == 0 {
		return 0
	}
	return int(h.blocks[b-1])
}

// firstUpstream is the upstream offset of block b's first sync.
func (h *history) firstUpstream(b int) int64 {
	u, _ := binary.Uvarint(h.buf[h.blockAt(b):])
	return unzig(u)
}

// cursor decodes a history forwards; e is the sync just read, i the index
// of the next one.
type cursor struct {
	h   *history
	pos int
	i   int32
	e   entry
}

// cursorAt starts decoding at the block holding sync i (the caller skips
// to i); past the end, it is exhausted.
func (h *history) cursorAt(i int32) cursor {
	if i >= h.n {
		return cursor{h: h, i: h.n}
	}
	b := int(i) / blockLen
	return cursor{h: h, pos: h.blockAt(b), i: int32(b * blockLen)}
}

func (c *cursor) uvarint() uint64 {
	if b := c.h.buf[c.pos]; b < 0x80 { // most deltas fit in a byte or two
		c.pos++
		return uint64(b)
	}
	v, n := binary.Uvarint(c.h.buf[c.pos:])
	c.pos += n
	return v
}

func (c *cursor) skip() {
	for c.h.buf[c.pos] >= 0x80 {
		c.pos++
	}
	c.pos++
}

// nextPair is next for translation: it decodes the upstream and downstream
// offsets only and leaves the rest of e stale.
func (c *cursor) nextPair() bool {
	if c.i >= c.h.n {
		return false
	}
	if c.i%blockLen == 0 {
		c.e.Upstream = unzig(c.uvarint())
		c.e.Downstream = unzig(c.uvarint())
		c.skip()
		c.skip()
		c.skip()
	} else {
		c.e.Upstream += unzig(c.uvarint())
		c.e.Downstream += unzig(c.uvarint())
		if c.uvarint()&1 == 1 {
			c.skip()
			c.skip()
		}
		c.skip()
	}
	c.i++
	return true
}

func (c *cursor) next() bool {
	if c.i >= c.h.n {
		return false
	}
	if c.i%blockLen == 0 {
		c.e.Upstream = unzig(c.uvarint())
		c.e.Downstream = unzig(c.uvarint())
		c.e.Incarnation = unzig(c.uvarint())
		c.e.LogOffset = unzig(c.uvarint())
		c.e.RecordMs = unzig(c.uvarint())
	} else {
		c.e.Upstream += unzig(c.uvarint())
		c.e.Downstream += unzig(c.uvarint())
		if v := c.uvarint(); v&1 == 0 {
			c.e.LogOffset += int64(v >> 1)
		} else {
			c.e.Incarnation = unzig(c.uvarint())
			c.e.LogOffset = unzig(c.uvarint())
		}
		c.e.RecordMs += unzig(c.uvarint())
	}
	c.i++
	return true
}

// decode appends the partition's syncs to dst.
func (h *history) decode(dst []entry) []entry {
	c := h.cursorAt(0)
	for c.next() {
		dst = append(dst, c.e)
	}
	return dst
}

// rebuild replaces the encoded syncs with es, in a buffer of their size.
func (h *history) rebuild(es []entry) {
	var sized history
	for _, e := range es {
		sized.appendEntry(e)
	}
	h.buf, h.blocks, h.last, h.n = slices.Clip(slices.Clone(sized.buf)), slices.Clip(slices.Clone(sized.blocks)), sized.last, sized.n
}

// NewSyncIndex returns an empty index.
func NewSyncIndex() *SyncIndex { return &SyncIndex{parts: newPartIndex()} }

// AddFrom adds every sync each passes to add, holding the lock throughout so
// a reader never sees the index half loaded. each is typically a walk over
// the stored syncs (monitor.LoadSyncIndex); mm2 itself knows no storage.
func (x *SyncIndex) AddFrom(each func(add func(model.OffsetSync) error) error) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	err := each(func(s model.OffsetSync) error {
		x.addLocked(s)
		return nil
	})
	// A load appends to every partition in turn, leaving buffers up to
	// twice their size: give the spare capacity back.
	for i := range x.hs {
		h := &x.hs[i]
		if cap(h.buf)-len(h.buf) > len(h.buf)/8 {
			h.buf = slices.Clone(h.buf)
		}
	}
	return err
}

// Add appends syncs; ones at or before a partition's newest (incarnation,
// log offset) are already known and skipped. A new incarnation of the
// offset-syncs topic restarts its log offsets at 0, so comparing log
// offsets alone would drop most of its syncs.
func (x *SyncIndex) Add(syncs []model.OffsetSync) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, s := range syncs {
		x.addLocked(s)
	}
}

func (x *SyncIndex) addLocked(s model.OffsetSync) {
	tp := model.TP{Topic: s.Topic, Partition: s.Partition}
	i, ok := x.parts.get(tp)
	if !ok {
		i = int32(len(x.hs))
		x.hs = append(x.hs, history{})
		x.parts.put(tp, i)
	}
	h := &x.hs[i]
	if h.n > 0 {
		if !h.last.key().Before(s.Key()) {
			return
		}
		if s.Upstream < h.last.Upstream {
			// Rare (a rewind or a late sync): decoding the history is fine.
			if writtenLate(h.decode(nil)[h.start:], entry.pair, s.Upstream, s.Downstream) {
				h.lateAt = h.n
			} else {
				h.start = h.n
			}
		}
	}
	h.appendEntry(entry{s.Upstream, s.Downstream, s.LogOffset, s.RecordMs, s.Incarnation})
	x.n++
}

// get returns tp's history, nil when it has none. Callers hold the lock.
func (x *SyncIndex) get(tp model.TP) *history {
	if i, ok := x.parts.get(tp); ok {
		return &x.hs[i]
	}
	return nil
}

// Translate maps an upstream next-to-read offset of tp to DR with MM2's
// rule over the partition's whole history.
func (x *SyncIndex) Translate(tp model.TP, upstream int64) Translation {
	x.mu.RLock()
	defer x.mu.RUnlock()
	h := x.get(tp)
	if h == nil || h.n == 0 {
		return Translation{Method: MethodUnknown}
	}
	if h.start == h.n {
		return Translation{Method: MethodUnknown} // restarted log, no sync of it yet
	}
	if h.lateAt > h.start {
		// A late sync: upstream offsets are not in order, so the greatest
		// at or below upstream may be anywhere in the history.
		c := h.cursorAt(h.start)
		var use entry
		found := false
		for c.nextPair() {
			if c.i > h.start && c.e.Upstream <= upstream && (!found || c.e.Upstream >= use.Upstream) {
				use, found = c.e, true
			}
		}
		if !found {
			return Translation{Method: MethodTooOld}
		}
		return translateFrom([]entry{use}, entry.pair, 0, upstream)
	}
	// From start on upstream offsets never decrease: the sync to use is the
	// last one at or below upstream. Binary-search the blocks that begin
	// after start, then decode one block.
	first := int(h.start) / blockLen
	lo, hi := first+1, (int(h.n)+blockLen-1)/blockLen
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if h.firstUpstream(mid) > upstream {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	from := h.start
	if lo-1 > first {
		from = int32((lo - 1) * blockLen)
	}
	c := h.cursorAt(from)
	var use entry
	for found := false; c.nextPair(); {
		if c.i <= from {
			continue // before start, in start's block
		}
		if c.e.Upstream > upstream {
			if !found {
				use = c.e // too old: translateFrom says so
			}
			break
		}
		use, found = c.e, true
	}
	return translateFrom([]entry{use}, entry.pair, 0, upstream)
}

// Restart starts a new history for tp: its source log restarted (topic
// deleted and recreated), so none of the syncs held so far may translate
// offsets of the new log. Only syncs added afterwards are used. Held in
// memory: after a console restart an upstream rewind in the new syncs is
// what separates the histories again.
func (x *SyncIndex) Restart(tp model.TP) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if h := x.get(tp); h != nil {
		h.floor, h.start = h.n, h.n
	}
}

// Partitions lists the partitions with syncs.
func (x *SyncIndex) Partitions() []model.TP {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := make([]model.TP, 0, x.parts.len())
	x.parts.each(func(tp model.TP, _ int32) { out = append(out, tp) })
	return out
}

// Len is the number of syncs held.
func (x *SyncIndex) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.n
}

// Latest returns the newest sync of every partition.
func (x *SyncIndex) Latest() map[model.TP]model.OffsetSync {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := make(map[model.TP]model.OffsetSync, x.parts.len())
	x.parts.each(func(tp model.TP, i int32) {
		if h := &x.hs[i]; h.n > 0 {
			out[tp] = h.last.sync(tp)
		}
	})
	return out
}

// History returns the newest limit syncs of a partition, oldest first, and
// how many the partition has in all.
func (x *SyncIndex) History(tp model.TP, limit int) ([]model.OffsetSync, int) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	h := x.get(tp)
	if h == nil {
		return nil, 0
	}
	from := int32(max(int(h.n)-max(limit, 0), 0))
	out := make([]model.OffsetSync, 0, h.n-from)
	for c := h.cursorAt(from); c.next(); {
		if c.i > from {
			out = append(out, c.e.sync(tp))
		}
	}
	return out, int(h.n)
}

// SyncBelow returns the newest sync of tp's current history with an
// upstream offset below first.
func (x *SyncIndex) SyncBelow(tp model.TP, first int64) (model.OffsetSync, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	h := x.get(tp)
	if h == nil {
		return model.OffsetSync{}, false
	}
	var below entry
	found := false
	for c := h.cursorAt(h.start); c.next(); {
		if c.i > h.start && c.e.Upstream < first {
			below, found = c.e, true
		}
	}
	if !found {
		return model.OffsetSync{}, false
	}
	return below.sync(tp), true
}

// SourceOf returns the newest sync of tp's current history whose
// downstream offset is at or below downstream: where a target position
// came from on the source (a failback moving a DR position back). Only
// syncs since the last downstream rewind count: a sync whose downstream
// offset is below its predecessor's starts a new target log (the topic
// recreated in DR), and the syncs before it describe a log that is gone.
func (x *SyncIndex) SourceOf(tp model.TP, downstream int64) (model.OffsetSync, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	h := x.get(tp)
	if h == nil {
		return model.OffsetSync{}, false
	}
	var use entry
	found, seen := false, false
	var prev int64
	for c := h.cursorAt(h.start); c.next(); {
		if c.i <= h.start {
			continue // before start, in start's block
		}
		if seen && c.e.Downstream < prev {
			found = false // a new target log
		}
		seen, prev = true, c.e.Downstream
		if c.e.Downstream <= downstream {
			use, found = c.e, true
		}
	}
	if !found {
		return model.OffsetSync{}, false
	}
	return use.sync(tp), true
}

// SyncsPast returns tp's syncs from anchor (or the first written after
// it, when retention thinned it) through the first one written after it
// whose upstream offset is past last; ok is false when there is none yet.
// A partition's syncs are in write order.
func (x *SyncIndex) SyncsPast(tp model.TP, anchor model.OffsetSync, last int64) ([]model.OffsetSync, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	h := x.get(tp)
	if h == nil {
		return nil, false
	}
	out := []model.OffsetSync{anchor}
	for c := h.cursorAt(0); c.next(); {
		if k := c.e.key(); k.Before(anchor.Key()) || k == anchor.Key() {
			continue
		}
		out = append(out, c.e.sync(tp))
		if c.e.Upstream > last {
			return out, true
		}
	}
	return nil, false
}

// Newest returns tp's newest sync.
func (x *SyncIndex) Newest(tp model.TP) (model.OffsetSync, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	h := x.get(tp)
	if h == nil || h.n == 0 {
		return model.OffsetSync{}, false
	}
	return h.last.sync(tp), true
}

// lockBatch is how many partitions Thin and Remove handle per lock hold,
// so Add and readers never wait for a pass over every partition.
const lockBatch = 256

// Thin is ThinBounded without a per-partition bound.
func (x *SyncIndex) Thin(cutoffMs, intervalMs int64) []model.SyncKey {
	return x.ThinBounded(cutoffMs, intervalMs, 0, nil)
}

// boundKeepsNewest is how many of a partition's newest syncs the bound
// never deletes: the data-loss judge anchors a new gap at the newest sync
// below the replicated position, which is one of these, and reads the
// syncs from there pair by pair (see keepFrom).
const boundKeepsNewest = 16

// ThinBounded chooses which syncs to delete, per partition, and returns
// their keys; nothing is removed until Remove. Two rules, the second
// applied to what the first keeps:
//
//   - of the syncs recorded before cutoffMs, about one per intervalMs
//     bucket remains, per history segment (intervalMs <= 0: this rule
//     deletes nothing);
//   - at most perPartition syncs of any age remain (perPartition <= 0: no
//     bound), chosen like MM2's OffsetSyncStore: one per power-of-two
//     distance (in upstream offsets) from the newest sync first, nearest
//     first, then the nearest others, syncs of retired histories last.
//
// Neither rule deletes the newest sync, a segment boundary (the first sync,
// an upstream rewind, a downstream truncation, or a downstream offset that
// stands still while the upstream one rises), the sync just before a
// boundary, or a partition's syncs from keepFrom[tp] on (an undecided
// data-loss gap's anchor: its judge counts them pair by pair, and merging a
// re-copy with a skip would hide the skip; the zero key keeps them all).
// The bound also keeps the newest boundKeepsNewest syncs and a restarted
// log's first sync and the one before it. Protected syncs may take a
// partition past perPartition.
//
// Why this is safe: within a segment (upstream rising and downstream rising
// with it) translation uses the greatest sync at or below an offset, so
// deleting a sync only makes an offset fall back to an earlier sync with a
// smaller downstream offset: more re-reading, never skipped records. The
// boundaries are kept because translation finds rewinds by comparing
// neighbours and a truncation's neighbours translate past each other.
func (x *SyncIndex) ThinBounded(cutoffMs, intervalMs int64, perPartition int, keepFrom map[model.TP]model.SyncKey) []model.SyncKey {
	if intervalMs <= 0 && perPartition <= 0 {
		return nil
	}
	x.mu.RLock()
	anchors := make(map[int32]model.SyncKey, len(keepFrom)) // by index into hs, which never moves
	for tp, k := range keepFrom {
		if i, ok := x.parts.get(tp); ok {
			anchors[i] = k
		}
	}
	x.mu.RUnlock()
	var doomed []model.SyncKey
	var scratch []entry
	var drop []bool
	for b := 0; ; b += lockBatch {
		x.mu.RLock()
		if b >= len(x.hs) {
			x.mu.RUnlock()
			return doomed
		}
		for i := b; i < min(b+lockBatch, len(x.hs)); i++ {
			h := &x.hs[i]
			scratch = h.decode(scratch[:0])
			keep := len(scratch)
			if k, ok := anchors[int32(i)]; ok {
				keep, _ = slices.BinarySearchFunc(scratch, k, func(e entry, k model.SyncKey) int { return cmpKey(e.key(), k) })
			}
			drop = thin(scratch, h.start, h.floor, keep, cutoffMs, intervalMs, perPartition, drop)
			for j, d := range drop {
				if d {
					doomed = append(doomed, scratch[j].key())
				}
			}
		}
		x.mu.RUnlock()
	}
}

// cuts reports whether b, written right after a, begins a new segment:
// translating across the pair could move past a record (see ThinBounded).
func cuts(a, b entry) bool {
	return b.Upstream < a.Upstream || b.Downstream < a.Downstream ||
		b.Upstream > a.Upstream && b.Downstream == a.Downstream
}

// thin marks in drop (reused, returned) which of h's syncs ThinBounded
// deletes; start and floor are the partition's, syncs from keep on are
// never deleted.
func thin(h []entry, start, floor int32, keep int, cutoffMs, intervalMs int64, perPartition int, drop []bool) []bool {
	drop = slices.Grow(drop[:0], len(h))[:len(h)]
	clear(drop)
	protected := func(i int) bool {
		return i == 0 || i >= keep || i == len(h)-1 || cuts(h[i-1], h[i]) || i+1 < len(h) && cuts(h[i], h[i+1])
	}
	guarded := func(i int) bool { // by the bound
		return protected(i) || i >= len(h)-boundKeepsNewest || i == int(floor) || i+1 == int(floor)
	}
	if intervalMs > 0 {
		var lastKeptBucket int64
		for i, s := range h {
			boundary := i == 0 || cuts(h[i-1], s)
			beforeBoundary := i+1 < len(h) && cuts(s, h[i+1])
			bucket := s.RecordMs / intervalMs
			switch {
			case boundary || i >= keep || s.RecordMs >= cutoffMs || bucket != lastKeptBucket:
				lastKeptBucket = bucket
			case beforeBoundary || i == len(h)-1:
				// kept, but does not start a bucket
			default:
				drop[i] = true
			}
		}
	}
	if perPartition <= 0 {
		return drop
	}
	held, fixed := 0, 0
	for i := range h {
		if !drop[i] {
			held++
			if guarded(i) {
				fixed++
			}
		}
	}
	if held <= perPartition {
		return drop
	}
	// Rank the candidates, newest first: one per octave of distance from
	// the newest sync, then the other syncs of the current history, then
	// those of retired histories; keep the first slots of them.
	slots := max(perPartition-fixed, 0)
	newest := h[len(h)-1].Upstream
	var octaves uint64 // bit k: an octave-k sync is already ranked first
	var first, rest, retired []int
	for i := len(h) - 1; i >= 0; i-- {
		if drop[i] || guarded(i) {
			continue
		}
		if i < int(start) {
			retired = append(retired, i)
			continue
		}
		k := uint(bits.Len64(uint64(newest-h[i].Upstream))) % 64
		if octaves&(1<<k) == 0 {
			octaves |= 1 << k
			first = append(first, i)
		} else {
			rest = append(rest, i)
		}
	}
	for n, i := range slices.Concat(first, rest, retired) {
		if n >= slots {
			drop[i] = true
		}
	}
	return drop
}

// Remove drops syncs by key, a batch of partitions per lock hold.
func (x *SyncIndex) Remove(keys []model.SyncKey) {
	if len(keys) == 0 {
		return
	}
	gone := slices.Clone(keys)
	slices.SortFunc(gone, cmpKey)
	isGone := func(k model.SyncKey) bool {
		_, ok := slices.BinarySearchFunc(gone, k, cmpKey)
		return ok
	}
	var scratch []entry
	for b := 0; ; b += lockBatch {
		x.mu.Lock()
		if b >= len(x.hs) {
			x.mu.Unlock()
			return
		}
		for i := b; i < min(b+lockBatch, len(x.hs)); i++ {
			h := &x.hs[i]
			scratch = h.decode(scratch[:0])
			if !slices.ContainsFunc(scratch, func(e entry) bool { return isGone(e.key()) }) {
				continue
			}
			for _, e := range scratch[:h.floor] {
				if isGone(e.key()) {
					h.floor--
				}
			}
			kept := slices.DeleteFunc(scratch, func(e entry) bool { return isGone(e.key()) })
			x.n -= int(h.n) - len(kept)
			h.rebuild(kept)
			// Boundaries are never removed, but their indexes moved.
			start, lateAt := histories(kept, entry.pair, int(h.floor))
			h.start, h.lateAt = int32(start), int32(lateAt)
		}
		x.mu.Unlock()
	}
}

func cmpKey(a, b model.SyncKey) int {
	switch {
	case a.Before(b):
		return -1
	case b.Before(a):
		return 1
	}
	return 0
}
