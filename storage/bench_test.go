package storage_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// BenchmarkApplySyncs measures storing offset syncs as ingestion does: one
// transaction per polled batch, with its resume position.
func BenchmarkApplySyncs(b *testing.B) {
	for _, batch := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			s, _ := openStore(b)
			ctx := context.Background()
			syncs := make([]model.OffsetSync, batch)
			var logOff int64
			b.ResetTimer()
			for b.Loop() {
				for i := range syncs {
					syncs[i] = model.OffsetSync{Topic: "events", Partition: int32(logOff % 1000), Upstream: logOff * 3,
						Downstream: logOff * 2, LogOffset: logOff, RecordMs: logOff}
					logOff++
				}
				if err := s.Apply(ctx, storage.Batch{Flow: "f", Topic: "syncs", NextOffset: logOff, Syncs: syncs}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(logOff)/b.Elapsed().Seconds(), "syncs/s")
		})
	}
}
