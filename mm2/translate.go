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
// it. Among the remaining syncs the newest one with the greatest upstream
// offset <= upstream is used: its downstream offset when exact, else
// downstream+1, the only offset known to be safe when upstream has gaps.
func Translate(history []model.OffsetSync, upstream int64) Translation {
	start := 0
	for i := 1; i < len(history); i++ {
		if history[i].Upstream < history[i-1].Upstream {
			start = i
		}
	}
	return translateFrom(history, syncPair, start, upstream)
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
