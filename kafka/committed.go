package kafka

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
)

// MirrorMaker 2 with exactly-once support (KIP-618) writes DR in
// transactions: every transaction ends with a commit marker, which takes an
// offset but is no copied record, and a transaction left open by a killed
// task holds offsets that no reader of DR will ever see. Counting DR
// offsets past an offset sync as copied records would overstate what DR
// holds; CountCommitted counts the records themselves.

// Span is a range of offsets [From, To).
type Span struct{ From, To int64 }

// Budgets for CountCommitted: a shared fetch per leader, then one fetch of
// its own for each partition the shared one did not cover (bounded).
const (
	countSharedBytes   = 256 << 10
	countFollowUpBytes = 4 << 20
)

// Counted is CountCommitted's answer for a partition: N records, and
// whether the span was read through (Whole) or N is what was read of it.
type Counted struct {
	N     int64
	Whole bool
}

// CountCommitted returns, for each partition of spans, a lower bound on the
// data records in its span that a read_committed reader sees: records of
// committed transactions and of no transaction. Transaction markers,
// records of aborted transactions and records whose transaction's marker
// was not read do not count; neither does what the fetch did not reach. A
// partition whose leader is unknown or whose fetch failed is left out
// (unknown, not 0). ids are the topics' ids.
func CountCommitted(ctx context.Context, cl *Client, leaders Leaders, ids map[string][16]byte, spans map[model.TP]Span) map[model.TP]Counted {
	leaderOf := func(tp model.TP) (int32, bool) {
		ls := leaders[tp.Topic]
		if tp.Partition < 0 || int(tp.Partition) >= len(ls) || ls[tp.Partition] < 0 {
			return 0, false
		}
		return ls[tp.Partition], true
	}
	type got struct {
		n    int64
		next int64
	}
	out := map[model.TP]got{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	fetch := func(leader int32, tps []model.TP, bytes int32) {
		defer wg.Done()
		res := countFetch(ctx, cl, leader, ids, tps, spans, bytes)
		mu.Lock()
		for tp, g := range res {
			if old, ok := out[tp]; !ok || g[0] > old.n {
				out[tp] = got{g[0], g[1]}
			}
		}
		mu.Unlock()
	}
	byLeader := map[int32][]model.TP{}
	for tp := range spans {
		if l, ok := leaderOf(tp); ok {
			byLeader[l] = append(byLeader[l], tp)
		}
	}
	for l, tps := range byLeader {
		wg.Add(1)
		go fetch(l, tps, countSharedBytes)
	}
	wg.Wait()
	// A partition the shared fetch did not read to its end: alone in a
	// request, with a larger budget (bounded as FetchTimestamps' follow-ups).
	var short []model.TP
	for tp, g := range out {
		if g.next < spans[tp].To {
			short = append(short, tp)
		}
	}
	mm2.SortTPs(short)
	short = short[:min(len(short), maxFollowUps)]
	sem := make(chan struct{}, followUpParallel)
	for _, tp := range short {
		l, _ := leaderOf(tp)
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			fetch(l, []model.TP{tp}, countFollowUpBytes)
		}()
	}
	wg.Wait()
	counts := make(map[model.TP]Counted, len(out))
	for tp, g := range out {
		counts[tp] = Counted{N: g.n, Whole: g.next >= spans[tp].To}
	}
	return counts
}

