//go:build e2e

package testenv_test

// Issue 10 items 1, 2 and 8 against real Kafka and real MirrorMaker 2: the
// console's RPO is never below the truth when a topic is recreated, when
// the first unreplicated records sit in big producer batches, and while MM2
// is being set up after the console started.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/testenv"
	"github.com/drconsole/drconsole/views"
)

const rpoFlow = "primary->dr"

// rpoSetup starts both clusters, a topic with records and MM2 (dedicated)
// replicating it, and the console, and waits until the console sees MM2
// caught up.
func rpoSetup(t *testing.T, policy string, parts int32, perPart int) (primary, dr *testenv.Kafka, opts testenv.MM2Options, mirror *testenv.Process, mon *monitor.Monitor, router http.Handler) {
	t.Helper()
	primary = testenv.StartKafka(t, "primary")
	dr = testenv.StartKafka(t, "dr")
	createTopics(t, primary, map[string]int32{"events": parts})
	produceN(t, primary.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner())), "events", parts, int(parts)*perPart)
	opts = testenv.MM2Options{Source: primary, Target: dr, Policy: policy, OffsetSyncsLocation: "target", Topics: "events.*"}
	mirror = testenv.StartMM2Dedicated(t, opts)
	flow := &config.Flow{Source: "primary", Target: "dr", ReplicationPolicy: config.ReplicationPolicy(policy), OffsetSyncsLocation: "target",
		ConnectOffsetsTopic: mm2.ConnectOffsetsTopic("primary"), Topics: config.Topics{Include: []string{"events.*"}}}
	mon, router = runConsole(t, flow, primary, dr, 30*time.Second)
	waitCaughtUp(t, mon, int(parts), "MM2 never caught up at start")
	return primary, dr, opts, mirror, mon, router
}

func waitCaughtUp(t *testing.T, mon *monitor.Monitor, parts int, what string) {
	t.Helper()
	if err := testenv.Eventually(90*time.Second, 250*time.Millisecond, func() error {
		s := mon.Snapshot(rpoFlow)
		if len(s.Partitions) != parts || s.Status != model.FlowStatusOK {
			return fmt.Errorf("%s", snapshotLine(s))
		}
		for _, p := range s.Partitions {
			if !p.LagMessages.Known || p.LagMessages.V != 0 || !p.LagMs.Known || p.LagMs.V != 0 {
				return fmt.Errorf("%s", snapshotLine(s))
			}
		}
		return nil
	}); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func getPage(t *testing.T, router http.Handler, path string) string {
	t.Helper()
	w := httptest.NewRecorder()
	router.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	b, _ := io.ReadAll(w.Result().Body)
	if w.Code != http.StatusOK {
		t.Fatalf("GET %s = %d: %s", path, w.Code, b)
	}
	return string(b)
}

// (a) While MM2 is down the topic is deleted and recreated and gets fewer
// records than before: MM2's old position is above the new end. The console
// must count the new records as unreplicated and say the log restarted;
// once MM2 runs again and DR has the new records, lag is 0 again.
func TestRPORecreatedTopic(t *testing.T) {
	for _, policy := range []string{"identity", "default"} {
		t.Run(policy, func(t *testing.T) { rpoRecreatedTopic(t, policy) })
	}
}

func rpoRecreatedTopic(t *testing.T, policy string) {
	primary, dr, opts, mirror, mon, router := rpoSetup(t, policy, 2, 100)
	mirror.Stop()
	adm := primary.Admin(t)
	ctx := context.Background()
	if _, err := adm.DeleteTopics(ctx, "events"); err != nil {
		t.Fatal(err)
	}
	if err := testenv.Eventually(30*time.Second, 200*time.Millisecond, func() error {
		_, err := adm.CreateTopic(ctx, 2, 1, nil, "events")
		return err // TOPIC_ALREADY_EXISTS while the deletion completes
	}); err != nil {
		t.Fatalf("recreating events: %v", err)
	}
	produceN(t, primary.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner())), "events", 2, 60)

	var last string
	if err := testenv.Eventually(60*time.Second, 250*time.Millisecond, func() error {
		s := mon.Snapshot(rpoFlow)
		last = snapshotLine(s)
		if len(s.Partitions) != 2 || s.Status == model.FlowStatusOK {
			return fmt.Errorf("status %s", s.Status)
		}
		for _, p := range s.Partitions {
			if !p.LagMessages.Known || p.LagMessages.V != 30 || !p.LagMs.Known || p.LagMs.V <= 0 || p.Restarted.String() == "" {
				return fmt.Errorf("%s-%d: lag %s ms %s restarted %q, want the 30 new records behind", p.Topic, p.Partition, ptr(p.LagMessages.Ptr()), ptr(p.LagMs.Ptr()), p.Restarted)
			}
		}
		if s.TotalLagMessages == nil || *s.TotalLagMessages != 60 || s.RPOMs == nil || *s.RPOMs <= 0 {
			return fmt.Errorf("flow lag %s rpo %s", ptr(s.TotalLagMessages), ptr(s.RPOMs))
		}
		return nil
	}); err != nil {
		t.Fatalf("recreated topic with MM2 down: %v\nlast: %s", err, last)
	}
	if page := getPage(t, router, views.TopicPath(rpoFlow, "events")); !strings.Contains(page, "source log restarted") {
		t.Fatalf("topic page does not say the log restarted:\n%s", page)
	}

	// MM2 again: it finds its old position out of range, starts the new log
	// from the beginning and copies the 60 records.
	remote := opts.RemoteTopic("events")
	drAdm := dr.Admin(t)
	before := endOffsets(t, drAdm, remote)
	testenv.StartMM2Dedicated(t, opts)
	if err := testenv.Eventually(90*time.Second, 500*time.Millisecond, func() error {
		now := endOffsets(t, drAdm, remote)
		for k, v := range before {
			if now[k] < v+30 {
				return fmt.Errorf("DR %v: %d, want >= %d", k, now[k], v+30)
			}
		}
		return nil
	}); err != nil {
		t.Fatalf("MM2 did not copy the new log: %v", err)
	}
	waitCaughtUp(t, mon, 2, "lag never returned to 0 after MM2 copied the new log")
}

