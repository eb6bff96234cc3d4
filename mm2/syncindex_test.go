package mm2

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/drconsole/drconsole/model"
)

// Thinning may only make translations more conservative: for every upstream
// offset the translated downstream offset after thinning is at most what it
// was before, and the newest sync of each partition survives.
func TestThinNeverTranslatesFurther(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 40 {
		x := NewSyncIndex()
		var logOff int64
		for p := int32(0); p < 3; p++ {
			up, down, ms := int64(0), int64(0), int64(0)
			var batch []model.OffsetSync
			for range 200 {
				up += 1 + rng.Int64N(50)
				down += 1 + rng.Int64N(40)
				ms += rng.Int64N(120_000)
				if rng.IntN(40) == 0 { // an upstream rewind or a downstream truncation
					if rng.IntN(2) == 0 {
						up = rng.Int64N(up)
					} else {
						down = rng.Int64N(down)
					}
				}
				batch = append(batch, model.OffsetSync{Topic: "t", Partition: p, Upstream: up, Downstream: down, LogOffset: logOff, RecordMs: ms})
				logOff++
			}
			x.Add(batch)
		}
		before := map[model.TP][]model.OffsetSync{}
		for p := int32(0); p < 3; p++ {
			before[model.TP{Topic: "t", Partition: p}], _ = x.History(model.TP{Topic: "t", Partition: p}, 1<<20)
		}
		doomed := x.Thin(8_000_000, 3_600_000)
		if round == 0 && len(doomed) < 100 {
			t.Fatalf("only %d syncs thinned: the test data does not exercise thinning", len(doomed))
		}
		x.Remove(doomed)
		if x.Len() != int(logOff)-len(doomed) {
			t.Fatalf("Len = %d after removing %d of %d", x.Len(), len(doomed), logOff)
		}
		for tp, b := range before {
			after, _ := x.History(tp, 1<<20)
			if after[len(after)-1] != b[len(b)-1] {
				t.Fatalf("newest sync of %v was deleted", tp)
			}
			hb, ha := b, after
			for u := int64(0); u < b[len(b)-1].Upstream+100; u += 3 {
				tb, ta := Translate(hb, u), Translate(ha, u)
				if ta.Translated() && (!tb.Translated() || ta.Offset > tb.Offset) {
					t.Fatalf("round %d %v: translate(%d) = %+v after thinning, %+v before", round, tp, u, ta, tb)
				}
			}
		}
	}
}

func TestSyncIndexSkipsKnownAndKeepsOrder(t *testing.T) {
	x := NewSyncIndex()
	x.Add([]model.OffsetSync{{Topic: "a", LogOffset: 1, Upstream: 1}, {Topic: "a", LogOffset: 3, Upstream: 3}})
	x.Add([]model.OffsetSync{{Topic: "a", LogOffset: 3, Upstream: 99}, {Topic: "a", LogOffset: 2, Upstream: 98}, {Topic: "a", LogOffset: 4, Upstream: 4}})
	h, n := x.History(model.TP{Topic: "a", Partition: 0}, 2)
	if n != 3 || len(h) != 2 || h[0].Upstream != 3 || h[1].Upstream != 4 || x.Latest()[model.TP{Topic: "a", Partition: 0}].Upstream != 4 {
		t.Fatalf("history %+v of %d", h, n)
	}
}

// AddFrom is how a store's walk fills the index: what it yields is added
// under the same rule as Add, and the walk's error comes back.
func TestSyncIndexAddFrom(t *testing.T) {
	x := NewSyncIndex()
	stop := errors.New("walk failed")
	err := x.AddFrom(func(add func(model.OffsetSync) error) error {
		for _, s := range []model.OffsetSync{{Topic: "a", LogOffset: 1, Upstream: 10, Downstream: 5}, {Topic: "a", LogOffset: 1, Upstream: 99},
			{Topic: "a", LogOffset: 2, Upstream: 20, Downstream: 15}} {
			if err := add(s); err != nil {
				return err
			}
		}
		return stop
	})
	if !errors.Is(err, stop) {
		t.Fatalf("AddFrom = %v, want the walk's error", err)
	}
	if tr := x.Translate(model.TP{Topic: "a"}, 20); x.Len() != 2 || tr.Method != MethodExact || tr.Offset != 15 {
		t.Fatalf("after AddFrom: %d syncs, Translate(20) = %+v", x.Len(), tr)
	}
}

