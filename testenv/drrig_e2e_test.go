//go:build e2e

// The DR restore rig shared by TestRestoreInDR and TestRewriteRestoreInDR: a REAL primary and DR
// Kafka, REAL MirrorMaker 2 (dedicated, offset-syncs on the target, the given replication
// policy), the console (monitor.NewMonitor) ingesting its offset syncs, a producer on the primary
// that remembers where every value went, and the job's probe (the first record read per
// partition).
package testenv_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/testenv"
	"github.com/drconsole/drconsole/translation"
)

const (
	rsFlow       = "primary->dr"
	rsTopic      = "events"
	rsParts      = 4
	rsGroup      = "flink-events"
	rsProbeTopic = "flink-probe"
)

// rsData remembers every record written to the primary: value -> source partition and offset.
type rsData struct {
	mu   sync.Mutex
	part map[string]int32
	off  map[string]int64
	n    int
}

func (d *rsData) lookup(v string) (int32, int64, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p, ok := d.part[v]
	return p, d.off[v], ok
}

// rsProbe is one line of the job's probe: the first record a reader read in a partition.
type rsProbe struct {
	partition int32
	offset    int64
	value     string
}

// rsReadProbes returns the probes with key tag on k that name topic: partition -> first probe.
func rsReadProbes(t *testing.T, k *testenv.Kafka, topic, tag string) map[int32]rsProbe {
	t.Helper()
	out := map[int32]rsProbe{}
	for _, r := range readTopic(t, k, rsProbeTopic) {
		if string(r.Key) != tag {
			continue
		}
		f := strings.SplitN(string(r.Value), ",", 4)
		if len(f) != 4 {
			t.Fatalf("probe %q: want topic,partition,offset,value", r.Value)
		}
		if f[0] != topic {
			t.Errorf("probe %s: %q reads topic %s, want %s only", tag, r.Value, f[0], topic)
			continue
		}
		p, err1 := strconv.ParseInt(f[1], 10, 32)
		o, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("probe %q: %v %v", r.Value, err1, err2)
		}
		if _, dup := out[int32(p)]; dup {
			t.Errorf("probe %s: partition %d reported twice (a restart of the job?): %q", tag, p, r.Value)
			continue
		}
		out[int32(p)] = rsProbe{partition: int32(p), offset: o, value: f[3]}
	}
	return out
}