// (b) With MM2 stopped, records land in batches of hundreds of KB on
// several partitions. Every lagging partition must get its age and the flow
// RPO must be at least the true age of the oldest unreplicated record.
func TestRPOBigBatches(t *testing.T) {
	const parts = 4
	primary, _, _, mirror, mon, router := rpoSetup(t, "identity", parts, 10)
	mirror.Stop()
	big := primary.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ProducerBatchMaxBytes(900<<10), kgo.ProducerLinger(time.Second))
	val := bytes.Repeat([]byte("r"), 1000)
	base := time.Now().Add(-25 * time.Second).Truncate(time.Millisecond)
	oldest := base.Add(-time.Duration(parts-1) * time.Second)
	var recs []*kgo.Record
	for p := range int32(parts) {
		for range 400 { // ~400 KB per partition, one batch each
			recs = append(recs, &kgo.Record{Topic: "events", Partition: p, Value: val, Timestamp: base.Add(-time.Duration(p) * time.Second)})
		}
	}
	if err := big.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// The first refresh that sees the records behind must already have
	// every age: while MM2 stays stopped a cache would fill in one partition
	// per refresh and hide the defect.
	var first *flowstate.FlowSnapshot
	if err := testenv.Eventually(60*time.Second, 20*time.Millisecond, func() error {
		s := mon.Snapshot(rpoFlow)
		for _, p := range s.Partitions {
			if !p.LagMessages.Known || p.LagMessages.V != 400 {
				return fmt.Errorf("%s", snapshotLine(s))
			}
		}
		first = s
		return nil
	}); err != nil {
		t.Fatalf("records never seen behind: %v", err)
	}
	for _, p := range first.Partitions {
		want := first.At.Sub(base.Add(-time.Duration(p.Partition) * time.Second)).Milliseconds()
		if !p.LagMs.Known || p.LagMs.V != want {
			t.Errorf("%s-%d: age %s, want %d", p.Topic, p.Partition, ptr(p.LagMs.Ptr()), want)
		}
	}
	if truth := first.At.Sub(oldest).Milliseconds(); first.RPOMs == nil || *first.RPOMs < truth || first.RPOAtLeast {
		t.Errorf("flow RPO %s (at least: %v), true age of the oldest unreplicated record %d", ptr(first.RPOMs), first.RPOAtLeast, truth)
	}
	if t.Failed() {
		t.Fatalf("first snapshot with the records behind: %s", snapshotLine(first))
	}
	// The exported metric carries the same figure.
	if m := getPage(t, router, "/metrics"); !strings.Contains(m, `kafka_mirror_lag_unknown_age_partitions{flow="primary->dr"} 0`) {
		t.Fatalf("metrics: no unknown-age gauge at 0:\n%s", m)
	}
}

