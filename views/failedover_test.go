package views

import (
	"testing"
	"time"

	"github.com/drconsole/drconsole/model"
)

// What the cut left is a lower bound, and an unknown is said as unknown.
func TestFailedOverCut(t *testing.T) {
	at := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC).UnixMilli()
	rpo, lag := int64(300_000), int64(149_437)
	const when = " as the console last read it before the stop (2026-12-04 10:00:00 UTC)"
	for _, c := range []struct {
		f    model.FailedOver
		want string
	}{
		{model.FailedOver{CutAtMs: at, CutRPOMs: &rpo, CutLagOffsets: &lag}, "at least 5 m 00 s of data (149,437 offsets)," + when},
		{model.FailedOver{CutAtMs: at, CutLagOffsets: &lag}, "at least 149,437 offsets (their age unknown)," + when},
		{model.FailedOver{CutAtMs: at}, "unknown: the console had no lag figure" + when},
		{model.FailedOver{}, "not recorded by the run's stop step"},
	} {
		if got := FailedOverCut(&c.f); got != c.want {
			t.Errorf("%+v: %q, want %q", c.f, got, c.want)
		}
	}
}

// An offsets total that leaves out partitions of unknown lag, or rests on
// a read of a cluster that no longer answers, is only a lower bound: the
// card and the flow page say "≥".
func TestOffsetsBehindMarkedAsLowerBound(t *testing.T) {
	n := int64(67)
	for _, s := range []*FlowSnapshot{
		{Flow: &FlowConfig{Name: "f"}, TotalLagMessages: &n, Unknown: 3},
		{Flow: &FlowConfig{Name: "f"}, TotalLagMessages: &n, Bound: "the primary is unreachable"},
	} {
		if got := boundMark(s) + Int(s.TotalLagMessages); got != "≥ 67" {
			t.Errorf("unknown %d, bound %q: %q, want ≥ 67", s.Unknown, s.Bound, got)
		}
	}
	exact := &FlowSnapshot{Flow: &FlowConfig{Name: "f"}, TotalLagMessages: &n}
	if got := boundMark(exact); got != "" {
		t.Errorf("an exact total marked %q", got)
	}
}