// SourceOf is the newest sync at or below a target position, within the
// current source history and the current target log; across block
// boundaries (more than blockLen syncs) as within one.
func TestSyncIndexSourceOf(t *testing.T) {
	tp := model.TP{Topic: "a"}
	x := NewSyncIndex()
	var syncs []model.OffsetSync
	for i := range int64(40) { // upstream 10i -> downstream 5i
		syncs = append(syncs, model.OffsetSync{Topic: "a", LogOffset: i + 1, Upstream: 10 * i, Downstream: 5 * i})
	}
	x.Add(syncs)
	for _, c := range []struct {
		down, up, at int64
		ok           bool
	}{{0, 0, 0, true}, {4, 0, 0, true}, {5, 10, 5, true}, {99, 190, 95, true}, {1000, 390, 195, true}, {-1, 0, 0, false}} {
		s, ok := x.SourceOf(tp, c.down)
		if ok != c.ok || ok && (s.Upstream != c.up || s.Downstream != c.at) {
			t.Errorf("SourceOf(%d) = %+v %v, want %d->%d %v", c.down, s, ok, c.up, c.at, c.ok)
		}
	}
	// The target log recreated: downstream starts over; the older syncs
	// describe a log that is gone.
	x.Add([]model.OffsetSync{{Topic: "a", LogOffset: 100, Upstream: 400, Downstream: 0}, {Topic: "a", LogOffset: 101, Upstream: 410, Downstream: 8}})
	if s, ok := x.SourceOf(tp, 7); !ok || s.Upstream != 400 {
		t.Errorf("after a target rewind SourceOf(7) = %+v %v, want the new log's 400->0", s, ok)
	}
	if s, ok := x.SourceOf(tp, 100); !ok || s.Upstream != 410 {
		t.Errorf("after a target rewind SourceOf(100) = %+v %v, want 410->8, not the old log's syncs", s, ok)
	}
	// The source log restarted: nothing from before counts.
	x.Restart(tp)
	if s, ok := x.SourceOf(tp, 100); ok {
		t.Errorf("after Restart SourceOf = %+v, want none", s)
	}
}

