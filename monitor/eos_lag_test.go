package monitor

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/model"
)

// eosWriter is MirrorMaker 2 with exactly-once support writing DR: each
// batch of copied records is one transaction, ending with a commit marker.
func eosWriter(t *testing.T, dr *kfake.Cluster) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(dr.ListenAddrs()...), kgo.TransactionalID("mm2-eos"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// eosTxn writes n records in a transaction, then ends it
// with end (nil: leave it open, as when MM2's task is SIGKILLed inside it).
func eosTxn(t *testing.T, cl *kgo.Client, n int, end *kgo.TransactionEndTry) {
	t.Helper()
	ctx := context.Background()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: "events", Partition: 0, Value: []byte{byte(i)}}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if end != nil {
		if err := cl.EndTransaction(ctx, *end); err != nil {
			t.Fatal(err)
		}
	}
}

var commit = new(kgo.TryCommit)

// Issue 28 item 6: under MM2 with exactly-once support, DR holds what is
// committed there. Neither the commit markers nor the records of an open
// or aborted transaction may count as copied source offsets.
func TestLagEOSCountsOnlyCommittedDR(t *testing.T) {
	ctx := context.Background()
	_, pcl := newCluster(t, "primary", "events")
	dr, dcl := newCluster(t, "dr", "events")
	old := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	fill(t, pcl, "events", 0, 10, old)
	fresh := time.Now().Add(-35 * time.Second).Truncate(time.Millisecond)
	fill(t, pcl, "events", 0, 5, fresh) // offsets 10-14
	w := eosWriter(t, dr)
	// MM2 copied source 0-9 in two transactions: DR 0-4, marker 5, 6-10,
	// marker 11. Its newest sync is of the first record.
	eosTxn(t, w, 5, commit)
	eosTxn(t, w, 5, commit)
	tp := model.TP{Topic: "events", Partition: 0}
	pos := mapPositions{latestSync: map[model.TP]model.OffsetSync{tp: {Topic: "events", Upstream: 0, Downstream: 0, LogOffset: 1, RecordMs: 1}}}
	r := churnReader(t, pcl, dcl)

	// MM2 stopped cleanly: 10 copied, 5 behind, the oldest 35 s old.
	now := time.Now()
	p := lagOf(t, r.Read(ctx, pos, now), 0)
	if !p.LagMessages.Known || p.LagMessages.V != 5 {
		t.Fatalf("committed transactions: %s, want 5 behind (the markers are no copied records)", describe(p))
	}
	if !p.LagMs.Known || p.LagMs.V != now.Sub(fresh).Milliseconds() {
		t.Fatalf("committed transactions: lag ms %v, want %d", p.LagMs, now.Sub(fresh).Milliseconds())
	}

	// MM2 is killed inside its next transaction: 4 records written to DR,
	// never committed. They are not in DR for any read_committed reader.
	eosTxn(t, w, 4, nil)
	now = time.Now()
	p = lagOf(t, r.Read(ctx, pos, now), 0)
	if !p.LagMessages.Known || p.LagMessages.V != 5 || !p.LagMs.Known || p.LagMs.V != now.Sub(fresh).Milliseconds() {
		t.Fatalf("open transaction: %s, want 5 behind, %d ms", describe(p), now.Sub(fresh).Milliseconds())
	}
	// The transaction times out: aborted, its records stay uncounted.
	if err := w.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	if p = lagOf(t, r.Read(ctx, pos, time.Now()), 0); !p.LagMessages.Known || p.LagMessages.V != 5 {
		t.Fatalf("aborted transaction: %s, want 5 behind", describe(p))
	}
	// The restarted task copies the 5 and commits: caught up.
	eosTxn(t, w, 5, commit)
	if p = lagOf(t, r.Read(ctx, pos, time.Now()), 0); !p.LagMessages.Known || p.LagMessages.V != 0 || p.LagMs.V != 0 {
		t.Fatalf("caught up: %s", describe(p))
	}
}
