package mm2

import (
	"math"

	"github.com/drconsole/drconsole/model"
)

// Offset translation from upstream (primary) to downstream (DR) offsets with
// MM2 3.5+ semantics, over a partition's whole sync history rather than MM2's
// 64 sparse slots: at least as precise, and just as safe.

// Method is model's TranslationMethod: how a translation was obtained.
type Method = model.TranslationMethod

const (
	MethodExact        = model.MethodExact
	MethodConservative = model.MethodConservative
	MethodPreserved    = model.MethodPreserved
	MethodTooOld       = model.MethodTooOld
	MethodUnknown      = model.MethodUnknown
	MethodOutOfRange   = model.MethodOutOfRange
)

// MaxOffset is the greatest offset accepted as input or produced: a
// next-to-read offset one below math.MaxInt64, so that +1 arithmetic on
// any valid offset stays in range.
const MaxOffset = math.MaxInt64 - 1

// Translation is model's: the result of translating one upstream offset.
type Translation = model.Translation

// Translate maps upstream, a next-to-read offset, through history: the
// partition's syncs in the order MM2 wrote them. An upstream rewind (a sync
// below its predecessor) starts a new history and retires everything before
// it, unless MM2 merely wrote that sync late (writtenLate). Among the
// remaining syncs the newest one with the greatest upstream offset <=
// upstream is used: its downstream offset when exact, else downstream+1,
// the only offset known to be safe when upstream has gaps.
func Translate(history []model.OffsetSync, upstream int64) Translation {
	start, lateAt := histories(history, syncPair, 0)
	return translateIn(history, syncPair, start, lateAt, upstream)
}

// writtenLate reports whether a sync (up, down) below the newest of seg
// (the current history, oldest first) is one MM2 wrote late rather than
// the start of a new history. MM2's writer can put a partition's syncs out
// of order: it takes a sync from its queue under a lock and sends it after
// releasing it, from two threads (a record's acknowledgement and the
// periodic offset commit), so a delayed sync can land after a newer one.
// Such a sync lies strictly between its neighbours in both offsets: there
// is an earlier sync below it in both, and every sync written after that
// one is above it in both. A real new history does not fit like that: a
// recreated or truncated source log copied into the same DR log keeps the
// downstream offset rising, and both logs recreated start again at 0,
// which no earlier sync is below.
func writtenLate[S any](seg []S, pair func(S) (upstream, downstream int64), up, down int64) bool {
	for k := len(seg) - 1; k >= 0; k-- {
		u, d := pair(seg[k])
		if u > up && d > down {
			continue
		}
		return u < up && d < down
	}
	return false
}

// histories replays how h (from floor on) splits into histories: start is
// where the newest begins, lateAt the newest sync after it that MM2 wrote
// late (0: none).
func histories[S any](h []S, pair func(S) (upstream, downstream int64), floor int) (start, lateAt int) {
	start = floor
	for i := floor + 1; i < len(h); i++ {
		up, down := pair(h[i])
		if prev, _ := pair(h[i-1]); up >= prev {
			continue
		}
		if writtenLate(h[start:i], pair, up, down) {
			lateAt = i
		} else {
			start = i
		}
	}
	return start, lateAt
}

// translateIn is translateFrom for a history that may hold late syncs
// (lateAt past start): then upstream offsets are not in order and the
// greatest at or below upstream (the newest of equals) is searched for.
func translateIn[S any](h []S, pair func(S) (upstream, downstream int64), start, lateAt int, upstream int64) Translation {
	if lateAt <= start || len(h) == 0 {
		return translateFrom(h, pair, start, upstream)
	}
	best := -1
	var bestUp int64
	for i := start; i < len(h); i++ {
		if up, _ := pair(h[i]); up <= upstream && (best < 0 || up >= bestUp) {
			best, bestUp = i, up
		}
	}
	if best < 0 {
		return Translation{Method: MethodTooOld}
	}
	return translateFrom(h[best:best+1], pair, 0, upstream)
}

// syncPair is what translation needs of a sync: a function, not a method,
// because model.OffsetSync is not this package's type.
func syncPair(s model.OffsetSync) (upstream, downstream int64) { return s.Upstream, s.Downstream }

// translateFrom applies the rule to h[start:], where start is the last
// upstream rewind: upstream offsets never decrease from there, so the sync
// to use is found by binary search. pair reads a sync's offsets.
func translateFrom[S any](h []S, pair func(S) (upstream, downstream int64), start int, upstream int64) Translation {
	if len(h) == 0 {
		return Translation{Method: MethodUnknown}
	}
	// Find the first sync above upstream; the one before it is the newest
	// of the greatest at or below.
	lo, hi := start, len(h)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if up, _ := pair(h[mid]); up > upstream {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if lo == start {
		return Translation{Method: MethodTooOld}
	}
	up, down := pair(h[lo-1])
	x := model.OffsetSync{Upstream: up, Downstream: down}
	if up == upstream {
		if down < 0 || down > MaxOffset {
			return Translation{Method: MethodOutOfRange, Sync: x}
		}
		return Translation{Offset: down, Method: MethodExact, Sync: x}
	}
	if down >= MaxOffset || down < 0 || upstream > MaxOffset {
		return Translation{Method: MethodOutOfRange, Sync: x}
	}
	return Translation{Offset: down + 1, Method: MethodConservative, Sync: x, RereadMax: upstream - up - 1}
}
