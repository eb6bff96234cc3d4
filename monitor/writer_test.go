package monitor

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/storage/storagetest"
)

// writerRig is a monitor over two kfake clusters ("events", 2 partitions
// of 10 records, 5 of each copied to DR) whose clock moves 5 s per
// refresh.
type writerRig struct {
	primary, dr *kfake.Cluster
	cfg         *config.Config
	m           *Monitor
	store       *storage.Store
	dbPath      string
	t0          time.Time
	n           int // refreshes so far
}

func newWriterRig(t *testing.T) *writerRig {
	t.Helper()
	primary, pcl := newCluster(t, "primary", "events")
	dr, dcl := newCluster(t, "dr", "events")
	for p := range int32(2) {
		for i := range 10 {
			produce(t, pcl, &kgo.Record{Topic: "events", Partition: p, Value: []byte{byte(i)}})
			if i < 5 {
				produce(t, dcl, &kgo.Record{Topic: "events", Partition: p, Value: []byte{byte(i)}})
			}
		}
	}
	r := &writerRig{primary: primary, dr: dr, cfg: testConfig(t, primary, dr), dbPath: filepath.Join(t.TempDir(), "db"),
		t0: time.Now().Truncate(time.Second)}
	r.m, r.store = newTestMonitor(t, r.cfg, r.dbPath)
	r.m.Now = func() time.Time { return r.t0.Add(time.Duration(r.n) * 5 * time.Second) }
	// MM2's syncs say offset 0 was copied to 0: 5 copied, 5 behind.
	r.m.flows[0].state.apply(storage.Batch{Syncs: []model.OffsetSync{{Topic: "events", Partition: 0}, {Topic: "events", Partition: 1}}})
	return r
}

// refresh runs one refresh at the next tick, MM2's heartbeat a second
// old; it returns its time.
func (r *writerRig) refresh() time.Time {
	r.n++
	at := r.m.Now()
	r.m.flows[0].state.apply(storage.Batch{Heartbeats: []model.Heartbeat{{SourceAlias: "primary", TargetAlias: "dr", EmittedMs: at.Add(-time.Second).UnixMilli()}}})
	r.m.Refresh(context.Background())
	return at
}

// startWriter runs the monitor's sample writer alone (no refresh loop)
// until the test ends.
func (r *writerRig) startWriter(t *testing.T) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.m.writer.run(ctx) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

func (r *writerRig) flowSampleTimes(t *testing.T) []int64 {
	t.Helper()
	xs, err := r.store.FlowSamples(context.Background(), r.cfg.Flows[0].Name, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, x := range xs {
		out = append(out, x.AtMs)
	}
	return out
}

func (r *writerRig) partitionSampleTimes(t *testing.T) []int64 {
	t.Helper()
	xs, err := r.store.PartitionSamples(context.Background(), r.cfg.Flows[0].Name, "events", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, x := range xs {
		out = append(out, x.AtMs)
	}
	return out
}

func sameTimes(got []int64, want []time.Time) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i].UnixMilli() {
			return false
		}
	}
	return true
}

