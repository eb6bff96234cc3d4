//go:build e2e

// End-to-end: restore a Flink job in DR with translated offsets (issue 5, "Done means").
//
// REAL primary and DR Kafka, REAL MirrorMaker 2 (dedicated, identity, offset-syncs on the
// target), a REAL Flink MiniCluster, and the console's own code for every step the operator
// would take:
//
//  1. the job (testenv/flinkjob EventsJob, group flink-events, source uid kafka-source) reads
//     `events` (4 partitions) on the PRIMARY while a producer keeps writing;
//
//  2. stop-with-savepoint through the savepoint catalog (catalog.Trigger stop=true: Flink REST,
//     recorded in the catalog with its offsets read);
//
//  3. the savepoint's positions through flink.ReadSavepoint(...).KafkaSourceOffsets("");
//
//  4. the primary keeps producing a little longer (DR gets data beyond the savepoint), then MM2
//     catches up and the console (monitor.NewMonitor) has ingested every offset sync;
//
//  5. an approved failover run (failover.Runbook, operator alice plans, bob approves): its
//     translate-group step translates the savepoint's catalog offsets and commits them to the
//     DR group;
//
//  6. its restore-flink step restores the job from the savepoint into the same Flink cluster
//     (jar id from RESTClient.Jars) pointed at DR Kafka, with a NEW source uid and
//     allowNonRestoredState=true: the source state is dropped, the keyed count state restored,
//     and the new source starts from the DR group's committed (= translated) offsets;
//
//  7. the job reports the first record it reads per partition (its probe: "topic,partition,
//     offset,value" to the topic flink-probe on the Kafka it reads). Checked per partition:
//     the first DR offset read == the translated offset; its value maps back to a source offset
//     src <= the savepoint's offset U (no gap); U - src (records read twice) <= RereadMax.
//     Then the restored job emits exactly sum(DR end - translated) records (none skipped).
//
// Run with (both Flink versions, ~80 s):
//
//	go test -tags e2e -count=1 -run TestRestoreInDR -v ./testenv/
package testenv_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/testenv"
)

const (
	rsOldUID = "kafka-source"
	rsNewUID = "kafka-source-dr"
)

func TestRestoreInDR(t *testing.T) {
	for _, d := range []testenv.FlinkDist{testenv.FlinkDefault, testenv.Flink1_20, testenv.Flink2_3} {
		t.Run("flink-"+d.Version, func(t *testing.T) { restoreInDR(t, d) })
	}
}

