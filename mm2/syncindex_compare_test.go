package mm2

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/drconsole/drconsole/model"
)

// The compact index against the reference copy (syncindex_ref_test.go):
// seeded histories a mirror could write (upstream gaps, upstream rewinds,
// downstream truncations, source-log restarts, new incarnations of the
// offset-syncs topic, re-delivered syncs) are fed to both, thinned, and
// every query must answer the same.

// simPart is one partition of the simulated mirror: seg holds the records
// copied since its current history began (upstream, downstream), the ground
// truth a translation is checked against.
type simPart struct {
	tp       model.TP
	up, down int64
	seg      [][2]int64
}

type simWorld struct {
	rng           *rand.Rand
	inc, log, ms  int64
	parts         []*simPart
	sent          []model.OffsetSync
	restarts      int
	rewinds, cuts int
	late          int // syncs written after a newer one of their partition
}

// op is one step applied to both indexes: a batch of syncs or a restart.
type op struct {
	batch   []model.OffsetSync
	restart *model.TP
}

func newSimWorld(seed uint64, parts int) *simWorld {
	w := &simWorld{rng: rand.New(rand.NewPCG(seed, 17))}
	for p := range parts {
		w.parts = append(w.parts, &simPart{tp: model.TP{Topic: fmt.Sprintf("t%d", p%3), Partition: int32(p)}})
	}
	return w
}

// next copies a few records of p and returns the sync for the last one;
// now and then the history breaks first.
func (w *simWorld) next(p *simPart) model.OffsetSync {
	r := w.rng
	// Like MM2, a break in the history is synced at its first record.
	broke := false
	switch r.IntN(60) {
	case 0: // MM2 re-reads from a committed position behind it: upstream rewind
		if p.up > 0 {
			p.up = r.Int64N(p.up)
			p.down++
			broke = true
			w.rewinds++
		}
	case 1: // DR truncated (or recreated): downstream goes back
		if p.down > 0 {
			p.down = r.Int64N(p.down)
			p.up++
			broke = true
			w.cuts++
		}
	}
	if broke {
		p.seg = [][2]int64{{p.up, p.down}}
	}
	for range (1 + r.IntN(20)) * map[bool]int{false: 1, true: 0}[broke] {
		p.up += 1 + max(0, r.Int64N(6)-3) // gaps: compaction, markers, filtered records
		p.down += 1 + max(0, r.Int64N(8)-6)
		p.seg = append(p.seg, [2]int64{p.up, p.down})
	}
	if r.IntN(200) == 0 { // the offset-syncs topic recreated: log offsets restart
		w.inc++
		w.log = 0
	}
	w.log += 1 + r.Int64N(3)
	w.ms += r.Int64N(400_000)
	s := model.OffsetSync{Topic: p.tp.Topic, Partition: p.tp.Partition, Upstream: p.up, Downstream: p.down,
		LogOffset: w.log, RecordMs: w.ms, Incarnation: w.inc}
	w.sent = append(w.sent, s)
	return s
}

// run produces n steps.
func (w *simWorld) run(n int) []op {
	var ops []op
	for range n {
		r := w.rng
		if r.IntN(150) == 0 { // the source log restarted
			p := w.parts[r.IntN(len(w.parts))]
			tp := p.tp
			ops = append(ops, op{restart: &tp})
			p.up = r.Int64N(p.up + 100)
			p.seg = nil
			w.restarts++
			continue
		}
		var batch []model.OffsetSync
		fresh := map[model.TP]int{} // the newest new sync of each partition in batch
		for range 1 + r.IntN(8) {
			if r.IntN(25) == 0 && len(w.sent) > 0 { // re-delivered: already known
				batch = append(batch, w.sent[r.IntN(len(w.sent))])
				continue
			}
			p := w.parts[r.IntN(len(w.parts))]
			segLen := len(p.seg)
			s := w.next(p)
			tp := model.TP{Topic: s.Topic, Partition: s.Partition}
			if len(p.seg) <= segLen { // a new history begins at s
				delete(fresh, tp)
			}
			if i, ok := fresh[tp]; ok && r.IntN(6) == 0 {
				// MM2 wrote the older sync late: the offsets trade places,
				// the write order (log offsets) stays.
				a, b := &batch[i], &s
				a.Upstream, a.Downstream, b.Upstream, b.Downstream = b.Upstream, b.Downstream, a.Upstream, a.Downstream
				w.sent[len(w.sent)-1] = s
				for j := len(w.sent) - 2; j >= 0; j-- {
					if w.sent[j].Key() == a.Key() {
						w.sent[j] = *a
						break
					}
				}
				w.late++
			}
			fresh[tp] = len(batch)
			batch = append(batch, s)
		}
		ops = append(ops, op{batch: batch})
	}
	return ops
}

