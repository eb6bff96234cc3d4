package kafka

import (
	"context"
	"encoding/binary"
	"sync"

	"github.com/twmb/franz-go/pkg/kadm"
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
	Aborted        []AbortedBatch
	RescanOnGrowth bool
}

// FetchTimestamps returns, for each partition in want, the timestamp (epoch
// ms) of the first data record at or after the wanted offset. It sends one
// Fetch request per leader broker, with a small per-partition byte budget:
// only the first batch containing the offset is needed. Partitions whose
// record could not be read (fetch error, batch past the byte budget) are
// left out.
func FetchTimestamps(ctx context.Context, cl *kgo.Client, topics kadm.TopicDetails, want map[TP]int64) map[TP]FirstRecord {
	byLeader := map[int32]map[string][]int32{}
	for tp := range want {
		td, ok := topics[tp.Topic]
		if !ok {
			continue
		}
		pd, ok := td.Partitions[tp.Partition]
		if !ok || pd.Leader < 0 {
			continue
		}
		if byLeader[pd.Leader] == nil {
			byLeader[pd.Leader] = map[string][]int32{}
		}
		byLeader[pd.Leader][tp.Topic] = append(byLeader[pd.Leader][tp.Topic], tp.Partition)
	}
	out := map[TP]FirstRecord{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for leader, parts := range byLeader {
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID = -1
		req.MaxWaitMillis = 0
		req.MinBytes = 1
		req.MaxBytes = 8 << 20
		req.IsolationLevel = 0 // read_uncommitted: what MM2's consumer sees
		req.SessionEpoch = -1  // no fetch session
		ids := map[[16]byte]string{}
		for topic, ps := range parts {
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic = topic
			rt.TopicID = topics[topic].ID // Fetch v13+ names topics by id
			ids[rt.TopicID] = topic
			for _, p := range ps {
				rp := kmsg.NewFetchRequestTopicPartition()
				rp.Partition = p
				rp.FetchOffset = want[TP{topic, p}]
				rp.PartitionMaxBytes = 64 << 10
				rp.CurrentLeaderEpoch = -1
				rp.LastFetchedEpoch = -1
				rp.LogStartOffset = -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			req.Topics = append(req.Topics, rt)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := req.RequestWith(ctx, cl.Broker(int(leader)))
			if err != nil {
				return
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
					tp := TP{topic, p.Partition}
					if fr := ScanFirstRecord(p.RecordBatches, want[tp], p.HighWatermark); fr.Found || fr.OnlyMarkers {
						fr.HWM = p.HighWatermark
						var undecided bool
						var next int64
						fr.Aborted, undecided, next = ScanAborted(p.RecordBatches, p.AbortedTransactions, want[tp])
						fr.RescanOnGrowth = undecided || next >= p.HighWatermark
						mu.Lock()
						out[tp] = fr
						mu.Unlock()
					}
				}
			}
		}()
	}
	wg.Wait()
	return out
}

// ScanFirstRecord scans concatenated v2 record batches (as a Fetch response
// holds them) for the first data record with offset >= from. A trailing
// partial batch is ignored; hwm is the partition's high watermark.
func ScanFirstRecord(batches []byte, from, hwm int64) FirstRecord {
	next := from // the first offset not yet accounted for
	for len(batches) >= 17 {
		length := int32(binary.BigEndian.Uint32(batches[8:12]))
		total := 12 + int(length)
		if length < 0 || total > len(batches) {
			break
		}
		raw := batches[:total]
		batches = batches[total:]
		if raw[16] != 2 { // magic: only v2 batches carry per-record deltas
			continue
		}
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
