package failover

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/drconsole/drconsole/demo"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/runbooktest"
)

// drillChild runs drill run id through a Worker, as the console does, and
// says DONE once its cleanup is done.
func drillChild(ctx context.Context, rb *runbook.Runbook, id int64) int {
	if err := (&Worker{Runbook: rb}).RunDrill(ctx, runbook.Actor{Name: "alice", Role: "operator"}, id, "primary->dr"); err != nil {
		fmt.Println("ERROR", err)
		return 1
	}
	for {
		d, err := rb.Store.Drill(ctx, id)
		switch {
		case err == nil && d.Cleanup == model.CleanupDone:
			fmt.Println("DONE")
			return 0
		case err == nil && d.Cleanup == model.CleanupFailed:
			fmt.Println("ERROR cleanup failed:", d.CleanupError)
			return 1
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A console SIGKILLed mid-drill leaves a temporary group and perhaps a
// running job copy in DR; the next console finds the drill unfinished,
// ends it as failed (it is not resumed) and cleans up: the job cancelled,
// the group gone, production's job and groups untouched.
func TestDrillCleanedUpAfterSIGKILL(t *testing.T) {
	k := newKillRig(t)
	ctx := k.ctx
	k.sb.SetMirrorRunning(true) // the rig stopped it for its failover: a drill never does
	k.rb.Flink = flink.NewRESTClient
	adm := kadm.NewClient(runbooktest.DRClient(k.mon, "primary->dr"))
	plan := runbook.Plan{Flow: "primary->dr", Kind: runbook.PlanDrill, Steps: []runbook.Step{
		{Kind: KindPreflight},
		{Kind: KindTranslateGroup, Group: "billing", AllowPartial: true},
		{Kind: KindRestoreFlink, FlinkTarget: "flink-dr", JarID: demo.FlinkJarID},
	}}
	for _, crashAt := range []string{"1:effect-done", "2:started", "2:effect-done"} {
		id, err := k.rb.Create(ctx, runbook.Actor{Name: "alice", Role: "operator"}, plan, "drill killed at "+crashAt)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := k.rb.Get(ctx, id)
		if err := k.rb.Approve(ctx, runbook.Actor{Name: "bob", Role: "operator"}, id, r.PlanHash, ""); err != nil {
			t.Fatal(err)
		}
		k.id, k.drill = id, "1"
		if !k.child(t, k.db, crashAt) {
			t.Fatalf("no crash at %s", crashAt)
		}
		group, jobID := DrillGroup(id, "billing"), restoreJobID(r, 2)
		if crashAt != "2:started" {
			if st, _, _ := k.mon.Translator("primary->dr").DRGroupState(ctx, group); st == "Dead" {
				t.Fatalf("killed at %s: the temporary group %s is not there to clean up", crashAt, group)
			}
		}
		if crashAt == "2:effect-done" && k.fl.JobState(jobID) != "RUNNING" {
			t.Fatalf("killed at %s: the drill job is %q", crashAt, k.fl.JobState(jobID))
		}
		// The next console.
		runbook.Restarted()
		w := &Worker{Runbook: k.rb}
		if n, err := w.CleanDrills(ctx); err != nil || n != 1 {
			t.Fatalf("killed at %s: %d drills cleaned up at start-up: %v", crashAt, n, err)
		}
		d, err := k.store.Drill(ctx, id)
		if err != nil || d.Cleanup != model.CleanupDone || d.Outcome != model.DrillFailed || d.Succeeded() || !strings.Contains(d.Error, "stopped during the drill") {
			t.Fatalf("killed at %s: drill %+v %v", crashAt, d, err)
		}
		if r, _ := k.rb.Get(ctx, id); r.Status != model.RunCancelled {
			t.Fatalf("killed at %s: the run is %s, want cancelled (never resumed)", crashAt, r.Status)
		}
		if _, err := k.rb.Begin(ctx, runbook.Actor{Name: "alice", Role: "operator"}, id, r.NextStep, "primary->dr", ""); err == nil {
			t.Fatalf("killed at %s: a step of the cleaned-up drill started again", crashAt)
		}
		if st, _, _ := k.mon.Translator("primary->dr").DRGroupState(ctx, group); st != "Dead" {
			t.Fatalf("killed at %s: the temporary group %s is %s after the cleanup", crashAt, group, st)
		}
		if st := k.fl.JobState(jobID); st != "" && st != "CANCELED" {
			t.Fatalf("killed at %s: the drill job is %s after the cleanup", crashAt, st)
		}
	}
	if st := k.fl.JobState(demo.FlinkSandboxJobID); st != "RUNNING" {
		t.Fatalf("the production job is %s", st)
	}
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range listed.Groups() {
		if strings.HasPrefix(g, "drconsole-drill-") {
			t.Errorf("left behind: %s", g)
		}
	}
	if n, bad, err := k.store.VerifyAudit(ctx); err != nil || bad != nil {
		t.Fatalf("audit chain after %d records: %v %v", n, bad, err)
	}
}
