package demo

import (
	"slices"
	"testing"

	"github.com/drconsole/drconsole/model"
)

// TestSyncWriterRule checks each urgency condition of MM2's OffsetSyncWriter
// and that only the latest non-urgent sync is flushed on commit.
func TestSyncWriterRule(t *testing.T) {
	tp := topicPartition{"orders", 1}
	sync := func(up, down int64) model.OffsetSync {
		return model.OffsetSync{Topic: "orders", Partition: 1, Upstream: up, Downstream: down}
	}
	tests := []struct {
		name       string
		records    [][2]int64 // (up, down) acked in order
		wantUrgent []model.OffsetSync
		wantCommit []model.OffsetSync // what commit flushes afterwards
	}{
		{"first record is urgent", [][2]int64{{5, 0}}, []model.OffsetSync{sync(5, 0)}, nil},
		{"contiguous records wait for commit, latest wins",
			[][2]int64{{0, 0}, {1, 1}, {2, 2}},
			[]model.OffsetSync{sync(0, 0)}, []model.OffsetSync{sync(2, 2)}},
		{"upstream gap (txn marker) is urgent",
			[][2]int64{{0, 0}, {1, 1}, {3, 2}, {4, 3}},
			[]model.OffsetSync{sync(0, 0), sync(3, 2)}, []model.OffsetSync{sync(4, 3)}},
		{"downstream truncation is urgent",
			[][2]int64{{0, 10}, {1, 11}, {2, 4}},
			[]model.OffsetSync{sync(0, 10), sync(2, 4)}, nil},
		{"lag of offset.lag.max since the last sync, counted with +1",
			lagRecords(102), // downs 0..101: 101-(0+1) = 100 >= 100 at down 101
			[]model.OffsetSync{sync(0, 0), sync(101, 101)}, nil},
		{"one below offset.lag.max is not urgent",
			lagRecords(101),
			[]model.OffsetSync{sync(0, 0)}, []model.OffsetSync{sync(100, 100)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newSyncWriter()
			for _, r := range tt.records {
				w.record(tp, r[0], r[1])
			}
			if got := w.takeUrgent(); !slices.Equal(got, tt.wantUrgent) {
				t.Errorf("urgent = %v, want %v", got, tt.wantUrgent)
			}
			if got := w.takeAll(); !slices.Equal(got, tt.wantCommit) {
				t.Errorf("commit = %v, want %v", got, tt.wantCommit)
			}
			if got := w.takeAll(); len(got) != 0 {
				t.Errorf("second commit = %v, want nothing", got)
			}
		})
	}
}

func lagRecords(n int) [][2]int64 {
	out := make([][2]int64, n)
	for i := range out {
		out[i] = [2]int64{int64(i), int64(i)}
	}
	return out
}