// While SQLite refuses the writes, refreshes go on (they never wait for
// the writer) and the writer retries; once it works again every flow
// sample lands, in order, and the per-partition sample that was due.
func TestSampleWriterRetriesAndLosesNothing(t *testing.T) {
	r := newWriterRig(t)
	storagetest.FailLagSampleWrites(t, r.dbPath, true)
	r.startWriter(t)
	var want []time.Time
	for range SampleQueueBound { // within the bound: nothing thinned
		want = append(want, r.refresh())
	}
	if s := r.m.Snapshot(r.cfg.Flows[0].Name); s == nil || !s.At.Equal(want[len(want)-1]) || s.Late != nil || len(s.Partitions) != 2 {
		t.Fatalf("the refreshes did not publish while the writes failed: %+v", s)
	}
	waitFor(t, "the writer to retry a failed write", func() bool { return r.m.SampleWriterStats().Retries >= 2 })
	if got := r.flowSampleTimes(t); len(got) != 0 {
		t.Fatalf("samples stored while every write fails: %v", got)
	}
	storagetest.FailLagSampleWrites(t, r.dbPath, false)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := r.m.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := r.flowSampleTimes(t); !sameTimes(got, want) {
		t.Fatalf("flow samples at %v, want one per refresh %v", got, want)
	}
	if got := r.partitionSampleTimes(t); !sameTimes(got, want[:1]) {
		t.Fatalf("partition samples at %v, want the first refresh's only (one a minute)", got)
	}
	if st := r.m.SampleWriterStats(); st.Queued != 0 || st.DroppedPartitionSets != 0 || st.Lost != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// Past the bound the refresh still never waits: every flow sample is kept,
// the per-partition figures of superseded refreshes are let go (counted),
// the published snapshots stay whole, and the newest refresh still
// supplies the per-partition sample.
func TestSampleQueueBound(t *testing.T) {
	r := newWriterRig(t) // no writer running: the queue only grows
	var want []time.Time
	n := SampleQueueBound + 6
	for range n {
		want = append(want, r.refresh())
	}
	st := r.m.SampleWriterStats()
	if st.Queued != n || !st.OverBound || st.DroppedPartitionSets != int64(n-1) {
		t.Fatalf("stats after %d refreshes: %+v; want all queued, over the bound, %d partition sets dropped", n, st, n-1)
	}
	if s := r.m.Snapshot(r.cfg.Flows[0].Name); len(s.Partitions) != 2 {
		t.Fatalf("the published snapshot lost its partitions: %+v", s.Partitions)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := r.m.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := r.flowSampleTimes(t); !sameTimes(got, want) {
		t.Fatalf("%d flow samples, want all %d", len(got), n)
	}
	if got := r.partitionSampleTimes(t); !sameTimes(got, want[n-1:]) {
		t.Fatalf("partition samples at %v, want the newest refresh's", got)
	}
	if st := r.m.SampleWriterStats(); st.Queued != 0 || st.OverBound {
		t.Fatalf("after the flush: %+v", st)
	}
}

// Stopping the monitor writes what is queued; what cannot be written
// within SampleDrainTimeout is counted lost, and the writer still stops.
func TestSampleWriterDrainsOnStop(t *testing.T) {
	t.Parallel() // clusters and a store of its own; it waits on ingestion
	r := newWriterRig(t)
	stop := r.startWriter(t)
	storagetest.FailLagSampleWrites(t, r.dbPath, true)
	var want []time.Time
	for range 3 {
		want = append(want, r.refresh())
	}
	waitFor(t, "a failed write", func() bool { return r.m.SampleWriterStats().Retries >= 1 })
	storagetest.FailLagSampleWrites(t, r.dbPath, false)
	stop()
	if got := r.flowSampleTimes(t); !sameTimes(got, want) {
		t.Fatalf("after stop: flow samples at %v, want %v", got, want)
	}

	// A database that never accepts the writes: the writer gives up after
	// the drain bound and says how many it lost.
	stop = r.startWriter(t)
	storagetest.FailLagSampleWrites(t, r.dbPath, true)
	r.refresh()
	r.refresh()
	waitFor(t, "a failed write", func() bool { return r.m.SampleWriterStats().Retries >= 2 })
	began := time.Now()
	stop()
	if took := time.Since(began); took > SampleDrainTimeout+5*time.Second {
		t.Fatalf("stopping took %s", took)
	}
	if st := r.m.SampleWriterStats(); st.Lost != 2 {
		t.Fatalf("stats %+v, want 2 lost", st)
	}
}

// slowListOffsets delays every ListOffsets answer of c until release is
// closed; the cluster answers everything else at once.
func slowListOffsets(c *kfake.Cluster, release <-chan struct{}) {
	c.ControlKey(int16(kmsg.ListOffsets), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		c.SleepControl(func() { <-release })
		return nil, nil, false
	})
}

// Reads slowed past the read deadline on a cluster that answers make the
// refresh late: last figures kept, stale, the cluster still reachable, the
// flow not OK. A cluster that is down is unreachable.
func TestLateRefreshIsNotUnreachable(t *testing.T) {
	r := newWriterRig(t)
	r.cfg.RefreshReadTimeout = config.Duration(500 * time.Millisecond)
	flow := r.cfg.Flows[0].Name
	first := r.refresh()
	s := r.m.Snapshot(flow)
	if s.Late != nil || !s.Source.OK || !s.Target.OK || s.FiguresStale || !s.Partitions[0].LagMessages.Known || s.Partitions[0].LagMessages.V != 5 ||
		s.Status != model.FlowStatusOK {
		t.Fatalf("first refresh: late %+v source %+v target %+v p0 %s status %s %q", s.Late, s.Source, s.Target, describe(s.Partitions[0]), s.Status, s.Reason)
	}

	for _, side := range []struct {
		name    string
		cluster *kfake.Cluster
	}{{"source", r.primary}, {"target", r.dr}} {
		release := make(chan struct{})
		slowListOffsets(side.cluster, release)
		at := r.refresh()
		s = r.m.Snapshot(flow)
		if s.Late == nil || s.Late.Side != side.name || !s.Late.FiguresAt.Equal(first) || s.Late.Timeout != 500*time.Millisecond {
			t.Fatalf("%s slowed: late = %+v, want the %s late with figures from the first refresh; source %+v target %+v took %s", side.name, s.Late, side.name, s.Source, s.Target, s.ReadTook)
		}
		if !s.Source.OK || !s.Target.OK {
			t.Fatalf("%s slowed: shown unreachable: source %+v target %+v", side.name, s.Source, s.Target)
		}
		p0 := s.Partitions[0]
		if !s.FiguresStale || !p0.LagMessages.Known || p0.LagMessages.V != 5 || !p0.AsOf.Time().Equal(first) {
			t.Fatalf("%s slowed: partition %s as of %s, want the first refresh's figures, stale", side.name, describe(p0), p0.AsOf.Time())
		}
		if s.Status != model.FlowStatusUnknown || !strings.Contains(s.Reason, "refresh late (") || !strings.HasPrefix(s.Late.Text(at), "refresh late (") {
			t.Fatalf("%s slowed: status %s %q, text %q", side.name, s.Status, s.Reason, s.Late.Text(at))
		}
		if s.ReadTook < 500*time.Millisecond {
			t.Fatalf("%s slowed: reads took %s, within their deadline", side.name, s.ReadTook)
		}
		close(release)
		r.refresh()
		if s = r.m.Snapshot(flow); s.Late != nil || s.FiguresStale || s.Status != model.FlowStatusOK {
			t.Fatalf("%s answering again: late %+v, p0 %s, status %s", side.name, s.Late, describe(s.Partitions[0]), s.Status)
		}
		first = s.At
	}

	// Flushed: the late refreshes wrote their flow samples but no
	// per-partition sample of stale figures.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := r.m.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := r.flowSampleTimes(t); len(got) != 5 {
		t.Fatalf("%d flow samples, want 5", len(got))
	}
	// A late refresh measured nothing: its sample's RPO is unknown, never
	// the last figure (which may be smaller than the truth by then), so
	// history does not count that moment as within an objective.
	xs, err := r.store.FlowSamples(ctx, flow, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range xs {
		if late := i == 1 || i == 3; (x.RPOMs == nil) != late || late && (x.LagMessages != nil || x.RPOAtLeast) {
			t.Errorf("flow sample %d (late %v): RPO %s, offsets behind %s, at least %v", i, late, fmtPtr(x.RPOMs), fmtPtr(x.LagMessages), x.RPOAtLeast)
		}
	}

	r.primary.Close()
	r.refresh()
	s = r.m.Snapshot(flow)
	if s.Late != nil || s.Source.OK || s.Source.Err == "" || !s.FiguresStale {
		t.Fatalf("primary down: late %+v source %+v p0 %s", s.Late, s.Source, describe(s.Partitions[0]))
	}
	if s.Status != model.FlowStatusUnknown || !strings.Contains(s.Reason, "source cluster unreachable") {
		t.Fatalf("primary down: status %s %q on stale figures", s.Status, s.Reason)
	}
}

// A page holds a snapshot for as long as it renders; the refresh never
// waits for it (readers take the read lock only to fetch the pointer) and
// never changes a snapshot it published. Readers render concurrently
// meanwhile (the race detector watches).
func TestRefreshNeverWaitsForReaders(t *testing.T) {
	r := newWriterRig(t)
	flow := r.cfg.Flows[0].Name
	r.refresh()
	held := r.m.Snapshot(flow)
	before := describe(held.Partitions[0])
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, s := range r.m.Snapshots() { // as a page renders
					_ = s.RPOText()
					for _, p := range s.Partitions {
						_ = describe(p)
					}
				}
			}
		}()
	}
	// The held page is still "rendering" while three refreshes publish.
	for range 3 {
		r.refresh()
	}
	close(stop)
	wg.Wait()
	if s := r.m.Snapshot(flow); s == held || !s.At.After(held.At) {
		t.Fatalf("no newer snapshot published while a reader held one")
	}
	if after := describe(held.Partitions[0]); after != before {
		t.Fatalf("a published snapshot changed under its reader: %s, then %s", before, after)
	}
}

