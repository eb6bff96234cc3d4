package kafka

import (
	"context"
	"encoding/binary"
	"iter"
	"maps"
	"sync"

	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Record batch attribute bits (Kafka's DefaultRecordBatch).
const (
	attrCompression   = 0x07
	attrLogAppendTime = 0x08
	attrControl       = 0x20
)

var decompressor = kgo.DefaultDecompressor()

// FirstRecord is what FetchTimestamps learnt about a partition.
type FirstRecord struct {
	// Ms is the timestamp (epoch ms) of the first data record at or after
	// the wanted offset; valid when Found.
	Ms    int64
	Found bool
	// OnlyMarkers: everything from the wanted offset to the high watermark
	// is transaction markers, which MM2 never copies: nothing is missing.
	OnlyMarkers bool
	// HWM is the high watermark the answer was true for.
	HWM int64
	// Aborted are the batches of aborted transactions in the response
	// (ScanAborted): MM2 copies them. RescanOnGrowth: the response reached
	// the high watermark or ended inside an undecided transaction, so what
	// is appended next (more aborted records, a marker) is worth reading
	// while the position holds.
	Aborted        []model.AbortedBatch
	RescanOnGrowth bool
}

// Fetch budgets for FetchTimestamps.
const (
	// sharedPartitionBytes is the per-partition budget of the first, shared
	// fetch: enough for the batch holding the wanted offset in most logs.
	sharedPartitionBytes = 64 << 10
	// maxFollowUps bounds the one-partition fetches of one call; partitions
	// beyond it stay unknown this time (their answers are cached, so the
	// next refresh gets further).
	maxFollowUps = 64
	// followUpParallel is how many follow-up fetches run at once.
	followUpParallel = 4
)

// FetchTimestamps returns, for each partition in want, the timestamp (epoch
// ms) of the first data record at or after the wanted offset. It sends one
// Fetch request per leader broker with a small per-partition byte budget:
// only the first batch containing the offset is needed. A batch larger
// than the budget comes back whole only for the first partition of a
// response (Kafka truncates it elsewhere), so every partition left without
// an answer gets a fetch of its own, where it is first, bounded by
// maxFollowUps. Partitions whose record still could not be read (fetch
// error, leader unknown) are left out.
// ids are the topics' ids (Fetch v13+ names topics by id).
func FetchTimestamps(ctx context.Context, cl *Client, leaders Leaders, ids map[string][16]byte, want map[model.TP]int64) map[model.TP]FirstRecord {
	leaderOf := func(tp model.TP) (int32, bool) {
		ls := leaders[tp.Topic]
		if tp.Partition < 0 || int(tp.Partition) >= len(ls) {
			return 0, false
		}
		return ls[tp.Partition], ls[tp.Partition] >= 0
	}
	byLeader := map[int32][]model.TP{}
	for tp := range want {
		if l, ok := leaderOf(tp); ok {
			byLeader[l] = append(byLeader[l], tp)
		}
	}
	out := map[model.TP]FirstRecord{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for leader, tps := range byLeader {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := fetchFirst(ctx, cl, leader, ids, tps, want, sharedPartitionBytes)
			mu.Lock()
			maps.Copy(out, got)
			mu.Unlock()
		}()
	}
	wg.Wait()

	var missing []model.TP
	for tp := range want {
		if _, ok := out[tp]; !ok {
			if _, ok := leaderOf(tp); ok {
				missing = append(missing, tp)
			}
		}
	}
	mm2.SortTPs(missing)
	missing = missing[:min(len(missing), maxFollowUps)]
	sem := make(chan struct{}, followUpParallel)
	for _, tp := range missing {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			l, _ := leaderOf(tp)
			// Alone in the request, its first batch comes back whole
			// whatever its size.
			got := fetchFirst(ctx, cl, l, ids, []model.TP{tp}, want, sharedPartitionBytes)
			mu.Lock()
			maps.Copy(out, got)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// fetchFirst sends one Fetch to leader for tps at their wanted offsets and
// scans what comes back.
func fetchFirst(ctx context.Context, cl *kgo.Client, leader int32, topicIDs map[string][16]byte, tps []model.TP, want map[model.TP]int64, partBytes int32) map[model.TP]FirstRecord {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxWaitMillis = 0
	req.MinBytes = 1
	req.MaxBytes = 8 << 20
	req.IsolationLevel = 0 // read_uncommitted: what MM2's consumer sees
	req.SessionEpoch = -1  // no fetch session
	ids := map[[16]byte]string{}
	byTopic := map[string]int{}
	for _, tp := range tps {
		i, ok := byTopic[tp.Topic]
		if !ok {
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic = tp.Topic
			rt.TopicID = topicIDs[tp.Topic] // Fetch v13+ names topics by id
			ids[rt.TopicID] = tp.Topic
			i = len(req.Topics)
			byTopic[tp.Topic] = i
			req.Topics = append(req.Topics, rt)
		}
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = tp.Partition
		rp.FetchOffset = want[tp]
		rp.PartitionMaxBytes = partBytes
		rp.CurrentLeaderEpoch = -1
		rp.LastFetchedEpoch = -1
		rp.LogStartOffset = -1
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	}
	out := map[model.TP]FirstRecord{}
	resp, err := req.RequestWith(ctx, cl.Broker(int(leader)))
	if err != nil {
		return out
	}

	for _, t := range resp.Topics {
		topic := t.Topic
		if resp.Version >= 13 {
			topic = ids[t.TopicID]
		}
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				continue
			}
			tp := model.TP{Topic: topic, Partition: p.Partition}
			if fr := ScanFirstRecord(p.RecordBatches, want[tp], p.HighWatermark); fr.Found || fr.OnlyMarkers {
				fr.HWM = p.HighWatermark
				var undecided bool
				var next int64
				fr.Aborted, undecided, next = ScanAborted(p.RecordBatches, p.AbortedTransactions, want[tp])
				fr.RescanOnGrowth = undecided || next >= p.HighWatermark
				out[tp] = fr
			}
		}
	}
	return out
}

// v2Batches yields the whole v2 record batches in a Fetch response's
// concatenated batches: older formats are passed over (only v2 carries
// per-record deltas), and a trailing partial batch or a malformed length
// ends it.
func v2Batches(batches []byte) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		for len(batches) >= 17 {
			length := int32(binary.BigEndian.Uint32(batches[8:12]))
			total := 12 + int(length)
			if length < 5 || total > len(batches) { // shorter than its own magic byte: malformed
				return
			}
			raw := batches[:total]
			batches = batches[total:]
			if raw[16] == 2 && !yield(raw) { // byte 16: magic
				return
			}
		}
	}
}

