package model

import "strconv"

// Figure is an offset, a count or an age the console read or worked out,
// or unknown: Known says which, so an unknown figure is never taken for
// 0. A value, not a pointer: a refresh's table holds seven a partition,
// and at a million partitions seven million small objects were what the
// garbage collector spent most of the console's CPU marking.
type Figure struct {
	V     int64
	Known bool
}

// Known is a figure known to be v.
func Known(v int64) Figure { return Figure{V: v, Known: true} }

// FigureOf is *p as a figure, unknown for nil.
func FigureOf(p *int64) Figure {
	if p == nil {
		return Figure{}
	}
	return Known(*p)
}

// Get is the figure and whether it is known.
func (f Figure) Get() (int64, bool) { return f.V, f.Known }

// Ptr is the figure as a pointer, nil when unknown: for JSON and the
// views, where nil is how unknown is said.
func (f Figure) Ptr() *int64 {
	if !f.Known {
		return nil
	}
	v := f.V
	return &v
}

// String is the figure for messages: its value, or "unknown".
func (f Figure) String() string {
	if !f.Known {
		return "unknown"
	}
	return strconv.FormatInt(f.V, 10)
}