func apply(ops []op, x *SyncIndex, ref *refSyncIndex) {
	for _, o := range ops {
		if o.restart != nil {
			x.Restart(*o.restart)
			ref.Restart(*o.restart)
			continue
		}
		x.Add(o.batch)
		ref.Add(o.batch)
	}
}

// sameAnswers compares every query of x and ref over the partitions of w.
func sameAnswers(t *testing.T, what string, w *simWorld, x *SyncIndex, ref *refSyncIndex) {
	t.Helper()
	if x.Len() != ref.Len() {
		t.Fatalf("%s: Len %d, reference %d", what, x.Len(), ref.Len())
	}
	pa, pb := x.Partitions(), ref.Partitions()
	cmpTP := func(a, b model.TP) int {
		if a.Topic != b.Topic {
			return map[bool]int{true: -1, false: 1}[a.Topic < b.Topic]
		}
		return int(a.Partition - b.Partition)
	}
	slices.SortFunc(pa, cmpTP)
	slices.SortFunc(pb, cmpTP)
	if !slices.Equal(pa, pb) {
		t.Fatalf("%s: partitions %v, reference %v", what, pa, pb)
	}
	la, lb := x.Latest(), ref.Latest()
	if len(la) != len(lb) {
		t.Fatalf("%s: Latest has %d partitions, reference %d", what, len(la), len(lb))
	}
	for tp, s := range lb {
		if la[tp] != s {
			t.Fatalf("%s: Latest[%v] = %+v, reference %+v", what, tp, la[tp], s)
		}
	}
	for _, p := range w.parts {
		tp := p.tp
		ha, na := x.History(tp, 1<<30)
		hb, nb := ref.History(tp, 1<<30)
		if na != nb || !slices.Equal(ha, hb) {
			t.Fatalf("%s: History(%v) differs: %d vs reference %d syncs", what, tp, na, nb)
		}
		for _, limit := range []int{0, 1, 5, 33, 70} {
			ha, _ := x.History(tp, limit)
			hb, _ := ref.History(tp, limit)
			if !slices.Equal(ha, hb) {
				t.Fatalf("%s: History(%v, %d) = %v, reference %v", what, tp, limit, ha, hb)
			}
		}
		na2, oka := x.Newest(tp)
		nb2, okb := ref.Newest(tp)
		if oka != okb || na2 != nb2 {
			t.Fatalf("%s: Newest(%v) = %+v %v, reference %+v %v", what, tp, na2, oka, nb2, okb)
		}
		top := int64(10)
		for _, s := range hb {
			top = max(top, s.Upstream+10)
		}
		for u := int64(-2); u <= top; u += 1 + u/29 {
			if a, b := x.Translate(tp, u), ref.Translate(tp, u); a != b {
				t.Fatalf("%s: Translate(%v, %d) = %+v, reference %+v", what, tp, u, a, b)
			}
			sa, oka := x.SyncBelow(tp, u)
			sb, okb := ref.SyncBelow(tp, u)
			if oka != okb || sa != sb {
				t.Fatalf("%s: SyncBelow(%v, %d) = %+v %v, reference %+v %v", what, tp, u, sa, oka, sb, okb)
			}
		}
		for i, anchor := range hb {
			if i%7 != 0 {
				continue
			}
			for _, last := range []int64{anchor.Upstream, anchor.Upstream + 50, top} {
				ra, oka := x.SyncsPast(tp, anchor, last)
				rb, okb := ref.SyncsPast(tp, anchor, last)
				if oka != okb || !slices.Equal(ra, rb) {
					t.Fatalf("%s: SyncsPast(%v, %+v, %d) = %v %v, reference %v %v", what, tp, anchor, last, ra, oka, rb, okb)
				}
			}
		}
	}
	for _, tp := range []model.TP{{Topic: "none"}, {Topic: "t0", Partition: 999}} {
		if a, b := x.Translate(tp, 5), ref.Translate(tp, 5); a != b {
			t.Fatalf("%s: Translate(%v) = %+v, reference %+v", what, tp, a, b)
		}
	}
}

func sameKeys(a, b []model.SyncKey) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.SortFunc(a, cmpKey)
	slices.SortFunc(b, cmpKey)
	return slices.Equal(a, b)
}

