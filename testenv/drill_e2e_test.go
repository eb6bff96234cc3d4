//go:build e2e

package testenv_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/testenv"
)

// A DR drill against real Kafka, MirrorMaker 2 and Flink: the production job keeps running on
// the primary and is savepointed (not stopped); the drill translates the savepoint's offsets
// into a temporary DR group, submits a copy of the job (new source uid, the drill's group and
// name) to Flink, and measures the time to RUNNING and to the first record Flink counts, then
// cancels the copy and deletes the group. Then a second drill whose console is killed (SIGKILL,
// a child process) right after the restore submitted its job copy is found and cleaned up by a
// new Worker, as at start-up. Production's job keeps its id and state, the drill commits to no
// production group, and no drill group is left in DR.
//
// On both Flink versions testenv runs: 2.2.1 restores with claimMode, 1.20 with restoreMode.
func TestDrillE2E(t *testing.T) {
	for _, dist := range []testenv.FlinkDist{testenv.FlinkDefault, testenv.Flink1_20} {
		t.Run("flink-"+dist.Version, func(t *testing.T) { drillE2E(t, dist) })
	}
}

func drillE2E(t *testing.T, dist testenv.FlinkDist) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	rig := startDRRig(t, ctx, "identity")
	f := testenv.StartFlinkWith(t, testenv.FlinkOptions{Dist: &dist})
	stopProducer := rig.startProducer(t, ctx)
	defer stopProducer()

	// Production: the job on the primary, running throughout.
	prodID := f.SubmitJob(t, testenv.FlinkJobOptions{Bootstrap: rig.primary.Bootstrap, Topics: []string{rsTopic}, GroupID: rsGroup,
		SourceUID: rsOldUID, Parallelism: 2})
	f.WaitJobRunning(t, prodID)
	f.WaitCheckpoint(t, prodID, f.WaitCheckpoint(t, prodID, 0).ID)

	console := drillConsole{Primary: rig.primary.Bootstrap, DR: rig.dr.Bootstrap, Policy: rig.policy, FlinkURL: f.URL,
		SavepointDir: f.SavepointDir, DB: rig.db}
	cfg := drillConfig(t, console)
	store := rig.tr.Store
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rb := drillRunbook(cfg, store, rig.mon, log)
	sp, err := failover.TriggerSavepoint(ctx, e2eWritten(t, store), failover.BookOf(rb).Catalog, "flink-dr", prodID, false, nil)
	if err != nil {
		t.Fatalf("savepoint of the production job: %v", err)
	}

	// The copy's arguments: DR, a new source uid (so it starts from the drill group's offsets),
	// without --group and --name (the drill's arguments give them).
	var args []string
	all := testenv.FlinkJobOptions{Bootstrap: rig.dr.Bootstrap, Topics: []string{rsTopic}, SourceUID: rsNewUID, Parallelism: 2}.ProgramArgs()
	for i := 0; i < len(all); i += 2 {
		if all[i] != "--group" && all[i] != "--name" {
			args = append(args, all[i], all[i+1])
		}
	}
	plan := runbook.Plan{Flow: rsFlow, Kind: runbook.PlanDrill, Steps: []runbook.Step{
		{Kind: failover.KindPreflight},
		{Kind: failover.KindTranslateGroup, Group: rsGroup, FromSavepoint: sp.Path, AllowPartial: true},
		{Kind: failover.KindRestoreFlink, FlinkTarget: "flink-dr", JarID: f.JobJarID(t), EntryClass: testenv.FlinkJobEntryClass,
			Args: args, SavepointPath: sp.Path, Parallelism: 2, AllowNonRestoredState: true},
	}}
	alice, bob := runbook.Actor{Name: "alice", Role: "operator"}, runbook.Actor{Name: "bob", Role: "operator"}
	approved := func(why string) *runbook.Run {
		t.Helper()
		id, err := rb.Create(ctx, alice, plan, why)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := rb.Get(ctx, id)
		if err := rb.Approve(ctx, bob, id, r.PlanHash, "ok"); err != nil {
			t.Fatal(err)
		}
		r, _ = rb.Get(ctx, id)
		return r
	}
	drGroups := func() []string {
		t.Helper()
		listed, err := rig.dadm.ListGroups(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return slices.Sorted(slices.Values(listed.Groups()))
	}
	groupsBefore := drGroups()
	untouched := func(when string) {
		t.Helper()
		if o, err := f.JobOverview(ctx, prodID); err != nil || o.State != "RUNNING" {
			t.Fatalf("%s: the production job %s is %+v (%v)", when, prodID, o, err)
		}
		if cs, _ := store.GroupChanges(ctx, rsFlow, rsGroup); len(cs) != 0 {
			t.Fatalf("%s: changes recorded to the production group %s: %+v", when, rsGroup, cs)
		}
		// MM2's checkpoint connector may have created the production group in DR meanwhile
		// (group offset sync); only a drill's group would be the drill's leftover.
		var left []string
		for _, g := range drGroups() {
			if strings.HasPrefix(g, "drconsole-drill-") {
				left = append(left, g)
			}
		}
		if len(left) != 0 {
			t.Fatalf("%s: left in DR: %v (before the drill: %v)", when, left, groupsBefore)
		}
	}

	// --- 1. a drill through the Worker ------------------------------------------------------------
	r := approved("e2e drill")
	w := &failover.Worker{Runbook: rb, Log: log}
	if err := w.RunDrill(ctx, alice, r.ID, rsFlow); err != nil {
		t.Fatal(err)
	}
	var d *model.Drill
	if err := testenv.Eventually(4*time.Minute, 250*time.Millisecond, func() error {
		var err error
		if d, err = failover.BookOf(rb).Drill(ctx, r.ID); err == nil && (d == nil || (d.Cleanup != model.CleanupDone && d.Cleanup != model.CleanupFailed)) {
			return errDrillRunning
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if !d.Succeeded() {
		got, _ := rb.Get(ctx, r.ID)
		t.Fatalf("drill %+v; steps %+v", d, got.Steps)
	}
	if o, err := f.JobOverview(ctx, d.JobID); err != nil || o.State != "CANCELED" || d.JobID == prodID {
		t.Fatalf("the drill job %s after the cleanup: %+v %v", d.JobID, o, err)
	}
	t.Logf("TIMING drill: RUNNING after %d ms, first record (achieved RTO) after %d ms; RPO then %v ms (lower bound %v); re-read at most %v; would have failed: %v",
		*d.ToRunningMs(), *d.RTOMs(), deref(d.RPOMs), d.RPOAtLeast, deref(d.RereadMax()), d.RulesFailed)
	untouched("after the drill")

	// --- 2. the console is killed mid-drill (SIGKILL, in a child process) right after the restore
	// submitted the job copy: the copy runs, its temporary group is in DR, nothing is cleaned up.
	r = approved("e2e drill, console killed")
	console.Run = r.ID
	drillKilled(t, console)
	d = drillLeftRunning(t, ctx, rb, f, r.ID)
	// The next console's Worker finds it at start-up, ends it as failed and cleans up.
	if n, err := (&failover.Worker{Runbook: rb, Log: log}).CleanDrills(ctx); err != nil || n != 1 {
		t.Fatalf("start-up cleanup: %d drills, %v", n, err)
	}
	d, _ = failover.BookOf(rb).Drill(ctx, r.ID)
	if d.Cleanup != model.CleanupDone || d.Succeeded() || !strings.Contains(d.Error, "stopped during the drill") {
		t.Fatalf("the killed drill after the start-up cleanup: %+v", d)
	}
	if got, _ := rb.Get(ctx, r.ID); got.Status != model.RunCancelled {
		t.Fatalf("the killed drill's run is %s, want cancelled (never resumed)", got.Status)
	}
	if o, err := f.JobOverview(ctx, d.JobID); err != nil || o.State != "CANCELED" {
		t.Fatalf("the second drill's job after the restart: %+v %v", o, err)
	}
	untouched("after the start-up cleanup")
}

var errDrillRunning = errorString("the drill is still running")

type errorString string

func (e errorString) Error() string { return string(e) }

func deref(v *int64) any {
	if v == nil {
		return "unknown"
	}
	return *v
}
