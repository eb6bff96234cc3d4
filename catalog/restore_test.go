package catalog

import (
	"strings"
	"testing"

	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
)

func partitions(drTopic string, methods ...mm2.Method) *model.Usability {
	u := &model.Usability{}
	for i, m := range methods {
		tp := model.TP{Topic: "orders", Partition: int32(i)}
		u.Partitions = append(u.Partitions, model.PartitionUsability{Source: tp, DR: model.TP{Topic: drTopic, Partition: int32(i)},
			Translation: mm2.Translation{Method: m, Offset: 5}})
		if m != mm2.MethodExact && m != mm2.MethodConservative && m != mm2.MethodPreserved {
			u.Untranslatable = append(u.Untranslatable, mm2.TPKey(tp))
		}
	}
	return u
}

func recommended(s []model.RestoreStrategy) []int {
	var out []int
	for _, x := range s {
		if x.Recommended {
			out = append(out, x.N)
		}
	}
	return out
}

func byN(s []model.RestoreStrategy, n int) model.RestoreStrategy {
	for _, x := range s {
		if x.N == n {
			return x
		}
	}
	return model.RestoreStrategy{}
}

// MirrorMaker 2: the rewrite is recommended once the source state is
// readable and every partition translates or is chosen; until then (or
// when its state cannot be read) the new uid stays recommended, and the
// alternatives keep their trade-offs.
func TestRestoreStrategiesRewriteForMM2(t *testing.T) {
	ok := &model.RewriteState{}
	s, rec := model.RestoreStrategies(model.RestoreFor{Flow: "f", Usability: partitions("orders", mm2.MethodExact, mm2.MethodConservative), Rewrite: ok})
	if got := recommended(s); len(got) != 1 || got[0] != 4 || rec != 2 || !byN(s, 4).Fits || !byN(s, 2).Fits || !byN(s, 3).Fits {
		t.Fatalf("all translate: recommended %v rec %d %+v", got, rec, s)
	}
	if !strings.Contains(byN(s, 4).TradeOff, "same") && !strings.Contains(byN(s, 4).TradeOff, "aligned") || !strings.Contains(byN(s, 2).FitsWhy, "alternative") {
		t.Fatalf("trade-offs: %+v", s)
	}
	// One partition too old: not until it is chosen.
	u := partitions("orders", mm2.MethodExact, mm2.MethodTooOld)
	s, _ = model.RestoreStrategies(model.RestoreFor{Flow: "f", Usability: u, Rewrite: ok})
	if got := recommended(s); len(got) != 1 || got[0] != 2 || byN(s, 4).Fits || !strings.Contains(byN(s, 4).FitsWhy, "orders-1") {
		t.Fatalf("too old, no choice: %v %+v", got, byN(s, 4))
	}
	s, _ = model.RestoreStrategies(model.RestoreFor{Flow: "f", Usability: u, Rewrite: ok, Chosen: []string{"orders-1"}})
	if got := recommended(s); len(got) != 1 || got[0] != 4 {
		t.Fatalf("too old, chosen: %v", got)
	}
	// A start marker needs a choice too; unreadable state or not read: never.
	s, _ = model.RestoreStrategies(model.RestoreFor{Flow: "f", Usability: partitions("orders", mm2.MethodExact), Rewrite: &model.RewriteState{Markers: []string{"orders-0"}}})
	if byN(s, 4).Fits {
		t.Fatalf("marker without a choice fits: %+v", byN(s, 4))
	}
	for _, rw := range []*model.RewriteState{nil, {Err: "its Kafka source is a FlinkKafkaConsumer"}} {
		s, _ = model.RestoreStrategies(model.RestoreFor{Flow: "f", Usability: partitions("orders", mm2.MethodExact), Rewrite: rw})
		if got := recommended(s); byN(s, 4).Fits || len(got) != 1 || got[0] != 2 {
			t.Fatalf("rewrite state %+v: %v %+v", rw, got, byN(s, 4))
		}
	}
	// Every partition chosen: the rewrite, not the timestamp start.
	u = partitions("orders", mm2.MethodUnknown)
	s, _ = model.RestoreStrategies(model.RestoreFor{Flow: "f", Usability: u, Rewrite: ok, Chosen: []string{"orders-0"}})
	if got := recommended(s); len(got) != 1 || got[0] != 4 {
		t.Fatalf("all chosen: %v", got)
	}
}

// Cluster Linking keeps its exact restore unless the link renames topics:
// then the rewrite (rename only) is the recommended one.
func TestRestoreStrategiesRewriteForClusterLinking(t *testing.T) {
	ok := &model.RewriteState{}
	s, rec := model.RestoreStrategies(model.RestoreFor{Flow: "f", ClusterLink: true, Usability: partitions("orders", mm2.MethodPreserved), Rewrite: ok})
	if got := recommended(s); rec != 1 || len(got) != 1 || got[0] != 1 || byN(s, 4).Fits {
		t.Fatalf("same names: %v rec %d %+v", got, rec, byN(s, 4))
	}
	s, rec = model.RestoreStrategies(model.RestoreFor{Flow: "f", ClusterLink: true, Usability: partitions("src.orders", mm2.MethodPreserved), Rewrite: ok})
	if got := recommended(s); rec != 2 || len(got) != 1 || got[0] != 4 || !strings.Contains(byN(s, 4).FitsWhy, "orders → src.orders") {
		t.Fatalf("renamed: %v rec %d %+v", got, rec, byN(s, 4))
	}
	s, _ = model.RestoreStrategies(model.RestoreFor{Flow: "f", ClusterLink: true, Usability: partitions("src.orders", mm2.MethodPreserved)})
	if got := recommended(s); len(got) != 1 || got[0] != 2 {
		t.Fatalf("renamed, state not read: %v", got)
	}
}