// Run starts the sample writer and stops it with everything else: once Run
// returns, the samples of its refreshes are in SQLite.
func TestRunWritesSamplesAndStops(t *testing.T) {
	r := newWriterRig(t)
	r.m.Now = time.Now
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.m.Run(ctx) }()
	waitFor(t, "the first refresh", r.m.Ready)
	cancel()
	select {
	case <-done:
	case <-time.After(SampleDrainTimeout + 10*time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if got := r.flowSampleTimes(t); len(got) == 0 {
		t.Fatal("no flow sample written by Run's writer")
	}
	if st := r.m.SampleWriterStats(); st.Queued != 0 || st.Lost != 0 {
		t.Fatalf("stats after Run: %+v", st)
	}
}

// A cluster seen unreachable that answers again, but too slowly for the
// read deadline, reads reachable and late: it answered.
func TestUnreachableThenLateReadsReachable(t *testing.T) {
	r := newWriterRig(t)
	r.cfg.RefreshReadTimeout = config.Duration(500 * time.Millisecond)
	flow := r.cfg.Flows[0].Name
	r.refresh()
	var down atomic.Bool
	down.Store(true)
	r.primary.Control(func(kmsg.Request) (kmsg.Response, error, bool) {
		r.primary.KeepControl()
		if down.Load() {
			return nil, errors.New("down in this test"), true // closes the connection
		}
		return nil, nil, false
	})
	// Two refreshes: a response already on its way before the primary
	// began refusing (a long-polling fetch) can still arrive during the
	// first, which then rightly reads "answered, late".
	r.refresh()
	r.refresh()
	if s := r.m.Snapshot(flow); s.Source.OK || s.Late != nil || !s.FiguresStale {
		t.Fatalf("primary refusing: source %+v late %+v", s.Source, s.Late)
	}
	release := make(chan struct{})
	defer close(release)
	slowListOffsets(r.primary, release)
	down.Store(false)
	r.refresh()
	s := r.m.Snapshot(flow)
	if !s.Source.OK || s.Late == nil || s.Late.Side != "source" || !s.FiguresStale || s.Status == model.FlowStatusOK {
		t.Fatalf("primary answering slowly: source %+v late %+v p0 %s status %s", s.Source, s.Late, describe(s.Partitions[0]), s.Status)
	}
}

func fmtPtr(v *int64) string {
	if v == nil {
		return "unknown"
	}
	return strconv.FormatInt(*v, 10)
}