// Without a bound the compact index is the reference: same answers after
// every growth step, the same thinning, the same answers after it.
func TestSyncIndexMatchesReference(t *testing.T) {
	for seed := range uint64(8) {
		w := newSimWorld(seed, 1+int(seed%5)*3)
		x, ref := NewSyncIndex(), newRefSyncIndex()
		for round := range 4 {
			apply(w.run(120+int(seed)*30), x, ref)
			sameAnswers(t, fmt.Sprintf("seed %d round %d", seed, round), w, x, ref)
			cutoff, interval := w.ms-w.ms/3, int64(1_800_000)
			da, db := x.Thin(cutoff, interval), ref.Thin(cutoff, interval)
			if !sameKeys(da, db) {
				t.Fatalf("seed %d round %d: Thin chose %d syncs, reference %d", seed, round, len(da), len(db))
			}
			x.Remove(da)
			ref.Remove(db)
			sameAnswers(t, fmt.Sprintf("seed %d round %d, thinned %d", seed, round, len(da)), w, x, ref)
		}
		if seed == 7 && (w.rewinds == 0 || w.cuts == 0 || w.restarts == 0 || w.inc == 0 || w.late == 0) {
			t.Fatalf("the simulated histories lack a case: %d rewinds, %d truncations, %d restarts, %d incarnations, %d late syncs", w.rewinds, w.cuts, w.restarts, w.inc, w.late)
		}
	}
	// Removing arbitrary keys (not only what Thin chose) also matches.
	w := newSimWorld(99, 4)
	x, ref := NewSyncIndex(), newRefSyncIndex()
	apply(w.run(400), x, ref)
	var keys []model.SyncKey
	for i, s := range w.sent {
		if i%3 == 0 {
			keys = append(keys, s.Key())
		}
	}
	x.Remove(keys)
	ref.Remove(keys)
	sameAnswers(t, "arbitrary removal", w, x, ref)
}

