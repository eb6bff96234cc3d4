package kafka

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// MirrorMaker 2 reads the source with read_uncommitted and copies records of
// aborted transactions as ordinary records: a DR consumer reads records no
// reader of the primary (read_committed) ever saw. The lag reader already
// fetches the batches just past MM2's position; this decodes which of their
// records belong to aborted transactions.

const attrTransactional = 0x10

// AbortedBatch is one batch of an aborted transaction's data records.
type AbortedBatch struct {
	First, Last int64 // offsets of the batch's first and last record
	Records     int64
}

// ScanAborted returns the data batches in batches (concatenated v2 record
// batches from a Fetch) that belong to transactions aborted within the same
// response, at or after offset from. A transaction is known aborted when its
// ABORT marker is in the response, or when the broker listed it in
// abortedTxns (it does so under read_committed). Batches of a transaction
// whose end is not in the response are left out: undecided, not assumed;
// undecided reports them; next is the offset after the last whole batch
// read. Input is untrusted: a malformed batch ends the scan.
func ScanAborted(batches []byte, abortedTxns []kmsg.FetchResponseTopicPartitionAbortedTransaction, from int64) (out []AbortedBatch, undecided bool, next int64) {
	listed := map[int64]int64{} // producer id -> first offset, from the broker
	for _, a := range abortedTxns {
		listed[a.ProducerID] = a.FirstOffset
	}
	open := map[int64][]AbortedBatch{} // transactional batches per producer, awaiting their marker
	next = from
	for raw := range v2Batches(batches) {
		var b kmsg.RecordBatch
		if err := b.ReadFrom(raw); err != nil {
			break
		}
		last := b.FirstOffset + int64(b.LastOffsetDelta)
		next = max(next, last+1)
		if b.Attributes&attrTransactional == 0 {
			continue
		}
		if b.Attributes&attrControl != 0 {
			if abort, ok := controlIsAbort(b); ok && abort {
				out = append(out, open[b.ProducerID]...)
			}
			delete(open, b.ProducerID)
			delete(listed, b.ProducerID)
			continue
		}
		if last < from || b.NumRecords <= 0 {
			continue
		}
		ab := AbortedBatch{First: max(b.FirstOffset, from), Last: last, Records: int64(b.NumRecords)}
		if b.FirstOffset < from {
			// Part of the batch lies below from; count only what the
			// offsets allow (compaction may have removed some).
			ab.Records = min(ab.Records, last-from+1)
		}
		if first, ok := listed[b.ProducerID]; ok && b.FirstOffset >= first {
			out = append(out, ab)
			continue
		}
		open[b.ProducerID] = append(open[b.ProducerID], ab)
	}
	return out, len(open) > 0, next
}

// controlIsAbort decodes the one record of a control batch: its key is
// int16 version, int16 type (0 = ABORT, 1 = COMMIT).
func controlIsAbort(b kmsg.RecordBatch) (abort, ok bool) {
	if b.Attributes&attrCompression != 0 || b.NumRecords < 1 {
		return false, false
	}
	var r kmsg.Record
	if err := r.ReadFrom(b.Records); err != nil || len(r.Key) < 4 {
		return false, false
	}
	return binary.BigEndian.Uint16(r.Key[2:4]) == 0, true
}

// AbortedLog remembers, per source partition, the aborted batches the lag
// reader has seen, so the console can say how many records of aborted
// transactions MM2 has copied to DR. It only knows batches it saw (the first
// ones past MM2's position at each refresh): the count is a lower bound.
type AbortedLog struct {
	mu    sync.Mutex
	parts map[model.TP]*abortedPart
}

type abortedPart struct {
	pending map[int64]AbortedBatch // by last offset: a batch seen twice counts once
	copied  int64                  // records of batches MM2 has gone past
	upTo    int64                  // offsets below this are folded into copied
}

// Add records batches seen in tp.
func (l *AbortedLog) Add(tp model.TP, bs []AbortedBatch) {
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
		p = &abortedPart{pending: map[int64]AbortedBatch{}}
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
		p.pending, p.upTo = map[int64]AbortedBatch{}, 0
	}
}

// InDR counts the aborted records of tp below replicated: MM2 has copied
// them to DR. It also returns the batches newly found copied. Batches it
// has gone past are folded into a count, so memory stays bounded by what
// lies ahead of MM2.
func (l *AbortedLog) InDR(tp model.TP, replicated int64) (int64, []AbortedBatch) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.parts[tp]
	if p == nil {
		return 0, nil
	}
	var copied []AbortedBatch
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

// AbortedAfter counts the records of batches at or after upstream offset
// from: what a consumer translated from there reads in DR although the
// primary's readers never saw it.
func AbortedAfter(bs []AbortedBatch, from int64) int64 {
	var n int64
	for _, b := range bs {
		if b.Last >= from {
			n += min(b.Records, b.Last-max(b.First, from)+1)
		}
	}
	return n
}

// saveAborted records batches MM2 has copied, so `drconsole translate` can
// warn about them when the primary is gone. A failed write is logged: the
// flow page still shows the count.
func saveAborted(store *storage.Store, flow string, log *slog.Logger) func(model.TP, [16]byte, AbortedBatch) {
	return func(tp model.TP, topicID [16]byte, b AbortedBatch) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := store.AddAbortedBatch(ctx, flow, storage.AbortedBatch{Topic: tp.Topic, TopicID: hex.EncodeToString(topicID[:]),
			Partition: tp.Partition, First: b.First, Last: b.Last, Records: b.Records, AtMs: time.Now().UnixMilli()})
		if err != nil {
			log.Warn("recording records of aborted transactions copied to DR", "flow", flow, "err", err)
		}
	}
}

// AbortedInDRAfter is what `drconsole translate` warns about: per source
// partition, the records of aborted transactions at or after each offset
// that MM2 copied to DR, from the batches stored for the topic's newest
// incarnation (topic id).
func AbortedInDRAfter(stored []storage.AbortedBatch, tp model.TP, from int64) int64 {
	newest, at := "", int64(-1)
	for _, b := range stored {
		if b.Topic == tp.Topic && b.AtMs >= at {
			newest, at = b.TopicID, b.AtMs
		}
	}
	var bs []AbortedBatch
	for _, b := range stored {
		if b.Topic == tp.Topic && b.Partition == tp.Partition && b.TopicID == newest {
			bs = append(bs, AbortedBatch{First: b.First, Last: b.Last, Records: b.Records})
		}
	}
	return AbortedAfter(bs, from)
}