func rsWaitProbes(t *testing.T, k *testenv.Kafka, topic, tag string) map[int32]rsProbe {
	t.Helper()
	var got map[int32]rsProbe
	if err := testenv.Eventually(90*time.Second, 250*time.Millisecond, func() error {
		got = rsReadProbes(t, k, topic, tag)
		if len(got) < rsParts {
			return fmt.Errorf("probes %s: %d of %d partitions of %s reported: %v", tag, len(got), rsParts, topic, got)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

// drRig is one primary/DR pair with MM2 and the console, for topic rsTopic.
type drRig struct {
	primary, dr *testenv.Kafka
	padm, dadm  *kadm.Client
	opts        testenv.MM2Options
	flow        *config.Flow
	mon         *monitor.Monitor
	tr          *translation.GroupTranslator
	remote      string // rsTopic's name in DR under the policy
	data        *rsData
	policy      string
	db          string // the console's database

	cl  *kgo.Client
	seq []int
}

// rigFlow is the rig's flow under policy, as the console is configured with it (before
// Normalize).
func rigFlow(policy string) *config.Flow {
	return &config.Flow{Source: "primary", Target: "dr", ReplicationPolicy: config.ReplicationPolicy(policy), OffsetSyncsLocation: "target",
		ConnectOffsetsTopic: mm2.ConnectOffsetsTopic("primary"), Topics: config.Topics{Include: []string{"events.*"}}}
}

// startDRRig starts the pair with MM2 (policy "identity" or "default") and the console; rsTopic
// (rsParts partitions) is created on the primary, rsProbeTopic and extra (one partition each)
// on both clusters.
func startDRRig(t *testing.T, ctx context.Context, policy string, extra ...string) *drRig {
	t.Helper()
	r := &drRig{primary: testenv.StartKafka(t, "primary"), dr: testenv.StartKafka(t, "dr"),
		data: &rsData{part: map[string]int32{}, off: map[string]int64{}}, seq: make([]int, rsParts)}
	r.padm, r.dadm = r.primary.Admin(t), r.dr.Admin(t)
	create := func(adm *kadm.Client, topic string, parts int32) {
		if res, err := adm.CreateTopic(ctx, parts, 1, nil, topic); err != nil || res.Err != nil {
			t.Fatalf("create %s: %v %v", topic, err, res.Err)
		}
	}
	create(r.padm, rsTopic, rsParts)
	for _, topic := range append([]string{rsProbeTopic}, extra...) {
		create(r.padm, topic, 1)
		create(r.dadm, topic, 1)
	}
	r.opts = testenv.MM2Options{Source: r.primary, Target: r.dr, Policy: policy, OffsetSyncsLocation: "target", Topics: "events.*"}
	testenv.StartMM2Dedicated(t, r.opts)
	r.flow, r.policy = rigFlow(policy), policy
	r.db = filepath.Join(t.TempDir(), "drconsole.db")
	r.mon, _, _ = startConsole(t, r.flow, r.primary, r.dr, 30*time.Second, r.db)
	if r.tr = r.mon.Translator(rsFlow); r.tr == nil {
		t.Fatalf("no translator for flow %s", rsFlow)
	}
	// The console's own rename, checked against testenv's reading of the MM2 policy.
	r.remote = r.tr.Policy.RemoteTopic(r.tr.Alias, rsTopic)
	if want := r.opts.RemoteTopic(rsTopic); r.remote != want {
		t.Fatalf("console names %s in DR %q, MM2 policy %s names it %q", rsTopic, r.remote, policy, want)
	}
	r.cl = r.primary.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	return r
}

// produce writes perPartition + 3p records to each partition p (uneven partitions) and
// records where each value went.
func (r *drRig) produce(t *testing.T, ctx context.Context, perPartition int) {
	var rs []*kgo.Record
	for p := range int32(rsParts) {
		for range perPartition + 3*int(p) {
			rs = append(rs, &kgo.Record{Topic: rsTopic, Partition: p, Value: fmt.Appendf(nil, "%s/%d/%d", rsTopic, p, r.seq[p])})
			r.seq[p]++
		}
	}
	res := r.cl.ProduceSync(ctx, rs...)
	if err := res.FirstErr(); err != nil {
		t.Errorf("produce: %v", err)
		return
	}
	r.data.mu.Lock()
	defer r.data.mu.Unlock()
	for _, x := range res {
		r.data.part[string(x.Record.Value)], r.data.off[string(x.Record.Value)] = x.Record.Partition, x.Record.Offset
		r.data.n++
	}
}

// startProducer writes 300+ records per partition, then keeps writing in the background until
// the returned stop (idempotent) is called.
func (r *drRig) startProducer(t *testing.T, ctx context.Context) (stop func()) {
	r.produce(t, ctx, 300)
	prodCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for prodCtx.Err() == nil {
			r.produce(t, prodCtx, 7) // 7, 10, 13, 16 records every 25 ms
			time.Sleep(25 * time.Millisecond)
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { cancel(); <-done }) }
}

// primaryEnd returns the primary's end offset per partition of rsTopic.
func (r *drRig) primaryEnd(t *testing.T) map[int32]int64 {
	t.Helper()
	out := map[int32]int64{}
	for k, v := range endOffsets(t, r.padm, rsTopic) {
		out[k.part] = v
	}
	return out
}

// waitMirrored waits until DR's copy of rsTopic ends where the primary's does (pEnd) and
// returns DR partition -> DR offset -> source offset, checking every DR record is the primary
// record with the same value at the same partition and offset (no transactions, so MM2 keeps
// offsets under both policies).
func (r *drRig) waitMirrored(t *testing.T, pEnd map[int32]int64) map[int32]map[int64]int64 {
	t.Helper()
	start := time.Now()
	if err := testenv.Eventually(2*time.Minute, 250*time.Millisecond, func() error {
		dEnd := endOffsets(t, r.dadm, r.remote)
		for p := range int32(rsParts) {
			if dEnd[tp{r.remote, p}] != pEnd[p] {
				return fmt.Errorf("dr %s-%d end %d, primary %d", r.remote, p, dEnd[tp{r.remote, p}], pEnd[p])
			}
		}
		return nil
	}); err != nil {
		t.Fatalf("MM2 did not catch up: %v", err)
	}
	drSrc := map[int32]map[int64]int64{}
	for _, x := range readTopic(t, r.dr, r.remote) {
		p, off, ok := r.data.lookup(string(x.Value))
		if !ok || p != x.Partition || off != x.Offset {
			t.Fatalf("dr %s-%d@%d: value %q is primary %d@%d (known %v)", r.remote, x.Partition, x.Offset, x.Value, p, off, ok)
		}
		if drSrc[x.Partition] == nil {
			drSrc[x.Partition] = map[int64]int64{}
		}
		drSrc[x.Partition][x.Offset] = off
	}
	t.Logf("MM2 caught up %s after the producer stopped (DR topic %s)", time.Since(start).Round(time.Millisecond), r.remote)
	return drSrc
}

// waitSyncs waits until the offset syncs of rsTopic have not changed for 3 s (MM2 flushes
// delayed syncs on its 1 s offset commit) and the console has ingested the whole sync topic as
// read then (the topic itself never stands still: the mirrored heartbeats get syncs every
// second). It returns rsTopic's decoded syncs per partition.
func (r *drRig) waitSyncs(t *testing.T, ctx context.Context) map[int32][]model.OffsetSync {
	t.Helper()
	syncTopic, syncCluster := r.opts.OffsetSyncsTopic()
	var syncs map[int32][]model.OffsetSync
	var syncEnd int64
	lastEvents, stillSince := -1, time.Now()
	if err := testenv.Eventually(time.Minute, 250*time.Millisecond, func() error {
		syncs, syncEnd = map[int32][]model.OffsetSync{}, 0
		n := 0
		for _, x := range readTopic(t, syncCluster, syncTopic) {
			s, err := mm2.DecodeOffsetSync(x.Key, x.Value)
			if err != nil {
				t.Fatalf("DecodeOffsetSync: %v", err)
			}
			syncEnd = max(syncEnd, x.Offset+1)
			s.LogOffset = x.Offset
			if s.Topic == rsTopic {
				syncs[s.Partition] = append(syncs[s.Partition], s)
				n++
			}
		}
		if n != lastEvents {
			lastEvents, stillSince = n, time.Now()
		}
		next, ok, err := r.tr.Store.Position(ctx, rsFlow, syncTopic, 0)
		if err != nil || !ok || next < syncEnd {
			return fmt.Errorf("console ingested syncs up to %d (ok=%v, %v), topic at %d", next, ok, err, syncEnd)
		}
		if time.Since(stillSince) < 3*time.Second {
			return fmt.Errorf("%d syncs of %s, last change %s ago", n, rsTopic, time.Since(stillSince).Round(time.Millisecond))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d offset syncs in %s, console holds %d", syncEnd, syncTopic, r.tr.Index.Len())
	for p := range int32(rsParts) {
		if back := rsRewinds(syncs[p]); len(back) > 0 {
			t.Logf("%s-%d: MM2 wrote syncs whose upstream offset goes back: %s", rsTopic, p, strings.Join(back, "; "))
		}
	}
	return syncs
}

// rsRewinds describes where a partition's syncs, in the order MM2 wrote them, go back upstream.
func rsRewinds(syncs []model.OffsetSync) []string {
	var out []string
	for i := 1; i < len(syncs); i++ {
		if a, b := syncs[i-1], syncs[i]; b.Upstream < a.Upstream {
			out = append(out, fmt.Sprintf("@%d %d->%d then @%d %d->%d", a.LogOffset, a.Upstream, a.Downstream, b.LogOffset, b.Upstream, b.Downstream))
		}
	}
	return out
}

// translate translates the savepoint's next offsets with the console's sync index, checked
// against the +1 rule over every decoded sync.
func (r *drRig) translate(t *testing.T, syncs map[int32][]model.OffsetSync, spOff map[int32]int64) map[int32]mm2.Translation {
	t.Helper()
	out := map[int32]mm2.Translation{}
	for p := range int32(rsParts) {
		tl := r.tr.Index.Translate(model.TP{Topic: rsTopic, Partition: p}, spOff[p])
		if !tl.Translated() {
			held, n := r.tr.Index.History(model.TP{Topic: rsTopic, Partition: p}, 12)
			var pairs []string
			for _, s := range held {
				pairs = append(pairs, fmt.Sprintf("@%d %d->%d", s.LogOffset, s.Upstream, s.Downstream))
			}
			t.Fatalf("%s-%d: savepoint offset %d not translatable: %+v; MM2 wrote %d syncs for it (upstream rewinds: %v); the console holds %d, the newest %v",
				rsTopic, p, spOff[p], tl, len(syncs[p]), rsRewinds(syncs[p]), n, pairs)
		}
		if all, ok := xlAllSyncs(syncs[p], spOff[p]); !ok || all != tl.Offset {
			t.Errorf("%s-%d: console translation %d, +1 rule over all %d syncs %d (ok=%v)", rsTopic, p, tl.Offset, len(syncs[p]), all, ok)
		}
		out[p] = tl
	}
	return out
}

// checkStarts checks where a restored job really started (its probes on DR): per partition the
// first DR offset read == the translated offset; its value maps back to a source offset
// src <= the savepoint's next offset U (no gap); U - src (records read twice) <= RereadMax.
func (r *drRig) checkStarts(t *testing.T, probes map[int32]rsProbe, translated map[int32]mm2.Translation,
	spOff, pEnd map[int32]int64, drSrc map[int32]map[int64]int64) {
	t.Helper()
	for p := range int32(rsParts) {
		pr, tl, u := probes[p], translated[p], spOff[p]
		src, ok := drSrc[p][pr.offset]
		vp, voff, vok := r.data.lookup(pr.value)
		switch {
		case !ok || !vok || vp != p || voff != src:
			t.Errorf("%s-%d: first DR record read @%d value %q does not map to a source record (dr map %v, value %d@%d %v)", r.remote, p, pr.offset, pr.value, ok, vp, voff, vok)
			continue
		case pr.offset != tl.Offset:
			t.Errorf("%s-%d: restored job started at DR offset %d, translated offset %d", r.remote, p, pr.offset, tl.Offset)
		}
		dup := u - src
		if dup < 0 {
			t.Errorf("%s-%d: GAP: first record read is source offset %d, savepoint's next offset %d: %d records skipped", r.remote, p, src, u, -dup)
		}
		if dup > tl.RereadMax {
			t.Errorf("%s-%d: %d records read twice (source %d..%d), stated bound RereadMax %d", r.remote, p, dup, src, u-1, tl.RereadMax)
		}
		t.Logf("RESULT %s-%d: savepoint next %5d | translation %5d (%s via sync %d->%d, RereadMax %d) | first DR offset read %5d = source offset %5d | re-read %d (bound %d) | primary end %d",
			r.remote, p, u, tl.Offset, tl.Method, tl.Sync.Upstream, tl.Sync.Downstream, tl.RereadMax, pr.offset, src, dup, tl.RereadMax, pEnd[p])
	}
}

// rsCheckRestored checks that the job was restored from the savepoint (checkpoint id) at dir
// (GET /jobs/{id}/checkpoints latest.restored) and that its source vertex is the operator of uid.
func rsCheckRestored(t *testing.T, ctx context.Context, f *testenv.Flink, jobID string, checkpointID int64, dir, uid string) {
	t.Helper()
	hist, err := f.Checkpoints(ctx, jobID)
	if err != nil {
		t.Fatal(err)
	}
	if r := hist.Latest.Restored; r == nil || !r.IsSavepoint || r.ID != checkpointID || !strings.Contains(r.ExternalPath, dir) {
		t.Errorf("restored job: latest.restored %+v, want savepoint %d at %s", r, checkpointID, dir)
	}
	for _, v := range flinkVertices(t, f, jobID) {
		if strings.HasPrefix(v.Name, "Source:") && v.ID != flink.OperatorIDFromUID(uid) {
			t.Errorf("restored source vertex id %s, want murmur3(%q) = %s", v.ID, uid, flink.OperatorIDFromUID(uid))
		}
	}
}