// AddFrom (a start-up load) builds the same index as Add.
func TestSyncIndexLoadMatchesReference(t *testing.T) {
	w := newSimWorld(7, 6)
	x, ref := NewSyncIndex(), newRefSyncIndex()
	var all []model.OffsetSync
	for _, o := range w.run(600) {
		all = append(all, o.batch...) // no restarts: they are not stored
	}
	if err := x.AddFrom(func(add func(model.OffsetSync) error) error {
		for _, s := range all {
			if err := add(s); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ref.Add(all)
	sameAnswers(t, "AddFrom", w, x, ref)
}

// Extreme values round-trip through the encoding.
func TestSyncIndexEncodesExtremes(t *testing.T) {
	x, ref := NewSyncIndex(), newRefSyncIndex()
	vals := []int64{0, 1, -1, 1 << 40, MaxOffset, MaxOffset + 1, -1 << 63, 5, 1<<63 - 1}
	var batch []model.OffsetSync
	for i, v := range vals {
		for j, u := range vals {
			batch = append(batch, model.OffsetSync{Topic: "x", Upstream: v, Downstream: u, LogOffset: int64(i*len(vals) + j),
				RecordMs: vals[(i+j)%len(vals)], Incarnation: int64(i / 3)})
		}
	}
	batch = append(batch, model.OffsetSync{Topic: "x", Upstream: 3, LogOffset: 1<<63 - 1, Incarnation: 9},
		model.OffsetSync{Topic: "x", Upstream: 4, LogOffset: -1 << 63, Incarnation: 10},
		model.OffsetSync{Topic: "x", Upstream: 6, LogOffset: 1<<63 - 1, Incarnation: 10})
	x.Add(batch)
	ref.Add(batch)
	w := &simWorld{parts: []*simPart{{tp: model.TP{Topic: "x"}}}}
	sameAnswers(t, "extremes", w, x, ref)
}

// A downstream offset that stands still while the upstream one rises (the
// same DR position for two different records: DR was truncated and
// refilled to it) starts a segment: thinning the later sync away would
// translate its exact offset one past its record.
func TestThinKeepsStandingDownstream(t *testing.T) {
	x, ref := NewSyncIndex(), newRefSyncIndex()
	syncs := []model.OffsetSync{{Topic: "a", Upstream: 10, Downstream: 50, LogOffset: 1},
		{Topic: "a", Upstream: 20, Downstream: 50, LogOffset: 2}, {Topic: "a", Upstream: 30, Downstream: 60, LogOffset: 3}}
	x.Add(syncs)
	ref.Add(syncs)
	tp := model.TP{Topic: "a"}
	ref.Remove(ref.Thin(1<<40, 1<<40))
	if got := ref.Translate(tp, 20); got.Offset != 51 {
		t.Fatalf("the reference's thinning was thought to translate 20 to 51, one past its record (50): %+v", got)
	}
	x.Remove(x.ThinBounded(1<<40, 1<<40, 1, nil))
	if got := x.Translate(tp, 20); got.Method != MethodExact || got.Offset != 50 {
		t.Fatalf("after thinning Translate(20) = %+v, want exact 50", got)
	}
}

// guardedAt lists what the bound may never delete from h: the newest
// boundKeepsNewest, every boundary, the sync before each, the first of a restarted log and the one
// before it.
func guardedAt(h []model.OffsetSync, floor int) map[model.SyncKey]bool {
	out := map[model.SyncKey]bool{}
	for i, s := range h {
		cut := func(a, b model.OffsetSync) bool {
			return b.Upstream < a.Upstream || b.Downstream < a.Downstream || b.Upstream > a.Upstream && b.Downstream == a.Downstream
		}
		if i == 0 || i >= len(h)-boundKeepsNewest || cut(h[i-1], s) || i+1 < len(h) && cut(s, h[i+1]) || i == floor || i+1 == floor {
			out[s.Key()] = true
		}
	}
	return out
}

// With the bound: never more syncs than the reference thinned by time alone
// keeps, each translation at most the reference's and translated only where
// the reference translates, no copied record skipped (checked against the
// simulated mirror's records), boundaries and the newest syncs kept, and
// each partition's syncs, of any age, within the bound plus the guarded
// ones.
func TestThinBoundedIsSafe(t *testing.T) {
	const k = 6
	hit := 0
	for seed := range uint64(10) {
		w := newSimWorld(100+seed, 2+int(seed%4))
		x, ref := NewSyncIndex(), newRefSyncIndex()
		floors := map[model.TP]int{}
		for round := range 5 {
			for _, o := range w.run(300) {
				if o.restart != nil {
					_, n := x.History(*o.restart, 0)
					floors[*o.restart] = n
				}
				apply([]op{o}, x, ref)
			}
			cutoff, interval := w.ms-w.ms/4, int64(900_000)
			before := map[model.TP][]model.OffsetSync{}
			for _, p := range w.parts {
				before[p.tp], _ = x.History(p.tp, 1<<30)
			}
			timeRule := x.Thin(cutoff, interval)
			byTime := map[model.SyncKey]bool{} // the time rule's choice, which the bound only adds to
			for _, key := range timeRule {
				byTime[key] = true
			}
			doomed := x.ThinBounded(cutoff, interval, k, nil)
			for _, key := range doomed {
				delete(byTime, key)
			}
			if len(byTime) > 0 {
				t.Fatalf("seed %d round %d: the bound kept %d syncs the time rule deletes", seed, round, len(byTime))
			}
			if len(doomed) > len(timeRule) {
				hit++
			}
			x.Remove(doomed)
			ref.Remove(ref.Thin(cutoff, interval))
			what := fmt.Sprintf("seed %d round %d", seed, round)
			if x.Len() > ref.Len() {
				t.Fatalf("%s: %d syncs kept, the reference %d", what, x.Len(), ref.Len())
			}
			for _, p := range w.parts {
				tp := p.tp
				after, _ := x.History(tp, 1<<30)
				kept := map[model.SyncKey]bool{}
				for _, s := range after {
					kept[s.Key()] = true
				}
				guarded := guardedAt(before[tp], floors[tp])
				for _, key := range timeRule {
					delete(guarded, key) // the time rule may delete a restarted log's first sync (safe, see Thin)
				}
				nGuarded := 0
				for _, s := range before[tp] {
					if guarded[s.Key()] {
						if !kept[s.Key()] {
							t.Fatalf("%s %v: the guarded sync %+v was deleted", what, tp, s)
						}
						nGuarded++
					}
				}
				if len(after) > max(k, nGuarded) {
					t.Fatalf("%s %v: %d syncs kept, bound %d, %d guarded", what, tp, len(after), k, nGuarded)
				}
				// Removing a restart floor moves it down with the syncs below it.
				removedBelow := 0
				for _, s := range before[tp][:min(floors[tp], len(before[tp]))] {
					if !kept[s.Key()] {
						removedBelow++
					}
				}
				floors[tp] -= removedBelow
				refH, _ := ref.History(tp, 1<<30)
				top := int64(10)
				for _, s := range refH {
					top = max(top, s.Upstream+10)
				}
				segFrom := int64(1 << 62)
				if len(p.seg) > 0 {
					segFrom = p.seg[0][0]
				}
				for u := int64(-2); u <= top; u += 1 + u/101 {
					a, b := x.Translate(tp, u), ref.Translate(tp, u)
					if !a.Translated() {
						continue
					}
					if !b.Translated() || a.Offset > b.Offset {
						t.Fatalf("%s: Translate(%v, %d) = %+v with the bound, reference %+v", what, tp, u, a, b)
					}
					if u < segFrom {
						continue // before the current history's first record: the truth is not tracked
					}
					truth := p.down + 1 // the next record copied lands at or after it
					if i, _ := slices.BinarySearchFunc(p.seg, u, func(r [2]int64, u int64) int { return int(min(max(r[0]-u, -1), 1)) }); i < len(p.seg) {
						truth = p.seg[i][1]
					}
					if a.Offset > truth {
						t.Fatalf("%s: Translate(%v, %d) = %d skips the record copied to %d", what, tp, u, a.Offset, truth)
					}
				}
			}
		}
	}
	if hit == 0 {
		t.Fatal("the bound was never hit: the test data does not exercise it")
	}
}

// The bound never drops a boundary, the sync before one, the newest few or a
// restarted log's first sync (and the one before it), even at a bound of
// one and with every sync older than the cutoff.
func TestBoundNeverDropsBoundaries(t *testing.T) {
	tp := model.TP{Topic: "b"}
	x := NewSyncIndex()
	var syncs []model.OffsetSync
	up, down := int64(0), int64(0)
	for i := range int64(400) {
		switch {
		case i%50 == 49:
			up -= 30 // upstream rewind
		case i%70 == 69:
			down -= 30 // downstream truncation
		case i%90 == 89:
			up += 5 // downstream standing still
		default:
			up, down = up+10, down+9
		}
		syncs = append(syncs, model.OffsetSync{Topic: "b", Upstream: up, Downstream: down, LogOffset: i, RecordMs: i})
		if i == 300 {
			x.Add(syncs)
			syncs = nil
			x.Restart(tp)
			up = 0
		}
	}
	x.Add(syncs)
	before, _ := x.History(tp, 1<<20)
	guarded := guardedAt(before, 301)
	x.Remove(x.ThinBounded(1<<40, 0, 1, nil))
	after, _ := x.History(tp, 1<<20)
	kept := map[model.SyncKey]bool{}
	for _, s := range after {
		kept[s.Key()] = true
	}
	for _, s := range before {
		if guarded[s.Key()] && !kept[s.Key()] {
			t.Fatalf("the guarded sync %+v was dropped", s)
		}
	}
	if len(after) > len(guarded)+1 || len(guarded) < 20 {
		t.Fatalf("kept %d of %d syncs with %d guarded: want the guarded ones and at most one more", len(after), len(before), len(guarded))
	}
}

// The bound applies to recent syncs too (memory stays bounded however busy
// a partition is), but never touches a partition's syncs from a loss gap's
// anchor on, nor any of a partition whose gap has no anchor yet.
func TestBoundKeepsLossRuns(t *testing.T) {
	x := NewSyncIndex()
	var syncs []model.OffsetSync
	for p := range int32(3) {
		for i := range int64(500) {
			syncs = append(syncs, model.OffsetSync{Topic: "l", Partition: p, Upstream: i * 100, Downstream: i * 99, LogOffset: int64(p)*1000 + i, RecordMs: 1_000 + i})
		}
	}
	x.Add(syncs)
	busy, gap, noAnchor := model.TP{Topic: "l", Partition: 0}, model.TP{Topic: "l", Partition: 1}, model.TP{Topic: "l", Partition: 2}
	anchor := model.SyncKey{LogOffset: 1000 + 300}
	x.Remove(x.ThinBounded(0, 0, 8, map[model.TP]model.SyncKey{gap: anchor, noAnchor: {}})) // every sync younger than the cutoff
	if h, _ := x.History(busy, 1<<20); len(h) > boundKeepsNewest+1 || h[len(h)-1].Upstream != 49_900 {
		t.Fatalf("a busy partition kept %d recent syncs (newest %+v), want at most the newest %d and its first", len(h), h[len(h)-1], boundKeepsNewest)
	}
	h, _ := x.History(gap, 1<<20)
	from := slices.IndexFunc(h, func(s model.OffsetSync) bool { return s.Key() == anchor })
	if from < 0 || len(h)-from != 200 {
		t.Fatalf("the gap's run from its anchor: %d of 200 syncs kept (anchor at %d)", len(h)-from, from)
	}
	if from > 8 {
		t.Fatalf("the syncs before the anchor were not bounded: %d kept", from)
	}
	if _, n := x.History(noAnchor, 0); n != 500 {
		t.Fatalf("a gap without an anchor kept %d of 500 syncs, want all", n)
	}
}
