package translation

import (
	"testing"

	"github.com/drconsole/drconsole/model"
)

// The groups find a partition's row by halving a refresh's table; a
// table out of order (none is built so, but nothing else says so) is
// sorted first, never searched as it is.
func TestSortedLagsFindsEveryRowInAnyOrder(t *testing.T) {
	rows := []model.PartitionLag{{Topic: model.Intern("b"), Partition: 1}, {Topic: model.Intern("a"), Partition: 2}, {Topic: model.Intern("b"), Partition: 0}, {Topic: model.Intern("a"), Partition: 10}}
	l := sortedLagsOf(rows)
	for _, r := range rows {
		if p := l.find(model.TP{Topic: r.Topic.String(), Partition: r.Partition}); p == nil || p.Topic != r.Topic || p.Partition != r.Partition {
			t.Errorf("find(%s-%d) = %+v", r.Topic, r.Partition, p)
		}
	}
	for _, tp := range []model.TP{{Topic: "a", Partition: 3}, {Topic: "c", Partition: 0}, {Topic: "", Partition: 0}} {
		if p := l.find(tp); p != nil {
			t.Errorf("find(%s-%d) = %+v, want none", tp.Topic, tp.Partition, p)
		}
	}
	for topic, want := range map[string]bool{"a": true, "b": true, "c": false, "": false, "aa": false} {
		if got := l.hasTopic(topic); got != want {
			t.Errorf("hasTopic(%q) = %v, want %v", topic, got, want)
		}
	}
	if rows[0].Topic.String() != "b" {
		t.Error("the caller's table was reordered")
	}
}
