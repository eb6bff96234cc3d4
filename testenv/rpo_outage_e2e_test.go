//go:build e2e

package testenv_test

// Issue 28 item 5 against real Kafka 4.3 and real MirrorMaker 2: with the
// primary SIGKILLed while a producer writes, and separately with DR
// stopped, the console's figures are lower bounds ("at least", flagged in
// /metrics) whose age is at least the time since the last read that
// reached the cluster, and the flow is never OK on them.

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/views"
)

func TestOutageFiguresAreLowerBounds(t *testing.T) {
	primary, dr, _, _, mon, router := rpoSetup(t, "identity", 3, 100)

	// A producer writing all along; acked[p] is the end offset of what the
	// primary acknowledged in partition p.
	var mu sync.Mutex
	acked := map[int32]int64{}
	pcl := primary.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordRetries(1), kgo.RequestTimeoutOverhead(2*time.Second))
	ctx, stopProducing := context.WithCancel(context.Background())
	var produced sync.WaitGroup
	produced.Go(func() {
		for i := 0; ctx.Err() == nil; i++ {
			pcl.Produce(ctx, &kgo.Record{Topic: "events", Partition: int32(i % 3), Value: []byte(strconv.Itoa(i))}, func(r *kgo.Record, err error) {
				if err == nil {
					mu.Lock()
					acked[r.Partition] = max(acked[r.Partition], r.Offset+1)
					mu.Unlock()
				}
			})
			time.Sleep(2 * time.Millisecond)
		}
	})
	t.Cleanup(func() { stopProducing(); produced.Wait() })
	time.Sleep(5 * time.Second)

	// watch samples the snapshot and /metrics until d passed, checking
	// every one published from monitor.OverdueAfter (and a tick) after
	// down: by then a refresh in flight that no cluster answers has marked
	// the figures before it, and any later refresh failed to read.
	watch := func(what string, down time.Time, d time.Duration) (checked int) {
		t.Helper()
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
			s := mon.Snapshot(rpoFlow)
			if time.Since(down) < monitor.OverdueAfter+2*time.Second && !s.At.After(down.Add(time.Second)) {
				continue
			}
			checked++
			metrics := getPage(t, router, "/metrics")
			if s.Status == model.FlowStatusOK {
				t.Fatalf("%s: OK on figures of a refresh %s after: %s", what, s.At.Sub(down), snapshotLine(s))
			}
			if s.Bound == "" || !s.RPOAtLeast || !strings.Contains(metrics, `kafka_mirror_lag_lower_bound{flow="primary->dr"} 1`) {
				t.Fatalf("%s: figures not flagged lower bounds (bound %q, at least %v): %s", what, s.Bound, s.RPOAtLeast, snapshotLine(s))
			}
			if !strings.Contains(metrics, `kafka_mirror_status{flow="primary->dr",status="OK"} 0`) {
				t.Fatalf("%s: /metrics says OK", what)
			}
			// The figures rest on a read that began before the outage: their
			// age is at least the time since then.
			if s.FiguresAt.After(down) {
				t.Fatalf("%s: figures from %s, after the cluster went down at %s", what, s.FiguresAt, down)
			}
			ts := metricValue(t, metrics, `kafka_mirror_refresh_timestamp_seconds{flow="primary->dr"}`)
			if now := time.Now(); float64(now.UnixMilli())/1000-ts < now.Sub(down).Seconds() {
				t.Fatalf("%s: /metrics says the figures are %.1f s old, %s after the cluster went down", what, float64(now.UnixMilli())/1000-ts, now.Sub(down))
			}
			page := getPage(t, router, views.FlowPath(rpoFlow))
			if !strings.Contains(page, `data-testid="figures-bound"`) {
				t.Fatalf("%s: the flow page does not say the figures are lower bounds", what)
			}
		}
		return checked
	}

	// The primary SIGKILLed under load.
	primary.Kill()
	killed := time.Now()
	n := watch("primary SIGKILLed", killed, 25*time.Second)
	stopProducing()
	produced.Wait()
	s := mon.Snapshot(rpoFlow)
	drEnds := endOffsets(t, dr.Admin(t), "events")
	mu.Lock()
	for _, p := range s.Partitions {
		t.Logf("events-%d: console at least %s offsets, %s ms behind (figures from %s before the kill); acked %d, in DR %d: %d not in DR",
			p.Partition, ptr(p.LagMessages.Ptr()), ptr(p.LagMs.Ptr()), killed.Sub(s.FiguresAt).Round(time.Millisecond), acked[p.Partition], drEnds[tp{"events", p.Partition}], acked[p.Partition]-drEnds[tp{"events", p.Partition}])
	}
	mu.Unlock()
	if n == 0 {
		t.Fatal("no refresh after the kill was checked")
	}
	t.Logf("primary down: %d snapshots checked, every one flagged and never OK; RPO %s", n, s.RPOText())

	primary.Restart()
	waitCaughtUp(t, mon, 3, "MM2 never caught up after the primary came back")

	// DR stopped (graceful): MM2 cannot copy; the primary still answers.
	dr.Stop()
	stopped := time.Now()
	n = watch("DR stopped", stopped, 20*time.Second)
	if n == 0 {
		t.Fatal("no refresh after DR stopped was checked")
	}
	s = mon.Snapshot(rpoFlow)
	t.Logf("DR down: %d snapshots checked, never OK; status %s (%s)", n, s.Status, s.Reason)
	dr.Restart()
}

// metricValue is the value of the exposition line starting with series.
func metricValue(t *testing.T, text, series string) float64 {
	t.Helper()
	for l := range strings.Lines(text) {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatalf("no %s in /metrics", series)
	return 0
}
