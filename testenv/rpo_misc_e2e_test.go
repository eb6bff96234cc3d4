//go:build e2e

package testenv_test

// Issue 10, items 6 and 9, against real Kafka and real MirrorMaker 2:
// internal topics under a non-default separator, and records of aborted
// transactions that MM2 copies to DR.

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/testenv"
)

// With replication.policy.separator "_" and the offset syncs on the source
// (MM2's default location), the primary holds MM2's own
// mm2-offset-syncs_dr_internal. MM2 never mirrors it; the console must not
// list it as a data partition (it would stay "unknown" forever and keep the
// flow from ever reading fully healthy).
func TestSeparatorInternalTopics(t *testing.T) {
	primary := testenv.StartKafka(t, "primary")
	dr := testenv.StartKafka(t, "dr")
	createTopics(t, primary, map[string]int32{"events": 3})
	pcl := primary.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produceN(t, pcl, "events", 3, 300)
	opts := testenv.MM2Options{Source: primary, Target: dr, Policy: "default", OffsetSyncsLocation: "source", Topics: ".*",
		Extra: map[string]string{"replication.policy.separator": "_"}}
	testenv.StartMM2Dedicated(t, opts)

	// MM2 really created its offset-syncs topic under the "_" name on the
	// primary, and mirrored events as primary_events.
	const syncs = "mm2-offset-syncs_dr_internal"
	if err := testenv.Eventually(90*time.Second, 500*time.Millisecond, func() error {
		p, d := topicList(t, primary.Admin(t)), topicList(t, dr.Admin(t))
		if !slices.Contains(p, syncs) || !slices.Contains(d, "primary_events") || !slices.Contains(d, "primary_heartbeats") {
			return fmt.Errorf("primary topics %v, dr topics %v", p, d)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	flow := &config.Flow{Source: "primary", Target: "dr", ReplicationPolicy: "default", Separator: "_", OffsetSyncsLocation: "source",
		ConnectOffsetsTopic: mm2.ConnectOffsetsTopic("primary"), Topics: config.Topics{Include: []string{".*"}}}
	mon, _ := runConsole(t, flow, primary, dr, 30*time.Second)
	var last string
	if err := testenv.Eventually(90*time.Second, 500*time.Millisecond, func() error {
		s := mon.Snapshot("primary->dr")
		last = snapshotLine(s)
		var names []string
		for _, p := range s.Partitions {
			names = append(names, fmt.Sprintf("%s-%d", p.Topic, p.Partition))
			if p.Topic.String() == syncs {
				return fmt.Errorf("MM2's own %s listed as a mirrored partition: %s", syncs, last)
			}
			if !p.LagMessages.Known || p.LagMessages.V != 0 {
				return fmt.Errorf("not caught up: %s", last)
			}
		}
		if len(names) != 3 || s.Status != model.FlowStatusOK || s.Unknown != 0 {
			return fmt.Errorf("partitions %v: %s", names, last)
		}
		return nil
	}); err != nil {
		t.Fatalf("console with separator _: %v", err)
	}
	// MM2 agrees it is internal: nothing named after it reached DR.
	for _, d := range topicList(t, dr.Admin(t)) {
		if d == "primary_"+syncs {
			t.Errorf("MM2 mirrored its own offset-syncs topic as %s", d)
		}
	}
	t.Logf("console: %s", last)
}

// Real MM2 copies the records of aborted transactions to DR as ordinary
// records. With MM2 stopped, aborted and committed transactions go to the
// primary; the console reads the batches past MM2's position, and once MM2
// has copied them it must count exactly the aborted records DR now holds.
func TestAbortedTransactionsReachDR(t *testing.T) {
	primary := testenv.StartKafka(t, "primary")
	dr := testenv.StartKafka(t, "dr")
	createTopics(t, primary, map[string]int32{"orders": 1})
	pcl := primary.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produceN(t, pcl, "orders", 1, 50)
	opts := testenv.MM2Options{Source: primary, Target: dr, Policy: "identity", OffsetSyncsLocation: "target", Topics: "orders"}
	mirror := testenv.StartMM2Dedicated(t, opts)
	flow := &config.Flow{Source: "primary", Target: "dr", ReplicationPolicy: "identity", OffsetSyncsLocation: "target",
		ConnectOffsetsTopic: mm2.ConnectOffsetsTopic("primary"), Topics: config.Topics{Include: []string{"orders"}}}
	mon, router := runConsole(t, flow, primary, dr, 60*time.Second)
	lagIs := func(want func(int64) bool) error {
		s := mon.Snapshot("primary->dr")
		if len(s.Partitions) != 1 || !s.Partitions[0].LagMessages.Known || !want(s.Partitions[0].LagMessages.V) {
			return fmt.Errorf("%s", snapshotLine(s))
		}
		return nil
	}
	if err := testenv.Eventually(90*time.Second, 500*time.Millisecond, func() error { return lagIs(func(n int64) bool { return n == 0 }) }); err != nil {
		t.Fatalf("never caught up: %v", err)
	}
	mirror.Stop()

	txn := primary.Client(t, kgo.TransactionalID("e2e-aborts"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx := context.Background()
	aborted := 0
	for i, n := range []int{10, 4, 7, 3, 12} {
		commit := i%2 == 1
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for j := range n {
			txn.Produce(ctx, &kgo.Record{Topic: "orders", Partition: 0, Value: fmt.Appendf(nil, "txn-%d-%d-commit=%v", i, j, commit)}, nil)
		}
		if err := txn.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if err := txn.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
		if !commit {
			aborted += n
		}
	}
	// The console sees MM2 behind and reads the batches past its position.
	if err := testenv.Eventually(60*time.Second, 500*time.Millisecond, func() error { return lagIs(func(n int64) bool { return n > 0 }) }); err != nil {
		t.Fatalf("console never saw the backlog: %v", err)
	}
	testenv.StartMM2Dedicated(t, opts)
	var last string
	if err := testenv.Eventually(120*time.Second, 500*time.Millisecond, func() error {
		s := mon.Snapshot("primary->dr")
		last = snapshotLine(s)
		if err := lagIs(func(n int64) bool { return n == 0 }); err != nil {
			return err
		}
		if got := s.Partitions[0].AbortedInDR; got != int64(aborted) {
			return fmt.Errorf("console counts %d aborted records in DR, want %d: %s", got, aborted, last)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// MM2 really copied them: DR holds every aborted record as a plain one.
	inDR := 0
	for _, r := range readTopic(t, dr, "orders") {
		if strings.HasSuffix(string(r.Value), "commit=false") {
			inDR++
		}
	}
	if inDR != aborted {
		t.Errorf("DR holds %d aborted records, want %d", inDR, aborted)
	}
	// The flow page says so.
	rec := httptest.NewRecorder()
	router.ServeHTTP(rec, httptest.NewRequest("GET", "/flows/primary-%3Edr", nil))
	if want := fmt.Sprintf("at least %d record(s) of aborted transactions", aborted); !strings.Contains(rec.Body.String(), want) {
		t.Errorf("flow page lacks %q", want)
	}
	t.Logf("console: %s; %d aborted records in DR", last, inDR)
}