// countFetch sends one read_committed Fetch to leader for tps at their
// spans' starts; per partition answered: [count, next offset scanned].
func countFetch(ctx context.Context, cl *kgo.Client, leader int32, topicIDs map[string][16]byte, tps []model.TP, spans map[model.TP]Span, partBytes int32) map[model.TP][2]int64 {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxWaitMillis = 0
	req.MinBytes = 1
	req.MaxBytes = 16 << 20
	req.IsolationLevel = 1 // read_committed: the broker stops at the last stable offset
	req.SessionEpoch = -1
	names := map[[16]byte]string{}
	byTopic := map[string]int{}
	for _, tp := range tps {
		i, ok := byTopic[tp.Topic]
		if !ok {
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic, rt.TopicID = tp.Topic, topicIDs[tp.Topic]
			names[rt.TopicID] = tp.Topic
			i = len(req.Topics)
			byTopic[tp.Topic] = i
			req.Topics = append(req.Topics, rt)
		}
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = tp.Partition
		rp.FetchOffset = spans[tp].From
		rp.PartitionMaxBytes = partBytes
		rp.CurrentLeaderEpoch, rp.LastFetchedEpoch, rp.LogStartOffset = -1, -1, -1
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	}
	out := map[model.TP][2]int64{}
	resp, err := req.RequestWith(ctx, cl.Broker(int(leader)))
	if err != nil {
		return out
	}
	for _, t := range resp.Topics {
		topic := t.Topic
		if resp.Version >= 13 {
			topic = names[t.TopicID]
		}
		for _, p := range t.Partitions {
			tp := model.TP{Topic: topic, Partition: p.Partition}
			sp, ok := spans[tp]
			if !ok || p.ErrorCode != 0 {
				continue
			}
			n, next := ScanCommitted(p.RecordBatches, p.AbortedTransactions, sp.From, sp.To)
			out[tp] = [2]int64{n, next}
		}
	}
	return out
}

// ScanCommitted counts the data records with offsets in [from, to) in
// concatenated v2 record batches (as a read_committed Fetch answers them)
// that a read_committed reader sees: those of no transaction, and those of
// a transaction that committed. A transaction counts as committed when its
// COMMIT marker is read, or, when the batches reach to (the last stable
// offset, below which every transaction is decided), when abortedTxns (the
// broker's list for the fetch) does not name it. Records of an aborted
// transaction or of one still undecided here do not count. A batch only
// partly inside the span counts what its offsets allow at least
// (compaction may have removed records). next is the offset after the last
// whole batch read, at most to. Input is untrusted: a malformed batch ends
// the scan.
func ScanCommitted(batches []byte, abortedTxns []kmsg.FetchResponseTopicPartitionAbortedTransaction, from, to int64) (n, next int64) {
	type txn struct {
		start, records int64
	}
	open := map[int64]*txn{}        // producer id -> its transaction awaiting a marker
	lastMarker := map[int64]int64{} // producer id -> offset of its newest marker read
	next = from
	covered := from // offsets below this are accounted for
	for raw := range v2Batches(batches) {
		var b kmsg.RecordBatch
		if err := b.ReadFrom(raw); err != nil {
			break
		}
		last := b.FirstOffset + int64(b.LastOffsetDelta)
		if b.FirstOffset >= to {
			next = to
			break
		}
		next = max(next, last+1)
		if b.Attributes&attrControl != 0 {
			covered = max(covered, last+1)
			if abort, ok := controlIsAbort(b); ok && !abort && open[b.ProducerID] != nil {
				n += open[b.ProducerID].records
			}
			delete(open, b.ProducerID) // aborted or unreadable: nothing of it counts
			lastMarker[b.ProducerID] = b.FirstOffset
			continue
		}
		// Never more than the span's offsets the batch covers and no
		// earlier batch did, whatever count it claims.
		lo := max(b.FirstOffset, covered)
		in := max(min(int64(b.NumRecords)-(lo-b.FirstOffset)-max(last-to+1, 0), min(last, to-1)-lo+1), 0)
		covered = max(covered, last+1)
		if b.Attributes&attrTransactional == 0 {
			n += in
			continue
		}
		if open[b.ProducerID] == nil {
			open[b.ProducerID] = &txn{start: b.FirstOffset}
		}
		open[b.ProducerID].records += in
	}
	next = min(next, to)
	if next < to {
		return n, next // markers below to may be unread: the open ones stay undecided
	}
	for pid, tx := range open {
		lm, seen := lastMarker[pid]
		aborted := false
		for _, a := range abortedTxns {
			if a.ProducerID == pid && a.FirstOffset <= tx.start && (!seen || a.FirstOffset > lm) {
				aborted = true
			}
		}
		if !aborted {
			n += tx.records
		}
	}
	return n, next
}
