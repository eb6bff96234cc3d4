package kafka

import (
	"encoding/binary"

	"github.com/drconsole/drconsole/model"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// MirrorMaker 2 reads the source with read_uncommitted and copies records of
// aborted transactions as ordinary records: a DR consumer reads records no
// reader of the primary (read_committed) ever saw. The lag reader already
// fetches the batches just past MM2's position; this decodes which of their
// records belong to aborted transactions.

const attrTransactional = 0x10

// ScanAborted returns the data batches in batches (concatenated v2 record
// batches from a Fetch) that belong to transactions aborted within the same
// response, at or after offset from. A transaction is known aborted when its
// ABORT marker is in the response, or when the broker listed it in
// abortedTxns (it does so under read_committed). Batches of a transaction
// whose end is not in the response are left out: undecided, not assumed;
// undecided reports them; next is the offset after the last whole batch
// read. Input is untrusted: a malformed batch ends the scan.
func ScanAborted(batches []byte, abortedTxns []kmsg.FetchResponseTopicPartitionAbortedTransaction, from int64) (out []model.AbortedBatch, undecided bool, next int64) {
	listed := map[int64]int64{} // producer id -> first offset, from the broker
	for _, a := range abortedTxns {
		listed[a.ProducerID] = a.FirstOffset
	}
	open := map[int64][]model.AbortedBatch{} // transactional batches per producer, awaiting their marker
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
		ab := model.AbortedBatch{First: max(b.FirstOffset, from), Last: last, Records: int64(b.NumRecords)}
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
