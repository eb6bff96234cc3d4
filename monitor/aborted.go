package monitor

import (
	"context"
	"encoding/hex"
	"log/slog"
	"sync"
	"time"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// AbortedLog remembers, per source partition, the aborted batches the lag
// reader has seen, so the console can say how many records of aborted
// transactions MM2 has copied to DR. It only knows batches it saw (the first
// ones past MM2's position at each refresh): the count is a lower bound.
type AbortedLog struct {
	mu    sync.Mutex
	parts map[model.TP]*abortedPart
}

type abortedPart struct {
	pending map[int64]model.AbortedBatch // by last offset: a batch seen twice counts once
	copied  int64                        // records of batches MM2 has gone past
	upTo    int64                        // offsets below this are folded into copied
}

// Add records batches seen in tp.
func (l *AbortedLog) Add(tp model.TP, bs []model.AbortedBatch) {
	if len(bs) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.parts == nil {
		l.parts = map[model.TP]*abortedPart{}
	}
	p := l.parts[tp]
	if p == nil {
		p = &abortedPart{pending: map[int64]model.AbortedBatch{}}
		l.parts[tp] = p
	}
	for _, b := range bs {
		if b.Last < p.upTo {
			continue // already counted
		}
		if old, ok := p.pending[b.Last]; !ok || b.Records > old.Records {
			p.pending[b.Last] = b
		}
	}
}

// Forget starts tp over on a new source log (topic recreated): batches of
// the old log not yet copied are dropped and offsets count from the start
// again. What the old log already put in DR stays counted: DR still holds it.
func (l *AbortedLog) Forget(tp model.TP) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p := l.parts[tp]; p != nil {
		p.pending, p.upTo = map[int64]model.AbortedBatch{}, 0
	}
}

// InDR counts the aborted records of tp below replicated: MM2 has copied
// them to DR. It also returns the batches newly found copied. Batches it
// has gone past are folded into a count, so memory stays bounded by what
// lies ahead of MM2.
func (l *AbortedLog) InDR(tp model.TP, replicated int64) (int64, []model.AbortedBatch) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.parts[tp]
	if p == nil {
		return 0, nil
	}
	var copied []model.AbortedBatch
	for last, b := range p.pending {
		if last < replicated {
			p.copied += b.Records
			copied = append(copied, b)
			delete(p.pending, last)
		}
	}
	p.upTo = max(p.upTo, replicated)
	return p.copied, copied
}

// saveAborted records batches MM2 has copied, so `drconsole translate` can
// warn about them when the primary is gone. A failed write is logged: the
// flow page still shows the count.
func saveAborted(store *storage.Store, flow string, log *slog.Logger) func(model.TP, [16]byte, model.AbortedBatch) {
	return func(tp model.TP, topicID [16]byte, b model.AbortedBatch) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := store.AddAbortedBatch(ctx, flow, storage.AbortedBatch{Topic: tp.Topic, TopicID: hex.EncodeToString(topicID[:]),
			Partition: tp.Partition, First: b.First, Last: b.Last, Records: b.Records, AtMs: time.Now().UnixMilli()})
		if err != nil {
			log.Warn("recording records of aborted transactions copied to DR", "flow", flow, "err", err)
		}
	}
}
