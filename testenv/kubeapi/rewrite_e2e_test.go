//go:build e2e

package kubeapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/kube"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/testenv"
)

// The names MirrorMaker 2 gives a flow from cluster alias "primary" under its default
// replication policy, with its offset syncs kept on the target: the console's own reading of
// the policy is checked against them.
const (
	rwFlow      = "primary->dr"
	rwTopic     = "events"
	rwRemote    = "primary.events"
	rwSyncTopic = "mm2-offset-syncs.primary.internal"
	rwParts     = 4
	rwGroup     = "flink-events"
	rwUID       = "kafka-source"
	rwProbe     = "flink-probe"
	// rwSyncEvery: a sync every 50 upstream offsets, so a savepoint offset off the grid is
	// translated by MM2's +1 rule and one on it exactly.
	rwSyncEvery = 50
)

// rwShift is how many records DR's copy of partition p holds before the mirrored ones: DR
// offset = source offset + rwShift(p), so a restore from the source's offsets would start at
// the wrong records.
func rwShift(p int32) int64 { return 5 + 7*int64(p) }

// The runbook's rewrite route on the real API machinery (issue 34): an approved run rewrites a
// real Flink savepoint for DR (rewrite-savepoint: targets from the offset syncs the console's
// monitor ingested, the new savepoint registered in the catalog as rewritten) and restores the
// rewritten one through Kubernetes (restore-flink on a target with `kubernetes`: client-go
// through a kubeconfig to the real API server with the operator's CRDs; the operator loop, a
// client of that server, runs the job jar on a real Flink from initialSavepointPath). Flink
// 2.2.1 registers a FlinkStateSnapshot first, 1.20.3 patches initialSavepointPath alone.
//
// No MirrorMaker 2 runs: one real Kafka holds the source topic `events` and DR's copy
// `primary.events` (each partition shifted by rwShift records), and the offset syncs are
// written to `mm2-offset-syncs.primary.internal` with the console's own mm2 encoder (held to
// MM2's Java schema bytes by mm2.TestOffsetSyncReferenceBytes; the decoder the console reads
// them with reads real MM2's syncs in testenv's TestMM2Dedicated, and the rewrite step on real
// MM2's syncs runs in testenv's TestRewriteRouteE2E). The expected translation is
// computed here from those syncs by MM2's rule, not asked of the console.
//
//	cd testenv/kubeapi && go test -tags e2e -count=1 -run TestRewriteRestoreThroughRealAPIServer -v .
func TestRewriteRestoreThroughRealAPIServer(t *testing.T) {
	start := time.Now()
	for _, c := range []struct {
		dist     testenv.FlinkDist
		snapshot string // config.Kubernetes.UseStateSnapshot
	}{
		{testenv.FlinkDefault, "true"},
		{testenv.Flink1_20, "false"},
	} {
		t.Run("flink-"+c.dist.Version, func(t *testing.T) { rewriteRestore(t, c.dist, c.snapshot) })
	}
	t.Logf("TIMING TestRewriteRestoreThroughRealAPIServer: %s", time.Since(start).Round(time.Millisecond))
}

