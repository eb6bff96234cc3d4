package kafka

import "sort"

// Offset translation from upstream (primary) to downstream (DR) offsets with
// MM2 3.5+ semantics, over a partition's whole sync history rather than MM2's
// 64 sparse slots: at least as precise, and just as safe.

// Method says how a translation was obtained.
type Method string

const (
	// MethodExact: a sync sits exactly at the upstream offset.
	MethodExact Method = "exact"
	// MethodConservative: the nearest sync below was used with MM2's +1
	// rule; up to RereadMax records may be read again, none skipped.
	MethodConservative Method = "conservative"
	// MethodTooOld: every retained sync is newer than the offset.
	MethodTooOld Method = "too-old"
	// MethodUnknown: no syncs at all for the partition.
	MethodUnknown Method = "unknown"
)

// Translation is the result of translating one upstream offset.
type Translation struct {
	// Offset is the downstream next-to-read offset; meaningful only for
	// MethodExact and MethodConservative.
	Offset int64
	Method Method
	// Sync is the sync the result came from, nil when none applied.
	Sync *OffsetSync
	// RereadMax bounds how many records may be processed twice.
	RereadMax int64
}

// Translated reports whether Offset is usable.
func (t Translation) Translated() bool {
	return t.Method == MethodExact || t.Method == MethodConservative
}

// Translate maps upstream, a next-to-read offset, through history: the
// partition's syncs in the order MM2 wrote them. An upstream rewind (a sync
// below its predecessor) starts a new history and retires everything before
// it. Among the remaining syncs the newest one with the greatest upstream
// offset <= upstream is used: its downstream offset when exact, else
// downstream+1, the only offset known to be safe when upstream has gaps.
func Translate(history []OffsetSync, upstream int64) Translation {
	start := 0
	for i := 1; i < len(history); i++ {
		if history[i].Upstream < history[i-1].Upstream {
			start = i
		}
	}
	return translateFrom(len(history), start, func(i int) OffsetSync { return history[i] }, upstream)
}

// translateFrom applies the rule to syncs [start, n) of a history, where
// start is the last upstream rewind: upstream offsets never decrease from
// there, so the sync to use is found by binary search.
func translateFrom(n, start int, at func(int) OffsetSync, upstream int64) Translation {
	if n == 0 {
		return Translation{Method: MethodUnknown}
	}
	// The first sync above upstream; the one before it is the newest of
	// the greatest at or below.
	i := start + sort.Search(n-start, func(k int) bool { return at(start+k).Upstream > upstream }) - 1
	if i < start {
		return Translation{Method: MethodTooOld}
	}
	x := at(i)
	if x.Upstream == upstream {
		return Translation{Offset: x.Downstream, Method: MethodExact, Sync: &x}
	}
	return Translation{Offset: x.Downstream + 1, Method: MethodConservative, Sync: &x, RereadMax: upstream - x.Upstream - 1}
}
