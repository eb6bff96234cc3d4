package monitor

import (
	"context"
	"fmt"
	"testing"

	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/model"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Aborted transactions are found from the batches the lag reader fetches
// (read_uncommitted, as MM2 reads): only records whose ABORT marker is in
// view count, committed and plain records never do, and the log counts each
// batch once, once MM2 is past it.
func TestScanAborted(t *testing.T) {
	ctx := context.Background()
	_, cl := newCluster(t, "primary", "orders")
	txn, err := kgo.NewClient(kgo.SeedBrokers(cl.OptValue(kgo.SeedBrokers).([]string)...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.TransactionalID("aborted-test"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(txn.Close)
	wantAborted := int64(0)
	for i, tc := range []struct {
		n      int
		commit bool
	}{{3, true}, {5, false}, {2, true}, {7, false}, {1, false}} {
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for j := range tc.n {
			txn.Produce(ctx, &kgo.Record{Topic: "orders", Partition: 0, Value: fmt.Appendf(nil, "%d-%d", i, j)}, nil)
		}
		if err := txn.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if err := txn.EndTransaction(ctx, kgo.TransactionEndTry(tc.commit)); err != nil {
			t.Fatal(err)
		}
		if !tc.commit {
			wantAborted += int64(tc.n)
		}
		produce(t, cl, &kgo.Record{Topic: "orders", Partition: 0, Value: []byte("plain")})
	}
	leaders, ids, err := kafka.TopicLayout(ctx, cl, []string{"orders"})
	if err != nil {
		t.Fatal(err)
	}
	topics := mirroredOf(leaders, ids)
	tp := model.TP{Topic: "orders", Partition: 0}
	// All decided and read to the end: what is appended next is unread,
	// so the lag reader must read again when the log grows.
	if fr := kafka.FetchTimestamps(ctx, cl, topics.leaders, topics.ids, map[model.TP]int64{tp: 0})[tp]; !fr.RescanOnGrowth {
		t.Error("a response that reached the high watermark is not read again when the log grows")
	}
	// One transaction still open: undecided, never counted.
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := txn.ProduceSync(ctx, &kgo.Record{Topic: "orders", Partition: 0, Value: []byte("open")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	got := kafka.FetchTimestamps(ctx, cl, topics.leaders, topics.ids, map[model.TP]int64{tp: 0})[tp]
	var n int64
	for _, b := range got.Aborted {
		n += b.Records
	}
	if n != wantAborted {
		t.Fatalf("aborted records from offset 0 = %d (%+v), want %d", n, got.Aborted, wantAborted)
	}
	if !got.RescanOnGrowth {
		t.Error("the open transaction was not reported undecided: the lag reader would never read it again")
	}
	var log AbortedLog
	log.Add(tp, got.Aborted)
	log.Add(tp, got.Aborted) // seen again at the next refresh
	first, last := got.Aborted[0], got.Aborted[len(got.Aborted)-1]
	if c, _ := log.InDR(tp, first.First); c != 0 {
		t.Errorf("before MM2 copied any: %d, want 0", c)
	}
	c, copied := log.InDR(tp, last.Last+1)
	if c != wantAborted || model.AbortedAfter(copied, 0) != wantAborted {
		t.Errorf("after MM2 copied all: %d (%d in the batches copied), want %d", c, model.AbortedAfter(copied, 0), wantAborted)
	}
	// A consumer translated from just inside the last aborted batch reads
	// the rest of it.
	if n := model.AbortedAfter(copied, last.Last-1); n != min(2, last.Records) {
		t.Errorf("aborted records after offset %d = %d", last.Last-1, n)
	}
	// A later scan starting past some of them does not count them again.
	from := first.Last + 1
	again := kafka.FetchTimestamps(ctx, cl, topics.leaders, topics.ids, map[model.TP]int64{tp: from})[tp]
	log.Add(tp, again.Aborted)
	if c, _ := log.InDR(tp, last.Last+1); c != wantAborted {
		t.Errorf("after a rescan: %d, want %d", c, wantAborted)
	}
}
