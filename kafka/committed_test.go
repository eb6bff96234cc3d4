package kafka

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// batch is a v2 record batch header with n records from first, as Kafka
// writes it (records left empty: ScanCommitted reads headers, and the
// record of a control batch).
func batch(first int64, n int32, attrs int16, pid int64, records []byte) []byte {
	b := kmsg.RecordBatch{FirstOffset: first, Magic: 2, Attributes: attrs, LastOffsetDelta: n - 1, ProducerID: pid, NumRecords: n, Records: records}
	raw := b.AppendTo(nil)
	// AppendTo writes Length as given: fix it to what follows it.
	l := int32(len(raw) - 12)
	raw[8], raw[9], raw[10], raw[11] = byte(l>>24), byte(l>>16), byte(l>>8), byte(l)
	return raw
}

func marker(offset, pid int64, commit bool) []byte {
	r := kmsg.Record{Key: []byte{0, 0, 0, 0}}
	if commit {
		r.Key[3] = 1
	}
	return batch(offset, 1, attrTransactional|attrControl, pid, r.AppendTo(nil))
}

// Records of committed transactions count, markers and aborted or
// undecided ones do not, and a batch never counts more than the span's
// offsets it covers.
func TestScanCommitted(t *testing.T) {
	var log []byte
	log = append(log, batch(0, 5, attrTransactional, 7, nil)...) // 0-4 committed
	log = append(log, marker(5, 7, true)...)
	log = append(log, batch(6, 3, attrTransactional, 7, nil)...) // 6-8 aborted
	log = append(log, marker(9, 7, false)...)
	log = append(log, batch(10, 4, 0, -1, nil)...)                // 10-13 no transaction
	log = append(log, batch(14, 2, attrTransactional, 8, nil)...) // 14-15: marker not in the batches
	for _, tc := range []struct {
		from, to, want, next int64
	}{
		{0, 14, 9, 14}, {1, 14, 8, 14}, {0, 5, 5, 5}, {0, 12, 7, 12}, {6, 10, 0, 10},
		// Batches short of to: pid 8's transaction is undecided here.
		{0, 20, 9, 16}, {14, 20, 0, 16},
	} {
		if n, next := ScanCommitted(log, nil, tc.from, tc.to); n != tc.want || next != tc.next {
			t.Errorf("[%d, %d): %d records (next %d), want %d (next %d)", tc.from, tc.to, n, next, tc.want, tc.next)
		}
	}
	// Read through to (the last stable offset, below which every
	// transaction is decided), the broker's list decides a transaction
	// whose marker lies past it: listed aborted, it does not count;
	// unlisted, it committed.
	aborted := []kmsg.FetchResponseTopicPartitionAbortedTransaction{{ProducerID: 8, FirstOffset: 14}}
	if n, _ := ScanCommitted(log, aborted, 10, 16); n != 4 {
		t.Errorf("listed aborted: %d, want 4", n)
	}
	if n, _ := ScanCommitted(log, nil, 10, 16); n != 6 {
		t.Errorf("below the last stable offset, unlisted: %d, want 6", n)
	}
	// A batch claiming more records than its offsets hold.
	liar := batch(0, 3, 0, -1, nil)
	liar[57], liar[58], liar[59], liar[60] = 0, 0, 0x10, 0 // NumRecords 4096
	if n, _ := ScanCommitted(liar, nil, 0, 100); n > 3 {
		t.Errorf("a batch of 3 offsets counted %d records", n)
	}
}

func FuzzScanCommitted(f *testing.F) {
	f.Add(append(batch(0, 5, attrTransactional, 7, nil), marker(5, 7, true)...), int64(0), int64(6))
	f.Add(batch(10, 4, 0, -1, nil), int64(11), int64(13))
	f.Fuzz(func(t *testing.T, raw []byte, from, to int64) {
		if from < 0 || to < from || to-from > 1<<20 {
			return
		}
		n, next := ScanCommitted(raw, nil, from, to)
		if n < 0 || n > to-from || next < from || next > to {
			t.Fatalf("[%d, %d): n %d next %d", from, to, n, next)
		}
	})
}