// ScanFirstRecord scans concatenated v2 record batches (as a Fetch response
// holds them) for the first data record with offset >= from. A trailing
// partial batch is ignored; hwm is the partition's high watermark.
func ScanFirstRecord(batches []byte, from, hwm int64) FirstRecord {
	next := from // the first offset not yet accounted for
	for raw := range v2Batches(batches) {
		var b kmsg.RecordBatch
		if err := b.ReadFrom(raw); err != nil {
			return FirstRecord{}
		}
		last := b.FirstOffset + int64(b.LastOffsetDelta)
		if last < from {
			continue
		}
		if b.Attributes&attrControl != 0 {
			if b.FirstOffset <= next {
				next = last + 1
			}
			continue
		}
		if b.Attributes&attrLogAppendTime != 0 {
			return FirstRecord{Ms: b.MaxTimestamp, Found: true} // every record carries the append time
		}
		records := b.Records
		if codec := b.Attributes & attrCompression; codec != 0 {
			var err error
			if records, err = decompressor.Decompress(records, kgo.CompressionCodecType(codec)); err != nil {
				return FirstRecord{}
			}
		}
		if ms, ok := scanRecords(records, int(b.NumRecords), b.FirstOffset, b.FirstTimestamp, from); ok {
			return FirstRecord{Ms: ms, Found: true}
		}
		return FirstRecord{} // records below from only, but the batch reached past it: malformed
	}
	return FirstRecord{OnlyMarkers: next >= hwm && hwm > from}
}

// scanRecords walks the records of a batch: varint length, int8 attributes,
// varlong timestamp delta, varint offset delta, then fields we skip.
func scanRecords(b []byte, n int, firstOffset, firstTs, from int64) (int64, bool) {
	for range n {
		length, k := binary.Varint(b)
		if k <= 0 || length < 0 || int(length) > len(b)-k {
			return 0, false
		}
		rec := b[k : k+int(length)]
		b = b[k+int(length):]
		if len(rec) < 1 {
			return 0, false
		}
		tsDelta, k1 := binary.Varint(rec[1:])
		if k1 <= 0 {
			return 0, false
		}
		offDelta, k2 := binary.Varint(rec[1+k1:])
		if k2 <= 0 {
			return 0, false
		}
		if firstOffset+offDelta >= from {
			return firstTs + tsDelta, true
		}
	}
	return 0, false
}
