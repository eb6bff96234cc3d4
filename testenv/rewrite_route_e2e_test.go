//go:build e2e

// End-to-end: the runbook's whole rewrite route (issue 14) on REAL MirrorMaker 2's offset syncs:
// an approved failover run REWRITES the savepoint (rewrite-savepoint step: targets from the
// syncs the console ingested from MM2, the new savepoint registered in the catalog as
// rewritten) and RESTORES it (restore-flink step through Flink REST: the job jar run on a real
// DR Flink cluster from the rewritten savepoint, same source uid). Per Flink version (2.2.1,
// 1.20.3), MM2 `default` policy (the DR topic is primary.events: the rewrite renames the splits
// and the enumerator state):
//
//  1. the job (uid kafka-source, keyed counts) runs on a PRIMARY Flink cluster against the
//     primary while a producer writes; stop-with-savepoint into a configured savepoint
//     directory; more data, MM2 catches up, the console has every sync (rwRunAndStop);
//
//  2. the savepoint is registered in the catalog; the run's plan is the console's own:
//     rewrite it into failover.RewriteDest, then restore-flink on the DR Flink target from
//     the rewritten path, same uid, without allowNonRestoredState;
//
//  3. checked: the rewrite step's targets == the console's translation of the savepoint's
//     offsets; the catalog entry is marked rewritten from the source for the flow and reads
//     the DR offsets; Flink says the job restored from the rewritten savepoint with the source
//     vertex of the same uid; per partition the first DR record read == the translated offset;
//     the keyed counts continue from the savepoint.
//
// The same route with the restore through Kubernetes (a FlinkStateSnapshot, the
// FlinkDeployment's initialSavepointPath) runs against the real Kubernetes API machinery in
// testenv/kubeapi (TestRewriteRestoreThroughRealAPIServer, a module of its own), on syncs
// written with the console's encoder instead of MM2's.
//
//	go test -tags e2e -count=1 -run TestRewriteRouteE2E -v ./testenv/
package testenv_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
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

func TestRewriteRouteE2E(t *testing.T) {
	start := time.Now()
	for _, dist := range []testenv.FlinkDist{testenv.FlinkDefault, testenv.Flink1_20} {
		t.Run("flink-"+dist.Version, func(t *testing.T) { rewriteRoute(t, dist) })
	}
	t.Logf("TIMING TestRewriteRouteE2E: %s", time.Since(start).Round(time.Millisecond))
}

