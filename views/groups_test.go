package views

import (
	"testing"

	"github.com/drconsole/drconsole/model"
)

// What a group's bound and a flow's worst group read as: an unknown is
// said with why, and never as a smaller figure.
func TestGroupFiguresInWords(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	part := func(r *int64) model.GroupPartitionQuality { return model.GroupPartitionQuality{Reread: r} }
	for _, c := range []struct {
		g    model.GroupQuality
		want string
	}{
		{model.GroupQuality{Reread: n(0)}, "0 records"},
		{model.GroupQuality{Reread: n(12345)}, "≤ 12,345 records"},
		{model.GroupQuality{Untranslated: 1, RereadKnown: 7, Partitions: []model.GroupPartitionQuality{part(nil), part(n(7))}},
			"unknown: 1 partition(s) not translated; ≤ 7 on the others"},
		{model.GroupQuality{Untranslated: 2, Partitions: []model.GroupPartitionQuality{part(nil), part(nil)}}, "unknown: 2 partition(s) not translated"},
		{model.GroupQuality{Problem: "no offsets"}, "unknown: no offsets known"},
		// The primary is down: the group may have read on after its last
		// reading, so what that reading bounds is not the whole.
		{model.GroupQuality{OffsetsStale: true, RereadKnown: 19, Partitions: []model.GroupPartitionQuality{part(n(19))}},
			"unknown: ≤ 19 records as of the primary's last reading, plus what the group read after it"},
	} {
		if got := GroupBound(&c.g); got != c.want {
			t.Errorf("GroupBound(%+v) = %q, want %q", c.g, got, c.want)
		}
	}
	for _, c := range []struct {
		f    model.FlowGroups
		want string
	}{
		{model.FlowGroups{}, "no consumer groups yet"},
		{model.FlowGroups{Groups: []model.GroupQuality{{Group: "a", Reread: n(30)}, {Group: "b", Reread: n(2)}}}, "a: ≤ 30 records"},
		{model.FlowGroups{Groups: []model.GroupQuality{{Group: "x", Untranslated: 1, Partitions: []model.GroupPartitionQuality{part(nil)}}, {Group: "a", Reread: n(30)}}},
			"unknown (x: unknown: 1 partition(s) not translated)"},
		{model.FlowGroups{Cap: 1, Over: 4, Groups: []model.GroupQuality{{Group: "a", Reread: n(30)}}}, "unknown: 4 group(s) beyond the cap of 1 not computed"},
		{model.FlowGroups{Err: "storage: locked"}, "unknown: storage: locked"},
	} {
		if got := WorstGroup(&c.f); got != c.want {
			t.Errorf("WorstGroup(%+v) = %q, want %q", c.f, got, c.want)
		}
	}
}
