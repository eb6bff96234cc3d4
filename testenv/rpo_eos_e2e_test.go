//go:build e2e

package testenv_test

// Issue 28 item 6 against real Kafka and real MirrorMaker 2 with
// exactly-once support (KIP-618): MM2 writes DR in transactions, so DR
// holds what is committed there. Stopped cleanly, the console's lag equals
// the truth in every partition (a commit marker is no copied record);
// SIGKILLed inside a transaction, it is never below what a read_committed
// consumer of DR misses.

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/testenv"
)

// eosMM2Extra is what dedicated MM2 (Kafka 4.3.1) needs to run its tasks
// as ExactlyOnceWorkerSourceTask: exactly-once source support on the dr
// herder's worker, the internal REST server, and a read_committed source
// consumer. Transactions span boundaryMs, so a kill lands inside one.
func eosMM2Extra(t *testing.T, boundaryMs int) map[string]string {
	return map[string]string{
		"dr.exactly.once.source.support":               "enabled",
		"dedicated.mode.enable.internal.rest":          "true",
		"listeners":                                    fmt.Sprintf("http://127.0.0.1:%d", testenv.FreePort(t)),
		"primary.consumer.isolation.level":             "read_committed",
		"primary->dr.transaction.boundary":             "interval",
		"primary->dr.transaction.boundary.interval.ms": fmt.Sprint(boundaryMs),
	}
}

// behindInDR is, per partition of events, the primary's records that DR
// does not hold committed, and the timestamp (ms) of the oldest of them.
func behindInDR(t *testing.T, primary, dr *testenv.Kafka) (behind, oldest map[int32]int64) {
	t.Helper()
	in := map[string]bool{}
	for _, r := range readCommitted(t, dr, "events") {
		in[string(r.Value)] = true
	}
	behind, oldest = map[int32]int64{}, map[int32]int64{}
	for _, r := range readTopic(t, primary, "events") {
		if in[string(r.Value)] {
			continue
		}
		behind[r.Partition]++
		if o, ok := oldest[r.Partition]; !ok || r.Timestamp.UnixMilli() < o {
			oldest[r.Partition] = r.Timestamp.UnixMilli()
		}
	}
	return behind, oldest
}

// openInDR is, per partition of events in DR, the offsets of a
// transaction not decided yet (high watermark minus last stable offset).
func openInDR(t *testing.T, dr *testenv.Kafka) map[int32]int64 {
	t.Helper()
	ctx := context.Background()
	adm := dr.Admin(t)
	hwm, err := adm.ListEndOffsets(ctx, "events")
	if err != nil {
		t.Fatal(err)
	}
	lso, err := adm.ListCommittedOffsets(ctx, "events")
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	for p, h := range hwm["events"] {
		if l, ok := lso["events"][p]; ok && h.Err == nil && l.Err == nil {
			out[p] = h.Offset - l.Offset
		}
	}
	return out
}

func TestRPOExactlyOnceMM2(t *testing.T) {
	const parts = 2
	primary := testenv.StartKafka(t, "primary")
	dr := testenv.StartKafka(t, "dr")
	createTopics(t, primary, map[string]int32{"events": parts})
	pcl := primary.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	seq := 0
	produce := func(n int) {
		recs := make([]*kgo.Record, 0, parts*n)
		for range n {
			for p := range int32(parts) {
				seq++
				recs = append(recs, &kgo.Record{Topic: "events", Partition: p, Value: fmt.Appendf(nil, "eos-%d", seq)})
			}
		}
		if err := pcl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	produce(20)
	opts := testenv.MM2Options{Source: primary, Target: dr, Policy: "identity", OffsetSyncsLocation: "target", Topics: "events.*",
		Extra: eosMM2Extra(t, 4000)}
	mirror := testenv.StartMM2Dedicated(t, opts)
	flow := &config.Flow{Source: "primary", Target: "dr", ReplicationPolicy: "identity", OffsetSyncsLocation: "target",
		ConnectOffsetsTopic: mm2.ConnectOffsetsTopic("primary"), Topics: config.Topics{Include: []string{"events.*"}}}
	mon, _ := runConsole(t, flow, primary, dr, 30*time.Second)
	waitCaughtUp(t, mon, parts, "EOS MM2 never caught up at start")
	if !mirror.LogContains("ExactlyOnceWorkerSourceTask") {
		t.Fatalf("MM2's tasks do not run with exactly-once support:\n%s", mirror.LogTail(40))
	}

	// (a) MM2 stopped cleanly, then the primary gets 15 more records per
	// partition: the console's lag is exactly what DR misses.
	mirror.Stop()
	produce(15)
	checkRPOInvariant(t, mon, primary, dr, parts, "EOS MM2 stopped")
	snap := mon.Snapshot(rpoFlow)
	behind, _ := behindInDR(t, primary, dr)
	for _, p := range snap.Partitions {
		if !p.LagMessages.Known || p.LagMessages.V != behind[p.Partition] {
			t.Errorf("EOS MM2 stopped: events-%d: console %s behind (%s), DR misses %d committed records",
				p.Partition, ptr(p.LagMessages.Ptr()), p.Method, behind[p.Partition])
		}
	}
	if t.Failed() {
		t.Fatalf("%s", snapshotLine(snap))
	}

	// (b) MM2 runs again under steady load and is SIGKILLed while a
	// transaction holds records in DR that were never committed.
	mirror = testenv.StartMM2Dedicated(t, opts)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				produce(1)
			}
		}
	})
	killed := false
	if err := testenv.Eventually(90*time.Second, 50*time.Millisecond, func() error {
		open := openInDR(t, dr)
		for p := range int32(parts) {
			if open[p] < 20 {
				return fmt.Errorf("open transaction offsets in DR: %v", open)
			}
		}
		mirror.Kill()
		killed = true
		return nil
	}); err != nil {
		close(stop)
		wg.Wait()
		t.Fatalf("no transaction of MM2 ever held 20 records in DR: %v", err)
	}
	close(stop)
	wg.Wait()
	open := openInDR(t, dr)
	t.Logf("killed %v; offsets of the open transaction in DR after the kill: %v", killed, open)
	n := checkRPOInvariant(t, mon, primary, dr, parts, "EOS MM2 SIGKILLed inside a transaction")
	behind, _ = behindInDR(t, primary, dr)
	t.Logf("DR misses %d committed records (%v); console: %s", n, behind, snapshotLine(mon.Snapshot(rpoFlow)))
	for p := range int32(parts) {
		if open[p] == 0 {
			t.Errorf("events-%d: the transaction was decided before the check: no proof", p)
		}
	}
}
