package translation

import (
	"context"
	"testing"

	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
)

// The targets of a savepoint with 1,000 splits (10 topics of 100
// partitions, 200 syncs each, every tenth partition without syncs and
// chosen): what the rewrite step computes before writing, and what its
// preview and safety rule compute again.
func BenchmarkRewriteTargets1000Splits(b *testing.B) {
	index := mm2.NewSyncIndex()
	var splits []flink.PartitionOffset
	choices := map[string]model.Choice{}
	var log int64
	for topic := range 10 {
		name := "topic-" + string(rune('a'+topic))
		for p := range int32(100) {
			splits = append(splits, flink.PartitionOffset{Topic: name, Partition: p, Next: 150_000 + int64(p)})
			if p%10 == 0 {
				choices[splits[len(splits)-1].Key()] = model.Choice{Kind: model.ChoiceEarliest, By: "alice"}
				continue
			}
			var syncs []model.OffsetSync
			for i := range int64(200) {
				syncs = append(syncs, model.OffsetSync{Topic: name, Partition: p, Upstream: i * 1000, Downstream: i * 990, LogOffset: log})
				log++
			}
			index.Add(syncs)
		}
	}
	g := &GroupTranslator{Alias: "primary", Policy: mm2.ReplicationPolicy{}, Index: index}
	b.ReportAllocs()
	for b.Loop() {
		t, err := g.RewriteTargets(context.Background(), splits, TargetOptions{Choices: choices})
		if err != nil || !t.Complete() || len(t.Targets()) != 1000 {
			b.Fatal(err, t.Err())
		}
	}
}
