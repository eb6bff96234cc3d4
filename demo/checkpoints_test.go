package demo

import (
	"testing"

	"github.com/drconsole/drconsole/model"
	"github.com/twmb/franz-go/pkg/kadm"
)

// TestCheckpointEmission walks one group/partition through MM2's rule:
// translate with +1, skip what cannot be translated, emit the first
// checkpoint, then only on upstream rewind or downstream progress.
func TestCheckpointEmission(t *testing.T) {
	tp := topicPartition{"orders", 0}
	m := &mirror{history: map[topicPartition][]model.OffsetSync{}}
	c := &mirrorCheckpoints{m: m, last: map[checkpointKey]model.Checkpoint{}}
	setSyncs := func(syncs ...[2]int64) {
		h := make([]model.OffsetSync, len(syncs))
		for i, s := range syncs {
			h[i] = model.OffsetSync{Topic: tp.topic, Partition: tp.partition, Upstream: s[0], Downstream: s[1]}
		}
		m.history[tp] = h
	}
	steps := []struct {
		name     string
		syncs    [][2]int64
		at       int64
		wantEmit bool
		wantDown int64
	}{
		{"no syncs: nothing to translate", nil, 10, false, 0},
		{"older than every sync", [][2]int64{{20, 10}}, 10, false, 0},
		{"first checkpoint, exact", [][2]int64{{20, 10}}, 20, true, 10},
		{"same offset again", [][2]int64{{20, 10}}, 20, false, 0},
		{"upstream ahead of the sync: +1", [][2]int64{{20, 10}}, 25, true, 11},
		{"upstream further, downstream unchanged", [][2]int64{{20, 10}}, 30, false, 0},
		{"new sync moves downstream forward", [][2]int64{{20, 10}, {28, 16}}, 30, true, 17},
		{"upstream rewind is emitted even though downstream goes back", [][2]int64{{20, 10}, {28, 16}}, 20, true, 10},
	}
	for _, st := range steps {
		setSyncs(st.syncs...)
		cp, emit := c.checkpoint("billing", kadm.OffsetResponse{Offset: kadm.Offset{Topic: tp.topic, Partition: tp.partition, At: st.at, Metadata: "m"}})
		if emit != st.wantEmit {
			t.Fatalf("%s: emit = %v, want %v (%+v)", st.name, emit, st.wantEmit, cp)
		}
		if !emit {
			continue
		}
		want := model.Checkpoint{Group: "billing", Topic: "orders", Partition: 0, Upstream: st.at, Downstream: st.wantDown, Metadata: "m"}
		if cp != want {
			t.Fatalf("%s: checkpoint = %+v, want %+v", st.name, cp, want)
		}
		c.remember(cp)
	}
	if _, emit := c.checkpoint("billing", kadm.OffsetResponse{Offset: kadm.Offset{Topic: "heartbeats", At: 5}}); emit {
		t.Error("checkpoint emitted for a topic that is not a data topic")
	}
}