// MM2's writer can put a partition's syncs out of order (a delayed sync
// sent by the offset commit after a newer one sent on a record's
// acknowledgement). The late sync is not a rewind: offsets below it still
// translate through the syncs before it. Real new histories still retire
// the old one.
func TestLateSyncIsNoRewind(t *testing.T) {
	tp := model.TP{Topic: "events"}
	sync := func(log, up, down int64) model.OffsetSync {
		return model.OffsetSync{Topic: "events", Upstream: up, Downstream: down, LogOffset: log}
	}
	base := []model.OffsetSync{sync(0, 0, 0), sync(1, 1000, 1000), sync(2, 1100, 1100)}
	for _, c := range []struct {
		name  string
		next  []model.OffsetSync
		u     int64
		want  int64 // -1: not translatable
		via   int64 // upstream offset of the sync used
		exact bool
	}{
		// Written in the order 1100, 1200, 1150 (late), 1250.
		{"below the late sync", []model.OffsetSync{sync(3, 1200, 1200), sync(4, 1150, 1150), sync(5, 1250, 1250)}, 1091, 1001, 1000, false},
		{"between the late sync and the newer one", []model.OffsetSync{sync(3, 1200, 1200), sync(4, 1150, 1150), sync(5, 1250, 1250)}, 1180, 1151, 1150, false},
		{"past the newer one", []model.OffsetSync{sync(3, 1200, 1200), sync(4, 1150, 1150), sync(5, 1250, 1250)}, 1210, 1201, 1200, false},
		{"at the late sync", []model.OffsetSync{sync(3, 1200, 1200), sync(4, 1150, 1150)}, 1150, 1150, 1150, true},
		// Two newer syncs went ahead of it.
		{"late by two", []model.OffsetSync{sync(3, 1200, 1200), sync(4, 1300, 1300), sync(5, 1150, 1150)}, 1091, 1001, 1000, false},
		// The source log recreated, DR's copy kept: DR's offsets go on rising.
		{"source recreated", []model.OffsetSync{sync(3, 0, 1101), sync(4, 100, 1201)}, 1091, 1202, 100, false},
		// Both logs recreated: no earlier sync is below the new first one.
		{"both recreated", []model.OffsetSync{sync(3, 0, 0), sync(4, 100, 100)}, 1091, 101, 100, false},
		// MM2 copying again from a committed position behind it.
		{"copied again", []model.OffsetSync{sync(3, 1050, 1101)}, 1091, 1102, 1050, false},
		{"copied again, older offset", []model.OffsetSync{sync(3, 1050, 1101)}, 1010, -1, 0, false},
		// Below the newest in upstream but not in downstream order: no fit.
		{"no fit", []model.OffsetSync{sync(3, 1200, 1200), sync(4, 1150, 1250)}, 1091, -1, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			history := append(slices.Clone(base), c.next...)
			x := NewSyncIndex()
			x.Add(history)
			for what, got := range map[string]Translation{"index": x.Translate(tp, c.u), "Translate": Translate(history, c.u)} {
				switch {
				case c.want < 0 && got.Translated():
					t.Errorf("%s: translate(%d) = %+v, want not translatable", what, c.u, got)
				case c.want >= 0 && (!got.Translated() || got.Offset != c.want || got.Sync.Upstream != c.via || (got.Method == MethodExact) != c.exact):
					t.Errorf("%s: translate(%d) = %+v, want %d via the sync at %d (exact %v)", what, c.u, got, c.want, c.via, c.exact)
				}
			}
		})
	}
}

// partIndex answers as the map keyed by model.TP it replaced: the same
// index for every partition held, none for any other, and each lists
// exactly those held, dense numbers, gaps, negative and huge ones alike.
func TestPartIndexAsTheMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(32, 3))
	x, ref := newPartIndex(), map[model.TP]int32{}
	pick := func() model.TP {
		p := rng.Int32N(300)
		switch rng.IntN(20) {
		case 0:
			p = -1 - rng.Int32N(5)
		case 1:
			p = denseLimit + rng.Int32N(1<<30)
		}
		return model.TP{Topic: fmt.Sprintf("t%d", rng.IntN(30)), Partition: p}
	}
	for i := range int32(5000) {
		tp := pick()
		if _, ok := ref[tp]; !ok {
			ref[tp] = i
			x.put(tp, i)
		}
		q := pick()
		got, ok := x.get(q)
		want, wok := ref[q]
		if ok != wok || got != want {
			t.Fatalf("get %v: %d %v, want %d %v", q, got, ok, want, wok)
		}
	}
	if x.len() != len(ref) {
		t.Errorf("len %d, want %d", x.len(), len(ref))
	}
	seen := map[model.TP]int32{}
	x.each(func(tp model.TP, i int32) {
		if _, dup := seen[tp]; dup {
			t.Errorf("%v listed twice", tp)
		}
		seen[tp] = i
	})
	if len(seen) != len(ref) {
		t.Fatalf("each listed %d, want %d", len(seen), len(ref))
	}
	for tp, i := range ref {
		if seen[tp] != i {
			t.Errorf("each: %v at %d, want %d", tp, seen[tp], i)
		}
	}
}