func rewriteRoute(t *testing.T, dist testenv.FlinkDist) {
	testStart := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	rig := startDRRig(t, ctx, "default", rwCountTopic)
	if rig.remote == rsTopic {
		t.Fatalf("the default policy keeps %s as %s in DR: the rename would go unchecked", rsTopic, rig.remote)
	}

	// --- 1. the primary job, its savepoint, MM2 and the console's syncs ---------------------------
	spRoot := t.TempDir() // the configured savepoint directory
	fp := testenv.StartFlinkWith(t, testenv.FlinkOptions{Dist: &dist})
	st := rwRunAndStop(t, ctx, rig, fp, spRoot)

	// --- 2. the DR side and the console's runbook -------------------------------------------------
	fd := testenv.StartFlinkWith(t, testenv.FlinkOptions{Dist: &dist})
	cfg := &config.Config{
		Clusters:        map[string]*config.Cluster{"primary": {Bootstrap: []string{rig.primary.Bootstrap}}, "dr": {Bootstrap: []string{rig.dr.Bootstrap}}},
		Flows:           []*config.Flow{rig.flow},
		RefreshInterval: config.Duration(time.Second),
		FlinkTargets:    []*config.FlinkTarget{{Name: "flink-dr", RestURL: fd.URL, Region: "dr"}},
		SavepointDirs:   []string{spRoot},
	}
	if err := cfg.Normalize("e2e-rewrite-route"); err != nil {
		t.Fatal(err)
	}
	store := rig.tr.Store
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cat := &catalog.Catalog{Store: store, Config: cfg, Monitor: rig.mon, Log: log}
	srcID, err := cat.Register(ctx, st.spDir)
	if err != nil {
		t.Fatalf("register %s: %v", st.spDir, err)
	}
	src := flink.CanonicalPath(st.spDir)
	dest := failover.RewriteDest(cfg, rsFlow, src)
	destDir, err := testenv.LocalPath(dest)
	if err != nil {
		t.Fatalf("RewriteDest %q: %v", dest, err)
	}
	destURI := "file://" + destDir // as Flink takes it
	t.Logf("catalog #%d %s; the console proposes the rewrite into %s", srcID, src, dest)
	rig.commitDREnd(t, ctx, st.pEnd) // only restored state can start a partition at the translated offset

	rb := failover.Equip(&runbook.Runbook{Store: store, Config: cfg, Audit: runbook.StoreAuditor{Store: store}, Log: log,
		Flink: flink.NewRESTClient}, failover.Env{Monitor: rig.mon, Catalog: cat})
	drArgs := rwDRJob(rig, destDir, "route").ProgramArgs()
	run := e2eRunApproved(t, ctx, rb, runbook.Plan{Flow: rsFlow, Steps: []runbook.Step{
		{Kind: failover.KindRewriteSavepoint, RewriteFrom: src, SourceUID: rwUID, RewriteTo: destURI},
		{Kind: failover.KindRestoreFlink, FlinkTarget: "flink-dr", JarID: fd.JobJarID(t), EntryClass: testenv.FlinkJobEntryClass,
			Args: drArgs, SavepointPath: destURI, Parallelism: 2},
	}}, "e2e: rewrite the savepoint for DR and restore it")

	// --- 3. the rewrite step --------------------------------------------------------------------
	var rw struct {
		Splits  []string          `json:"splits"`
		Renamed map[string]string `json:"renamed_topics"`
		Reread  int64             `json:"reread_max"`
		Catalog int64             `json:"catalog_id"`
	}
	if err := json.Unmarshal([]byte(run.Steps[0].Result), &rw); err != nil || rw.Catalog == 0 || len(rw.Splits) != rsParts ||
		len(rw.Renamed) != 1 || rw.Renamed[rsTopic] != rig.remote {
		t.Fatalf("rewrite step result %s (%v): want %d splits, %s renamed to %s, a catalog id", run.Steps[0].Result, err, rsParts, rsTopic, rig.remote)
	}
	var rereadMax int64
	for _, tl := range st.translated {
		rereadMax += tl.RereadMax
	}
	if rw.Reread != rereadMax {
		t.Errorf("rewrite step states re-read bound %d, the translations' sum %d", rw.Reread, rereadMax)
	}
	for _, line := range rw.Splits {
		t.Logf("rewrite step: %s", line)
	}
	entry, err := store.SavepointByPath(ctx, flink.CanonicalPath(destURI))
	if err != nil {
		t.Fatalf("the rewritten savepoint is not in the catalog: %v", err)
	}
	if entry.ID != rw.Catalog || entry.Origin != model.OriginRewritten || entry.RewrittenFrom != src || entry.RewrittenFlow != rsFlow {
		t.Errorf("catalog entry %+v: want #%d, origin rewritten from %s for %s", entry, rw.Catalog, src, rsFlow)
	}
	offs, err := entry.Offsets()
	if err != nil || len(offs) != rsParts {
		t.Errorf("catalog offsets of the rewritten savepoint %v (%v, read error %q)", offs, err, entry.ReadError)
	}
	for p, tl := range st.translated {
		if key := fmt.Sprintf("%s-%d", rig.remote, p); offs[key] != tl.Offset {
			t.Errorf("catalog: rewritten %s at %d, the console's translation of %d is %d", key, offs[key], st.spOff[p], tl.Offset)
		}
	}
	// The files themselves, read independently of the step's own read-back.
	rsp, err := flink.ReadSavepoint(destDir)
	if err != nil {
		t.Fatalf("ReadSavepoint(rewritten): %v", err)
	}
	if rsp.CheckpointID != st.sp.CheckpointID || rsp.Version != st.sp.Version {
		t.Errorf("rewritten savepoint v%d checkpoint %d, source v%d checkpoint %d", rsp.Version, rsp.CheckpointID, st.sp.Version, st.sp.CheckpointID)
	}

	// --- 4. the restore --------------------------------------------------------------------------
	var res struct {
		JobID     string `json:"job_id"`
		Savepoint string `json:"savepoint"`
	}
	if err := json.Unmarshal([]byte(run.Steps[1].Result), &res); err != nil || res.JobID == "" || res.Savepoint != destURI {
		t.Fatalf("restore step result %s (%v): want a job from %s", run.Steps[1].Result, err, destURI)
	}
	fd.WaitJobRunning(t, res.JobID)
	rsCheckRestored(t, ctx, fd, res.JobID, st.sp.CheckpointID, destDir, rwUID)
	rwCheckContinues(t, ctx, rig, fd, res.JobID, "route", st)
	fd.CancelJob(t, res.JobID)
	t.Logf("TIMING flink %s: whole scenario %s", dist.Version, time.Since(testStart).Round(time.Millisecond))
}

// e2eRunApproved has alice plan p, bob approve it, and alice run every step in order (each
// step's progress logged); it returns the run once done.
func e2eRunApproved(t *testing.T, ctx context.Context, rb *runbook.Runbook, p runbook.Plan, why string) *runbook.Run {
	t.Helper()
	alice, bob := runbook.Actor{Name: "alice", Role: "operator"}, runbook.Actor{Name: "bob", Role: "operator"}
	runID, err := rb.Create(ctx, alice, p, why)
	if err != nil {
		t.Fatal(err)
	}
	run, err := rb.Get(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if err := rb.Approve(ctx, bob, runID, run.PlanHash, "ok"); err != nil {
		t.Fatal(err)
	}
	for idx, s := range p.Steps {
		x, err := rb.BeginWith(ctx, alice, runID, idx, runbook.StepArgs{Confirmation: p.Flow})
		if err != nil {
			t.Fatalf("step %d (%s): %v", idx+1, s.Kind, err)
		}
		x.Progress = func(line string) { t.Logf("step %d progress: %s", idx+1, line) }
		t0 := time.Now()
		if err := x.Perform(ctx); err != nil {
			t.Fatalf("step %d (%s): %v", idx+1, s.Kind, err)
		}
		t.Logf("TIMING step %d (%s): %s", idx+1, s.Kind, time.Since(t0).Round(time.Millisecond))
	}
	if run, err = rb.Get(ctx, runID); err != nil {
		t.Fatal(err)
	}
	if run.Status != "completed" {
		t.Fatalf("run %s after its steps", run.Status)
	}
	return run
}