func restoreInDR(t *testing.T, dist testenv.FlinkDist) {
	testStart := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	rig := startDRRig(t, ctx, "identity")
	primary, dr, padm, dadm, opts, flow, mon := rig.primary, rig.dr, rig.padm, rig.dadm, rig.opts, rig.flow, rig.mon
	f := testenv.StartFlinkWith(t, testenv.FlinkOptions{Dist: &dist})
	rc := flink.NewRESTClient(f.URL)
	version, err := rc.Version(ctx)
	if err != nil || version != dist.Version {
		t.Fatalf("flink REST version %q, %v; want %s", version, err, dist.Version)
	}

	// --- a producer on the primary that keeps writing -------------------------------------------
	data := rig.data
	stopProducer := rig.startProducer(t, ctx)
	defer stopProducer()

	// --- 1. the job on the primary ----------------------------------------------------------------
	jobOpts := testenv.FlinkJobOptions{Bootstrap: primary.Bootstrap, Topics: []string{rsTopic}, GroupID: rsGroup,
		SourceUID: rsOldUID, Parallelism: 2, ProbeTopic: rsProbeTopic, ProbeTag: "primary"}
	jobID := f.SubmitJob(t, jobOpts)
	f.WaitJobRunning(t, jobID)
	f.WaitCheckpoint(t, jobID, 0)
	time.Sleep(3 * time.Second) // consume part of the stream and complete a few checkpoints
	first := rsWaitProbes(t, primary, rsTopic, "primary")
	for p, pr := range first {
		if pr.offset != 0 {
			t.Errorf("primary job: first offset read in %s-%d is %d, want 0 (fresh start, no committed offsets)", rsTopic, p, pr.offset)
		}
	}

	// --- 2. stop-with-savepoint through the savepoint catalog -------------------------------------
	tr := rig.tr
	rcfg := &config.Config{
		Clusters:        map[string]*config.Cluster{"primary": {Bootstrap: []string{primary.Bootstrap}}, "dr": {Bootstrap: []string{dr.Bootstrap}}},
		Flows:           []*config.Flow{flow},
		RefreshInterval: config.Duration(time.Second),
		FlinkTargets:    []*config.FlinkTarget{{Name: "flink-dr", RestURL: f.URL, Region: "dr"}},
		SavepointDirs:   []string{f.SavepointDir},
	}
	if err := rcfg.Normalize("e2e-runbook"); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cat := &catalog.Catalog{Store: tr.Store, Config: rcfg, Monitor: mon, Log: log}
	t0 := time.Now()
	polls := 0
	entry, err := failover.TriggerSavepoint(ctx, e2eWritten(t, tr.Store), cat, "flink-dr", jobID, true, func(time.Duration) { polls++ })
	if err != nil {
		t.Fatalf("catalog.Trigger(stop): %v", err)
	}
	spTook := time.Since(t0)
	f.WaitJobState(t, jobID, "FINISHED")
	spDir, err := testenv.LocalPath(entry.Path)
	if err != nil {
		t.Fatal(err)
	}
	loc := entry.Path
	t.Logf("stop-with-savepoint of job %s via catalog.Trigger: %s in %s (%d progress calls), catalog entry %d", jobID, loc, spTook.Round(time.Millisecond), polls, entry.ID)

	// --- 3. the savepoint's offsets, Go-native --------------------------------------------------
	sp, err := flink.ReadSavepoint(spDir)
	if err != nil {
		t.Fatalf("ReadSavepoint: %v", err)
	}
	ko, err := sp.KafkaSourceOffsets("")
	if err != nil {
		t.Fatalf("KafkaSourceOffsets: %v", err)
	}
	// _metadata before V5 (Flink 1.20 writes V4) has no uids: only the operator id is there.
	if (ko.UID != rsOldUID && (sp.Version >= 5 || ko.UID != "")) || ko.OperatorID != flink.OperatorIDFromUID(rsOldUID) {
		t.Errorf("savepoint source operator uid %q id %s, want %q %s", ko.UID, ko.OperatorID, rsOldUID, flink.OperatorIDFromUID(rsOldUID))
	}
	spOff := map[int32]int64{}
	for _, po := range ko.Sorted() {
		if po.Topic != rsTopic || po.Marker != "" || po.Next < 0 {
			t.Fatalf("savepoint partition %+v: want a real offset of %s", po, rsTopic)
		}
		spOff[po.Partition] = po.Next
	}
	if len(spOff) != rsParts {
		t.Fatalf("savepoint has %d partitions %v, want %d", len(spOff), spOff, rsParts)
	}
	t.Logf("savepoint v%d checkpoint %d: %s offsets %v", sp.Version, sp.CheckpointID, rsTopic, spOff)
	catOffs, err := entry.Offsets()
	if err != nil || len(catOffs) != rsParts {
		t.Fatalf("catalog entry offsets %v (%v), read error %q", catOffs, err, entry.ReadError)
	}
	for p, off := range spOff {
		if catOffs[fmt.Sprintf("%s-%d", rsTopic, p)] != off {
			t.Errorf("catalog offsets %v differ from the savepoint's %v", catOffs, spOff)
		}
	}

	// --- 4. more data on the primary, then MM2 catches up and the console has every sync ----------
	time.Sleep(1500 * time.Millisecond)
	stopProducer()
	pEnd := rig.primaryEnd(t)
	for p := range int32(rsParts) {
		if u, e := spOff[p], pEnd[p]; u <= 0 || u >= e {
			t.Fatalf("%s-%d: savepoint offset %d not inside (0, end %d): the job did not stop mid-stream", rsTopic, p, u, e)
		}
	}
	primaryCommitted := flinkCommitted(t, padm, rsGroup)
	t.Logf("primary: %d records, end offsets %v; group %s committed (last periodic checkpoint) %v", data.n, pEnd, rsGroup, primaryCommitted)
	drSrc := rig.waitMirrored(t, pEnd)
	syncs := rig.waitSyncs(t, ctx)

	// --- 5. translate and commit to the DR group ---------------------------------------------------
	translated := rig.translate(t, syncs, spOff)
	proposed := map[model.TP]int64{}
	for p, tl := range translated {
		proposed[model.TP{Topic: opts.RemoteTopic(rsTopic), Partition: p}] = tl.Offset
	}
	before := flinkCommitted(t, dadm, rsGroup)
	jars, err := rc.Jars(ctx)
	if err != nil {
		t.Fatal(err)
	}
	jarID := ""
	for _, j := range jars {
		if j.Name == testenv.JobJarName {
			jarID = j.ID
		}
	}
	if jarID == "" {
		t.Fatalf("GET /jars has no %s: %+v", testenv.JobJarName, jars)
	}
	drOpts := testenv.FlinkJobOptions{Bootstrap: dr.Bootstrap, Topics: []string{rsTopic}, GroupID: rsGroup,
		SourceUID: rsNewUID, Parallelism: 2, ProbeTopic: rsProbeTopic, ProbeTag: "restored", Name: "drconsole-events-dr"}
	rb := failover.Equip(&runbook.Runbook{Store: tr.Store, Config: rcfg, Audit: runbook.StoreAuditor{Store: tr.Store}, Log: log,
		Flink: flink.NewRESTClient}, failover.Env{Monitor: mon, Catalog: cat}) // the steps ask the catalog for the savepoint's verdict when they start
	alice, bob := runbook.Actor{Name: "alice", Role: "operator"}, runbook.Actor{Name: "bob", Role: "operator"}
	runID, err := rb.Create(ctx, alice, runbook.Plan{Flow: rsFlow, Steps: []runbook.Step{
		{Kind: failover.KindTranslateGroup, Group: rsGroup, FromSavepoint: loc},
		{Kind: failover.KindRestoreFlink, FlinkTarget: "flink-dr", JarID: jarID, EntryClass: testenv.FlinkJobEntryClass,
			Args: drOpts.ProgramArgs(), SavepointPath: loc, Parallelism: 2, AllowNonRestoredState: true},
	}}, "e2e: restore flink in DR from "+loc)
	if err != nil {
		t.Fatal(err)
	}
	run, err := rb.Get(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if err := rb.Approve(ctx, bob, runID, run.PlanHash, "checked the savepoint"); err != nil {
		t.Fatal(err)
	}
	t0 = time.Now()
	for idx := range 2 {
		x, err := rb.Begin(ctx, alice, runID, idx, rsFlow, "")
		if err != nil {
			t.Fatalf("step %d: %v", idx+1, err)
		}
		if err := x.Perform(ctx); err != nil {
			t.Fatalf("step %d: %v", idx+1, err)
		}
	}
	run, _ = rb.Get(ctx, runID)
	if run.Status != "completed" {
		t.Fatalf("run %d is %s: %+v", runID, run.Status, run.Steps)
	}
	want := map[string]int64{}
	for k, v := range proposed {
		want[fmt.Sprintf("%s-%d", k.Topic, k.Partition)] = v
	}
	if got := flinkCommitted(t, dadm, rsGroup); !flinkMapsEqual(got, want) {
		t.Fatalf("dr group %s after the translate step: %v, want the savepoint's offsets translated %v", rsGroup, got, want)
	}
	t.Logf("dr group %s: %v before (MM2 group offset sync), %v committed by the runbook's translate step", rsGroup, before, want)
	var restored struct {
		JobID string `json:"job_id"`
	}
	if err := json.Unmarshal([]byte(run.Steps[1].Result), &restored); err != nil || restored.JobID == "" {
		t.Fatalf("restore step result %q: %v", run.Steps[1].Result, err)
	}
	newJobID := restored.JobID
	f.WaitJobRunning(t, newJobID)
	t.Logf("restored job %s (jar %s, allowNonRestoredState, uid %s -> %s) by the runbook, RUNNING %s after the first step started",
		newJobID, jarID, rsOldUID, rsNewUID, time.Since(t0).Round(time.Millisecond))
	rsCheckRestored(t, ctx, f, newJobID, sp.CheckpointID, spDir, rsNewUID)

	// --- 7. where it really started ----------------------------------------------------------------
	probes := rsWaitProbes(t, dr, rsTopic, "restored")
	rig.checkStarts(t, probes, translated, spOff, pEnd, drSrc)
	// It reads everything from there on, and only that (write-records of the source vertex).
	rest := map[string]int64{}
	for p := range int32(rsParts) {
		rest[fmt.Sprint(p)] = pEnd[p] - translated[p].Offset
	}
	t0 = time.Now()
	flinkWaitSourceRecords(t, f, newJobID, rest)
	t.Logf("restored job emitted exactly sum(dr end - translated) = %v records in %s", rest, time.Since(t0).Round(time.Millisecond))
	if err := f.Do(ctx, http.MethodPatch, "/jobs/"+newJobID+"?mode=cancel", nil, nil); err != nil {
		t.Logf("cancel %s: %v", newJobID, err)
	}
	t.Logf("TIMING flink %s: whole scenario %s", dist.Version, time.Since(testStart).Round(time.Millisecond))
}
