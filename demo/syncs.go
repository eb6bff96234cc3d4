package demo

import "github.com/drconsole/drconsole/model"

// offsetLagMax is MM2's offset.lag.max default.
const offsetLagMax = 100

// syncHistoryMax bounds the in-memory sync history per partition that
// checkpoints translate against; older offsets become "too old", as they do
// in MM2's sparse OffsetSyncStore.
const syncHistoryMax = 1000

type topicPartition struct {
	topic     string
	partition int32
}

// partitionSyncState is MirrorSourceTask's per-partition state.
type partitionSyncState struct {
	prevUp, prevDown, lastSyncDown int64
}

// syncWriter decides when to emit offset syncs, following MM2 3.7+
// OffsetSyncWriter (mm2.md §3.1). Urgent syncs go out right away, in order;
// MM2 does the same unless 10 are already in flight, which never happens
// here because syncs are written synchronously after each copied batch.
// The latest non-urgent sync per partition waits for the next commit.
type syncWriter struct {
	state   map[topicPartition]*partitionSyncState
	urgent  []model.OffsetSync
	delayed map[topicPartition]model.OffsetSync
}

func newSyncWriter() *syncWriter {
	return &syncWriter{
		state:   make(map[topicPartition]*partitionSyncState),
		delayed: make(map[topicPartition]model.OffsetSync),
	}
}

// record is commitRecord: the record at upstream offset up was acked
// downstream at down.
func (w *syncWriter) record(tp topicPartition, up, down int64) {
	st := w.state[tp]
	if st == nil {
		st = &partitionSyncState{prevUp: -1, prevDown: -1, lastSyncDown: -1}
		w.state[tp] = st
	}
	urgent := st.lastSyncDown == -1 || // first record since start
		down-(st.lastSyncDown+1) >= offsetLagMax || // "+1" as in the translation rule
		up-st.prevUp != 1 || // upstream gap: txn markers, compaction, retention
		down < st.prevDown // downstream truncation
	if urgent {
		st.lastSyncDown = down
	}
	st.prevUp, st.prevDown = up, down
	sync := model.OffsetSync{Topic: tp.topic, Partition: tp.partition, Upstream: up, Downstream: down}
	if urgent {
		w.urgent = append(w.urgent, sync)
		delete(w.delayed, tp)
		return
	}
	w.delayed[tp] = sync
}

// takeUrgent returns the urgent syncs to send now, in emission order.
func (w *syncWriter) takeUrgent() []model.OffsetSync {
	out := w.urgent
	w.urgent = nil
	return out
}

// takeAll is task.commit(): the urgent syncs plus every delayed one.
func (w *syncWriter) takeAll() []model.OffsetSync {
	out := w.takeUrgent()
	for tp, s := range w.delayed {
		out = append(out, s)
		delete(w.delayed, tp)
	}
	return out
}
