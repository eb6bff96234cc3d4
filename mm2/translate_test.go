package mm2

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/drconsole/drconsole/model"
)

// Vectors from MM2's OffsetSyncStoreTest (shared/reference/mm2.md §3.2).
func TestTranslateMM2Vectors(t *testing.T) {
	s := func(up, down int64) model.OffsetSync {
		return model.OffsetSync{Topic: "t", Upstream: up, Downstream: down}
	}
	for _, tc := range []struct {
		name    string
		history []model.OffsetSync
		up      int64
		want    int64
		method  Method
	}{
		{"after 100->200, 150 is conservative", []model.OffsetSync{s(100, 200)}, 150, 201, MethodConservative},
		{"after 150->251, 150 is exact", []model.OffsetSync{s(100, 200), s(150, 251)}, 150, 251, MethodExact},
		{"after 150->251, 5 is too old", []model.OffsetSync{s(100, 200), s(150, 251)}, 5, 0, MethodTooOld},
		{"downstream reset 200->10", []model.OffsetSync{s(100, 200), s(150, 251), s(200, 10)}, 200, 10, MethodExact},
		{"upstream reset 20->20", []model.OffsetSync{s(100, 200), s(150, 251), s(200, 10), s(20, 20)}, 20, 20, MethodExact},
		{"upstream reset retires older syncs", []model.OffsetSync{s(100, 200), s(20, 20)}, 150, 21, MethodConservative},
		{"no syncs", nil, 5, 0, MethodUnknown},
		{"equal upstream: newest wins", []model.OffsetSync{s(10, 10), s(10, 12)}, 10, 12, MethodExact},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Translate(tc.history, tc.up)
			if got.Method != tc.method || (got.Translated() && got.Offset != tc.want) {
				t.Fatalf("Translate(%d) = %+v; want %d %s", tc.up, got, tc.want, tc.method)
			}
		})
	}
}

// Translation never skips data: for random partitions with upstream gaps
// (transaction markers, filtered or compacted records) and any subset of
// true syncs, the translated offset never passes the first DR record that
// corresponds to an unconsumed source record.
func TestTranslateNeverSkipsData(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for round := range 500 {
		// replicated[d] is the source offset of DR record d.
		var replicated []int64
		up := rng.Int64N(1000)
		for range 1 + rng.IntN(400) {
			replicated = append(replicated, up)
			up += 1 + rng.Int64N(3) // gaps of 0-2 offsets
		}
		end := up
		var history []model.OffsetSync
		for d, u := range replicated {
			if rng.IntN(8) == 0 || d == 0 {
				history = append(history, model.OffsetSync{Upstream: u, Downstream: int64(d)})
			}
		}
		for range 50 {
			u := rng.Int64N(end + 10)
			// The first DR record whose source record was not consumed yet.
			safe := int64(sort.Search(len(replicated), func(i int) bool { return replicated[i] >= u }))
			got := Translate(history, u)
			if !got.Translated() {
				if u >= history[0].Upstream {
					t.Fatalf("round %d: translate(%d) = %s with a sync at %d", round, u, got.Method, history[0].Upstream)
				}
				continue
			}
			if got.Offset > safe {
				t.Fatalf("round %d: translate(%d) = %d skips data: DR record %d is the first unconsumed", round, u, got.Offset, safe)
			}
			if got.Method == MethodExact && got.Offset != safe {
				t.Fatalf("round %d: exact translate(%d) = %d, true %d", round, u, got.Offset, safe)
			}
			if reread := safe - got.Offset; reread > got.RereadMax {
				t.Fatalf("round %d: translate(%d) re-reads %d, more than its bound %d", round, u, reread, got.RereadMax)
			}
		}
	}
}

// Offsets at the top of the range never wrap: a conservative +1 past
// MaxOffset is refused (out-of-range), not returned as a negative offset.
func TestTranslateNeverWraps(t *testing.T) {
	s := func(up, down int64) model.OffsetSync {
		return model.OffsetSync{Topic: "t", Upstream: up, Downstream: down}
	}
	for _, tc := range []struct {
		name    string
		history []model.OffsetSync
		up      int64
		method  Method
		want    int64
	}{
		{"exact at MaxOffset", []model.OffsetSync{s(10, MaxOffset)}, 10, MethodExact, MaxOffset},
		{"+1 past MaxOffset", []model.OffsetSync{s(10, MaxOffset)}, 11, MethodOutOfRange, 0},
		{"+1 past MaxInt64", []model.OffsetSync{s(10, math.MaxInt64)}, 11, MethodOutOfRange, 0},
		{"exact at MaxInt64", []model.OffsetSync{s(10, math.MaxInt64)}, 10, MethodOutOfRange, 0},
		{"+1 just below", []model.OffsetSync{s(10, MaxOffset-1)}, 11, MethodConservative, MaxOffset},
	} {
		got := Translate(tc.history, tc.up)
		if got.Method != tc.method || got.Translated() && got.Offset != tc.want || got.Translated() && got.Offset < 0 {
			t.Errorf("%s: %+v, want %s %d", tc.name, got, tc.method, tc.want)
		}
	}
}