func rewriteRestore(t *testing.T, dist testenv.FlinkDist, useSnapshot string) {
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	k := testenv.StartKafka(t, "kafka")
	adm := k.Admin(t)
	for topic, parts := range map[string]int32{rwTopic: rwParts, rwRemote: rwParts, rwProbe: 1, rwSyncTopic: 1} {
		if res, err := adm.CreateTopic(ctx, parts, 1, nil, topic); err != nil || res.Err != nil {
			t.Fatalf("create %s: %v %v", topic, err, res.Err)
		}
	}
	f := testenv.StartFlinkWith(t, testenv.FlinkOptions{Dist: &dist})
	r := newRig(t, nil)
	spRoot := t.TempDir() // the configured savepoint directory

	// --- the console: monitor, catalog, runbook ----------------------------------------------------
	cfg := &config.Config{
		Clusters: map[string]*config.Cluster{"primary": {Bootstrap: []string{k.Bootstrap}}, "dr": {Bootstrap: []string{k.Bootstrap}}},
		Flows: []*config.Flow{{Source: "primary", Target: "dr", ReplicationPolicy: "default", OffsetSyncsLocation: "target",
			ConnectOffsetsTopic: mm2.ConnectOffsetsTopic("primary"), Topics: config.Topics{Include: []string{"events"}}}},
		RefreshInterval: config.Duration(time.Second),
		FlinkTargets: []*config.FlinkTarget{{Name: "flink-dr", RestURL: f.URL, Region: "dr",
			Kubernetes: &config.Kubernetes{Kubeconfig: r.kubeconfig, Namespace: ns, Deployment: dep,
				UseStateSnapshot: config.StateSnapshotUse(useSnapshot), Timeout: config.Duration(2 * time.Minute)}}},
		SavepointDirs: []string{spRoot},
	}
	if err := cfg.Normalize("kubeapi-rewrite"); err != nil {
		t.Fatal(err)
	}
	store, err := storage.Open(filepath.Join(t.TempDir(), "drconsole.db"))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	mctx, mcancel := context.WithCancel(context.Background())
	mon, err := monitor.NewMonitor(mctx, cfg, store, log)
	if err != nil {
		t.Fatal(err)
	}
	mdone := make(chan struct{})
	go func() { defer close(mdone); mon.Run(mctx) }()
	t.Cleanup(func() { mcancel(); <-mdone; mon.Close(); store.Close() })
	tr := mon.Translator(rwFlow)
	if tr == nil {
		t.Fatalf("no translator for flow %s", rwFlow)
	}
	if remote, syncs := tr.Policy.RemoteTopic(tr.Alias, rwTopic), tr.Policy.OffsetSyncsTopic(tr.Alias); remote != rwRemote || syncs != rwSyncTopic {
		t.Fatalf("the console names %s in DR %q and the syncs topic %q; MM2's default policy: %s, %s", rwTopic, remote, syncs, rwRemote, rwSyncTopic)
	}

	// --- the primary job and its savepoint ------------------------------------------------------------
	cl := k.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	src := &rwLog{val: map[int32][]string{}}
	src.produce(t, ctx, cl, 300)
	primary := f.SubmitJob(t, testenv.FlinkJobOptions{Bootstrap: k.Bootstrap, Topics: []string{rwTopic}, GroupID: rwGroup,
		SourceUID: rwUID, Parallelism: 2, ProbeTopic: rwProbe, ProbeTag: "primary", Name: "drconsole-events-primary"})
	f.WaitJobRunning(t, primary)
	rwWaitProbes(t, ctx, k, rwTopic, "primary")
	f.WaitCheckpoint(t, primary, 0)
	spDir := f.TriggerSavepoint(t, primary, spRoot, true)
	f.WaitJobState(t, primary, "FINISHED")
	sp, err := flink.ReadSavepoint(spDir)
	if err != nil {
		t.Fatalf("ReadSavepoint: %v", err)
	}
	spOff := rwOffsets(t, sp, rwTopic)
	for p := range int32(rwParts) {
		if spOff[p] <= 0 {
			t.Fatalf("%s-%d: savepoint offset %d: the job read nothing there", rwTopic, p, spOff[p])
		}
	}
	t.Logf("savepoint v%d checkpoint %d at %s: %s offsets %v", sp.Version, sp.CheckpointID, spDir, rwTopic, spOff)

	// --- DR: the mirrored copy and its offset syncs -----------------------------------------------
	src.produce(t, ctx, cl, 40) // DR holds data beyond every savepoint offset
	src.mirror(t, ctx, cl)
	var syncRecs []*kgo.Record
	for p := range int32(rwParts) {
		for u := int64(0); u < int64(len(src.val[p])); u += rwSyncEvery {
			s := model.OffsetSync{Topic: rwTopic, Partition: p, Upstream: u, Downstream: u + rwShift(p)}
			syncRecs = append(syncRecs, &kgo.Record{Topic: rwSyncTopic, Partition: 0, Key: mm2.EncodeKey(s), Value: mm2.EncodeValue(s)})
		}
	}
	res := cl.ProduceSync(ctx, syncRecs...)
	if err := res.FirstErr(); err != nil {
		t.Fatalf("produce offset syncs: %v", err)
	}
	syncEnd := res[len(res)-1].Record.Offset + 1
	want := map[int32]model.Translation{} // by MM2's rule over the syncs written
	for p := range int32(rwParts) {
		want[p] = rwTranslate(spOff[p], rwShift(p))
	}
	if err := testenv.Eventually(time.Minute, 100*time.Millisecond, func() error {
		next, ok, err := store.Position(ctx, rwFlow, rwSyncTopic, 0)
		if err != nil || !ok || next < syncEnd {
			return fmt.Errorf("the console ingested %s up to %d (ok=%v, %v); %d written", rwSyncTopic, next, ok, err, syncEnd)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var rereadMax int64
	for p := range int32(rwParts) {
		got := tr.Index.Translate(model.TP{Topic: rwTopic, Partition: p}, spOff[p])
		if got.Offset != want[p].Offset || got.Method != want[p].Method || got.RereadMax != want[p].RereadMax {
			t.Fatalf("%s-%d: the console translates %d to %+v; MM2's rule over the syncs written: %+v", rwTopic, p, spOff[p], got, want[p])
		}
		rereadMax += want[p].RereadMax
		t.Logf("%s-%d: savepoint offset %d -> DR %s-%d@%d (%s, re-read <= %d)", rwTopic, p, spOff[p], rwRemote, p, want[p].Offset, want[p].Method, want[p].RereadMax)
	}
	// Only restored state can start a partition at the translated offset: DR's group starts
	// each at the end.
	commit := kadm.Offsets{}
	for p := range int32(rwParts) {
		commit.Add(kadm.Offset{Topic: rwRemote, Partition: p, At: int64(len(src.val[p])) + rwShift(p), LeaderEpoch: -1})
	}
	if res, err := adm.CommitOffsets(ctx, rwGroup, commit); err != nil || res.Error() != nil {
		t.Fatalf("commit DR end offsets: %v %v", err, res.Error())
	}

	// --- the run: rewrite, then restore through the real API server ---------------------------------
	cat := &catalog.Catalog{Store: store, Config: cfg, Monitor: mon, Log: log}
	if _, err := cat.Register(ctx, spDir); err != nil {
		t.Fatalf("register %s: %v", spDir, err)
	}
	from := flink.CanonicalPath(spDir)
	dest := failover.RewriteDest(cfg, rwFlow, from)
	destDir, err := testenv.LocalPath(dest)
	if err != nil {
		t.Fatalf("RewriteDest %q: %v", dest, err)
	}
	destURI := "file://" + destDir // as Flink and the operator take it
	r.deployOn(t, f)
	r.operator(t, false)
	rb := failover.Equip(&runbook.Runbook{Store: store, Config: cfg, Audit: runbook.StoreAuditor{Store: store}, Log: log,
		Flink: flink.NewRESTClient}, failover.Env{Monitor: mon, Catalog: cat})
	args := testenv.FlinkJobOptions{Bootstrap: k.Bootstrap, Topics: []string{rwRemote}, GroupID: rwGroup, SourceUID: rwUID,
		Parallelism: 2, ProbeTopic: rwProbe, ProbeTag: "dr", Name: "drconsole-events-dr"}.ProgramArgs()
	run := rwRunApproved(t, ctx, rb, runbook.Plan{Flow: rwFlow, Steps: []runbook.Step{
		{Kind: failover.KindRewriteSavepoint, RewriteFrom: from, SourceUID: rwUID, RewriteTo: destURI},
		{Kind: failover.KindRestoreFlink, FlinkTarget: "flink-dr", SavepointPath: destURI, Args: args},
	}})

	// --- the rewrite: its result, the catalog, the files --------------------------------------------
	var rw struct {
		Splits  []string          `json:"splits"`
		Renamed map[string]string `json:"renamed_topics"`
		Reread  int64             `json:"reread_max"`
		Catalog int64             `json:"catalog_id"`
	}
	if err := json.Unmarshal([]byte(run.Steps[0].Result), &rw); err != nil || rw.Catalog == 0 || len(rw.Splits) != rwParts ||
		len(rw.Renamed) != 1 || rw.Renamed[rwTopic] != rwRemote {
		t.Fatalf("rewrite step result %s (%v): want %d splits, %s renamed to %s, a catalog id", run.Steps[0].Result, err, rwParts, rwTopic, rwRemote)
	}
	if rw.Reread != rereadMax {
		t.Errorf("rewrite step states re-read bound %d, MM2's rule %d", rw.Reread, rereadMax)
	}
	entry, err := store.SavepointByPath(ctx, flink.CanonicalPath(destURI))
	if err != nil {
		t.Fatalf("the rewritten savepoint is not in the catalog: %v", err)
	}
	if entry.ID != rw.Catalog || entry.Origin != model.OriginRewritten || entry.RewrittenFrom != from || entry.RewrittenFlow != rwFlow {
		t.Errorf("catalog entry #%d origin %s from %s for %s: want #%d, rewritten from %s for %s",
			entry.ID, entry.Origin, entry.RewrittenFrom, entry.RewrittenFlow, rw.Catalog, from, rwFlow)
	}
	offs, err := entry.Offsets()
	if err != nil || len(offs) != rwParts {
		t.Errorf("catalog offsets of the rewritten savepoint %v (%v, read error %q)", offs, err, entry.ReadError)
	}
	rsp, err := flink.ReadSavepoint(destDir)
	if err != nil {
		t.Fatalf("ReadSavepoint(rewritten): %v", err)
	}
	if rsp.CheckpointID != sp.CheckpointID {
		t.Errorf("rewritten savepoint checkpoint %d, source %d", rsp.CheckpointID, sp.CheckpointID)
	}
	files := rwOffsets(t, rsp, rwRemote)
	for p := range int32(rwParts) {
		key := fmt.Sprintf("%s-%d", rwRemote, p)
		if offs[key] != want[p].Offset || files[p] != want[p].Offset {
			t.Errorf("%s: the catalog holds %d, the rewritten files %d; MM2's rule over the syncs: %d", key, offs[key], files[p], want[p].Offset)
		}
	}

	// --- the restore: the API server, the operator, Flink -------------------------------------------
	var kr restoreResult
	if err := json.Unmarshal([]byte(run.Steps[1].Result), &kr); err != nil || !kr.Patched || kr.JobState != "RUNNING" || kr.JobID == "" || kr.Path != destURI {
		t.Fatalf("restore step result %s (%v): want patched, RUNNING, from %s", run.Steps[1].Result, err, destURI)
	}
	if (useSnapshot == "true") != (kr.Snapshot != "") {
		t.Errorf("use_state_snapshot %s, the step registered snapshot %q", useSnapshot, kr.Snapshot)
	}
	r.checkRestored(t, kr, args)
	if kr.Snapshot != "" {
		s := r.get(t, kube.FlinkStateSnapshots.Resource, kr.Snapshot)
		if p, _, _ := unstructured.NestedString(s.Object, "spec", "savepoint", "path"); p != destURI {
			t.Errorf("snapshot %s spec.savepoint.path %q, want the rewritten %s", kr.Snapshot, p, destURI)
		}
	}
	if ds := r.deploys(); len(ds) != 1 || ds[0].UpgradeMode != "savepoint" || ds[0].AllowNonRestoredState {
		t.Errorf("the operator deployed %+v: want once, upgradeMode savepoint, allowNonRestoredState off", ds)
	}
	if err := testenv.Eventually(30*time.Second, 200*time.Millisecond, func() error {
		h, err := f.Checkpoints(ctx, kr.JobID)
		if err != nil || h.Latest.Restored == nil {
			return fmt.Errorf("Flink reports no restore for job %s (%v)", kr.JobID, err)
		}
		if rs := h.Latest.Restored; !rs.IsSavepoint || rs.ID != sp.CheckpointID || !strings.Contains(rs.ExternalPath, destDir) {
			t.Fatalf("job %s restored from %+v, want savepoint %d at %s", kr.JobID, rs, sp.CheckpointID, destDir)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var job struct {
		Vertices []struct{ ID, Name string } `json:"vertices"`
	}
	if err := f.Do(ctx, http.MethodGet, "/jobs/"+kr.JobID, nil, &job); err != nil {
		t.Fatal(err)
	}
	sources := 0
	for _, v := range job.Vertices {
		if strings.HasPrefix(v.Name, "Source:") {
			sources++
			if v.ID != flink.OperatorIDFromUID(rwUID) {
				t.Errorf("restored source vertex id %s, want murmur3(%q) = %s", v.ID, rwUID, flink.OperatorIDFromUID(rwUID))
			}
		}
	}
	if sources != 1 {
		t.Errorf("restored job has %d source vertices %+v", sources, job.Vertices)
	}

	// --- where the restored job started in DR ----------------------------------------------------------
	for p, pr := range rwWaitProbes(t, ctx, k, rwRemote, "dr") {
		w := want[p]
		srcOff := pr.offset - rwShift(p)
		switch {
		case pr.offset != w.Offset:
			t.Errorf("%s-%d: the restored job's first record read is DR offset %d, the translation %d", rwRemote, p, pr.offset, w.Offset)
		case srcOff < 0 || srcOff >= int64(len(src.val[p])) || pr.value != src.val[p][srcOff]:
			t.Errorf("%s-%d@%d: value %q is not the mirrored source record %d", rwRemote, p, pr.offset, pr.value, srcOff)
		case srcOff > spOff[p] || spOff[p]-srcOff > w.RereadMax:
			t.Errorf("%s-%d: first record read is source offset %d, the savepoint's next %d (re-read bound %d)", rwRemote, p, srcOff, spOff[p], w.RereadMax)
		}
		t.Logf("RESULT %s-%d: savepoint next %d | translation %d (%s) | first DR offset read %d = source offset %d | re-read %d",
			rwRemote, p, spOff[p], w.Offset, w.Method, pr.offset, srcOff, spOff[p]-srcOff)
	}
	if ex, err := f.RootException(ctx, kr.JobID); err != nil || ex != "" {
		t.Errorf("restored job %s: exceptions %q (%v)", kr.JobID, ex, err)
	}
	f.CancelJob(t, kr.JobID)
	t.Logf("TIMING flink %s (use_state_snapshot %s): whole scenario %s", dist.Version, useSnapshot, time.Since(t0).Round(time.Millisecond))
}

// rwTranslate is MM2's rule over the syncs this test writes (one every rwSyncEvery upstream
// offsets from 0, downstream = upstream + shift): the nearest sync at or below the offset;
// exactly on it, its downstream; past it, downstream + 1, and the records between may be read
// again.
func rwTranslate(upstream, shift int64) model.Translation {
	at := upstream - upstream%rwSyncEvery
	if at == upstream {
		return model.Translation{Offset: at + shift, Method: model.MethodExact}
	}
	return model.Translation{Offset: at + shift + 1, Method: model.MethodConservative, RereadMax: upstream - at - 1}
}

// rwOffsets reads the next offsets of topic from a savepoint's source operator rwUID.
func rwOffsets(t *testing.T, sp *flink.Savepoint, topic string) map[int32]int64 {
	t.Helper()
	ko, err := sp.KafkaSourceOffsets(rwUID)
	if err != nil {
		t.Fatalf("KafkaSourceOffsets(%q): %v", rwUID, err)
	}
	out := map[int32]int64{}
	for _, po := range ko.Sorted() {
		if po.Topic != topic || po.Marker != "" {
			t.Fatalf("savepoint split %+v: want a real offset of %s", po, topic)
		}
		out[po.Partition] = po.Next
	}
	if len(out) != rwParts {
		t.Fatalf("savepoint has %d partitions of %s: %v", len(out), topic, out)
	}
	return out
}

// rwLog is what the test wrote to the source topic: partition -> offset -> value.
type rwLog struct {
	mu  sync.Mutex
	val map[int32][]string
}

// produce writes n + 3p records to each partition p of the source topic, checking each lands
// at the next offset.
func (l *rwLog) produce(t *testing.T, ctx context.Context, cl *kgo.Client, n int) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var recs []*kgo.Record
	for p := range int32(rwParts) {
		for i := range n + 3*int(p) {
			v := fmt.Sprintf("%s/%d/%d", rwTopic, p, len(l.val[p])+i)
			recs = append(recs, &kgo.Record{Topic: rwTopic, Partition: p, Value: []byte(v)})
		}
	}
	res := cl.ProduceSync(ctx, recs...)
	if err := res.FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	for _, x := range res {
		p := x.Record.Partition
		if x.Record.Offset != int64(len(l.val[p])) {
			t.Fatalf("%s-%d: %q at offset %d, want %d", rwTopic, p, x.Record.Value, x.Record.Offset, len(l.val[p]))
		}
		l.val[p] = append(l.val[p], string(x.Record.Value))
	}
}

// mirror writes DR's copy: per partition p, rwShift(p) records of DR's own, then every source
// record in order, each checked to land at source offset + rwShift(p).
func (l *rwLog) mirror(t *testing.T, ctx context.Context, cl *kgo.Client) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var recs []*kgo.Record
	for p := range int32(rwParts) {
		for i := range rwShift(p) {
			recs = append(recs, &kgo.Record{Topic: rwRemote, Partition: p, Value: fmt.Appendf(nil, "dr-before-the-mirror/%d/%d", p, i)})
		}
		for _, v := range l.val[p] {
			recs = append(recs, &kgo.Record{Topic: rwRemote, Partition: p, Value: []byte(v)})
		}
	}
	res := cl.ProduceSync(ctx, recs...)
	if err := res.FirstErr(); err != nil {
		t.Fatalf("produce DR copy: %v", err)
	}
	for _, x := range res {
		p, off := x.Record.Partition, x.Record.Offset
		if s := off - rwShift(p); s >= 0 && (s >= int64(len(l.val[p])) || l.val[p][s] != string(x.Record.Value)) {
			t.Fatalf("%s-%d@%d: %q, want source record %d", rwRemote, p, off, x.Record.Value, s)
		}
	}
}

// rwProbeLine is one line of the job's probe: the first record a reader read in a partition.
type rwProbeLine struct {
	offset int64
	value  string
}

// rwWaitProbes waits until the job tagged tag has reported the first record it read in every
// partition of topic, and returns them by partition; a partition reported twice (the job
// restarted) fails the test.
func rwWaitProbes(t *testing.T, ctx context.Context, k *testenv.Kafka, topic, tag string) map[int32]rwProbeLine {
	t.Helper()
	cl := k.Client(t, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{rwProbe: {0: kgo.NewOffset().AtStart()}}))
	out := map[int32]rwProbeLine{}
	wctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	for len(out) < rwParts {
		fs := cl.PollFetches(wctx)
		if wctx.Err() != nil {
			t.Fatalf("probes %s: %d of %d partitions of %s reported: %v", tag, len(out), rwParts, topic, out)
		}
		for _, r := range fs.Records() {
			if string(r.Key) != tag {
				continue
			}
			f := strings.SplitN(string(r.Value), ",", 4)
			if len(f) != 4 || f[0] != topic {
				t.Fatalf("probe %s %q: want %s,partition,offset,value", tag, r.Value, topic)
			}
			p, err1 := strconv.ParseInt(f[1], 10, 32)
			o, err2 := strconv.ParseInt(f[2], 10, 64)
			if err1 != nil || err2 != nil {
				t.Fatalf("probe %q: %v %v", r.Value, err1, err2)
			}
			if _, dup := out[int32(p)]; dup {
				t.Fatalf("probe %s: partition %d reported twice (the job restarted?): %q", tag, p, r.Value)
			}
			out[int32(p)] = rwProbeLine{offset: o, value: f[3]}
		}
	}
	return out
}

// rwRunApproved has alice plan p, bob approve it, and alice run every step in order; it
// returns the run once done.
func rwRunApproved(t *testing.T, ctx context.Context, rb *runbook.Runbook, p runbook.Plan) *runbook.Run {
	t.Helper()
	id := approved(t, ctx, rb, p, "rewrite the savepoint for DR and restore it through Kubernetes")
	for i, s := range p.Steps {
		x, err := rb.BeginWith(ctx, alice, id, i, runbook.StepArgs{Confirmation: p.Flow})
		if err != nil {
			t.Fatalf("step %d (%s): %v", i+1, s.Kind, err)
		}
		x.Progress = func(line string) { t.Logf("step %d progress: %s", i+1, line) }
		t0 := time.Now()
		if err := x.Perform(ctx); err != nil {
			t.Fatalf("step %d (%s): %v", i+1, s.Kind, err)
		}
		t.Logf("TIMING step %d (%s): %s", i+1, s.Kind, time.Since(t0).Round(time.Millisecond))
	}
	run, err := rb.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != "completed" {
		t.Fatalf("run %s after its steps", run.Status)
	}
	return run
}
