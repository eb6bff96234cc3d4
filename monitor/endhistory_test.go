package monitor

import (
	"math/rand/v2"
	"sort"
	"testing"
)

// refHistory is the end history as one list, newest last: what partWatch
// kept before its newest entry moved inline.
type refHistory struct{ seen []endSeen }

func (h *refHistory) seenEnd(end, atMs int64) {
	if n := len(h.seen); n == 0 || h.seen[n-1].end != end {
		h.seen = append(h.seen, endSeen{atMs, end})
	}
	if n := len(h.seen); n > maxSeen {
		var kept []endSeen
		for i, e := range h.seen {
			if i%2 == 0 || i == n-1 {
				kept = append(kept, e)
			}
		}
		h.seen = kept
	}
}

func (h *refHistory) firstSeen(o int64) (int64, bool) {
	i := sort.Search(len(h.seen), func(i int) bool { return h.seen[i].end > o })
	if i == len(h.seen) {
		return 0, false
	}
	h.seen = h.seen[i:]
	return h.seen[0].atMs, true
}

func (h *refHistory) caughtUp() {
	if n := len(h.seen); n > 0 {
		h.seen = h.seen[n-1:]
	}
}

// The end history with its newest entry inline answers every age exactly
// as the single list did, through ends that grow, stand still and repeat,
// positions read at and below them, catch-ups and restarts; and a
// partition whose end never changes holds no array at all.
func TestEndHistoryInlineNewestAsTheList(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for run := range 200 {
		w, ref := partWatch{lastEnd: -1}, refHistory{}
		end, pos, at := int64(0), int64(0), int64(1_000)
		stopped := run%4 == 0 // MM2 stopped: the history fills to its bound and is thinned
		for step := range 300 {
			at += 1 + r.Int64N(10_000)
			op := r.IntN(10)
			if stopped {
				op = min(op, 5)
			}
			switch {
			case op < 5:
				if r.IntN(3) > 0 {
					end += r.Int64N(50)
				}
				w.seenEnd(end, at)
				ref.seenEnd(end, at)
			case op < 8:
				if !stopped {
					pos = min(pos+r.Int64N(40), end)
				}
				got, gotOK := w.firstSeen(pos)
				want, wantOK := ref.firstSeen(pos)
				if got != want || gotOK != wantOK {
					t.Fatalf("run %d step %d: first seen past %d: %d %v, the list %d %v", run, step, pos, got, gotOK, want, wantOK)
				}
			case op < 9:
				pos = end
				w.caughtUp()
				ref.caughtUp()
			default: // a restart clears the history (watch)
				w.seen, w.hasEnd, ref.seen = nil, false, nil
			}
			if n := len(w.seen); n > maxSeen || cap(w.seen) > maxSeen {
				t.Fatalf("run %d step %d: %d older entries (capacity %d)", run, step, n, cap(w.seen))
			}
		}
	}
	quiet := partWatch{lastEnd: -1}
	for i := range int64(100) {
		quiet.seenEnd(42, 1_000+i)
		quiet.caughtUp()
	}
	if quiet.seen != nil || !quiet.hasEnd || quiet.lastEndAt != 1_000 {
		t.Fatalf("a quiet caught-up partition holds %d entries (capacity %d), newest at %d", len(quiet.seen), cap(quiet.seen), quiet.lastEndAt)
	}
}
