package model

import "testing"

// An unknown figure stays unknown through every conversion: never a 0.
func TestFigureUnknownIsNeverZero(t *testing.T) {
	var u Figure
	if u.Known || u.Ptr() != nil || FigureOf(nil).Known || u.String() != "unknown" {
		t.Errorf("unknown: %+v ptr %v string %q", u, u.Ptr(), u)
	}
	z := Known(0)
	if p := z.Ptr(); p == nil || *p != 0 || FigureOf(p) != z || z.String() != "0" {
		t.Errorf("known 0: %+v ptr %v string %q", z, p, z)
	}
	if v, ok := Known(-7).Get(); v != -7 || !ok {
		t.Errorf("Get = %d, %v", v, ok)
	}
}