// (c) MM2 is set up after the console started, and a topic appears later
// still. The console must pick MM2's internal topics up promptly and never
// show a partition caught up, or the flow OK, on inputs it does not have.
func TestRPOMM2CreatedAfterConsole(t *testing.T) {
	primary := testenv.StartKafka(t, "primary")
	dr := testenv.StartKafka(t, "dr")
	createTopics(t, primary, map[string]int32{"events": 3})
	pcl := primary.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produceN(t, pcl, "events", 3, 300)
	// Default policy, offset syncs on the source (MM2's defaults).
	flow := &config.Flow{Source: "primary", Target: "dr", ReplicationPolicy: "default", OffsetSyncsLocation: "source",
		ConnectOffsetsTopic: mm2.ConnectOffsetsTopic("primary"), Topics: config.Topics{Include: []string{"events.*"}}}
	mon, _ := runConsole(t, flow, primary, dr, 30*time.Second)
	opts := testenv.MM2Options{Source: primary, Target: dr, Policy: "default", OffsetSyncsLocation: "source", Topics: "events.*"}

	// Watch every snapshot: a partition shown caught up must really be in
	// DR, and OK needs every partition's lag.
	drAdm := dr.Admin(t)
	var mu sync.Mutex
	var violations []string
	ctx, stop := context.WithCancel(context.Background())
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		seen := time.Time{}
		for ctx.Err() == nil {
			time.Sleep(100 * time.Millisecond)
			s := mon.Snapshot(rpoFlow)
			if s == nil || !s.At.After(seen) {
				continue
			}
			seen = s.At
			var bad []string
			var zero []model.PartitionLag
			for _, p := range s.Partitions {
				if !p.LagMessages.Known || !p.LagMs.Known {
					if s.Status == model.FlowStatusOK {
						bad = append(bad, fmt.Sprintf("OK while %s-%d has lag %s / %s ms", p.Topic, p.Partition, ptr(p.LagMessages.Ptr()), ptr(p.LagMs.Ptr())))
					}
				} else if p.LagMessages.V == 0 && p.SourceEnd.Known && p.SourceEnd.V > 0 {
					zero = append(zero, p)
				}
			}
			if len(zero) > 0 {
				lo, err := drAdm.ListEndOffsets(ctx, opts.RemoteTopic("events"), opts.RemoteTopic("events-late"))
				for _, p := range zero {
					// A topic missing from a (cached) DR answer cannot be judged.
					o, ok := lo.Lookup(p.RemoteTopic.String(), p.Partition)
					if err == nil && ok && o.Err == nil && o.Offset < p.SourceEnd.V {
						bad = append(bad, fmt.Sprintf("%s-%d shown caught up at end %d while DR holds %d", p.Topic, p.Partition, p.SourceEnd.V, o.Offset))
					}
				}
			}
			if len(bad) > 0 {
				mu.Lock()
				violations = append(violations, fmt.Sprintf("%s: %v [%s]", s.At.Format("15:04:05.000"), bad, snapshotLine(s)))
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { stop(); <-watched })

	time.Sleep(2 * time.Second) // the console has looked and found no MM2 topics
	testenv.StartMM2Dedicated(t, opts)
	syncsTopic, syncsOn := opts.OffsetSyncsTopic()
	var synced time.Time // when the offset-syncs topic first held a record
	if err := testenv.Eventually(90*time.Second, 100*time.Millisecond, func() error {
		lo, err := syncsOn.Admin(t).ListEndOffsets(context.Background(), syncsTopic)
		if o, ok := lo.Lookup(syncsTopic, 0); err != nil || !ok || o.Err != nil || o.Offset == 0 {
			return fmt.Errorf("no sync in %s yet", syncsTopic)
		}
		synced = time.Now()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := testenv.Eventually(10*time.Second, 100*time.Millisecond, func() error {
		if _, n := mon.Activity(rpoFlow); n == 0 {
			return fmt.Errorf("no sync stored")
		}
		return nil
	}); err != nil {
		t.Fatalf("the console had not read %s %s after its first sync: %v", syncsTopic, time.Since(synced).Round(time.Second), err)
	}
	t.Logf("syncs stored %s after the first one was written", time.Since(synced).Round(100*time.Millisecond))
	waitCaughtUp(t, mon, 3, "MM2 never caught up")

	// A topic created now: MM2 takes it up within its refresh interval, the
	// console sees it at once without a position: not OK meanwhile.
	createTopics(t, primary, map[string]int32{"events-late": 2})
	produceN(t, pcl, "events-late", 2, 100)
	waitCaughtUp(t, mon, 5, "MM2 never caught up with events-late")

	stop()
	<-watched
	mu.Lock()
	defer mu.Unlock()
	if len(violations) > 0 {
		t.Fatalf("%d snapshot(s) rested on missing inputs, first:\n%s", len(violations), strings.Join(violations[:min(len(violations), 5)], "\n"))
	}
}
