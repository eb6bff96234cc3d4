package mm2

import (
	"fmt"
	"testing"

	"github.com/drconsole/drconsole/model"
)

// BenchmarkTranslate100kPartitions translates one offset in each of 100,000
// partitions (16 syncs each) through the in-memory index, as translating a
// big consumer group or savepoint does. Budget: 50 ms.
func BenchmarkTranslate100kPartitions(b *testing.B) {
	const parts, per = 100_000, 16
	x := NewSyncIndex()
	batch := make([]model.OffsetSync, 0, parts*per)
	var logOff int64
	for k := range per {
		for p := range parts {
			up := int64(k) * 1000
			batch = append(batch, model.OffsetSync{Topic: fmt.Sprintf("t%03d", p%100), Partition: int32(p / 100), Upstream: up, Downstream: up - int64(k), LogOffset: logOff})
			logOff++
		}
	}
	x.Add(batch)
	tps := x.Partitions()
	b.ResetTimer()
	for b.Loop() {
		translated := 0
		for i, tp := range tps {
			if x.Translate(tp, int64(i%per)*1000+500).Translated() {
				translated++
			}
		}
		if translated != parts {
			b.Fatalf("translated %d of %d", translated, parts)
		}
	}
}
