//go:build e2e

package testenv_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/testenv"
)

// A console killed mid-drill, against the real systems: the drill runs in a child process
// (this test binary, TestDrillKillChild) on the same database with its own monitor, runbook and
// Worker, as a console started on it would, and is killed with SIGKILL right after the restore
// step submitted the job copy to Flink, before the outcome is recorded.

const drillChildEnv = "DRCONSOLE_DRILL_KILL_CHILD" // JSON drillConsole

// drillConsole is what a console of TestDrillE2E's rig is started from.
type drillConsole struct {
	Primary, DR, Policy    string
	FlinkURL, SavepointDir string
	DB                     string
	Run                    int64
}

// drillConfig is the drill test's console configuration.
func drillConfig(t *testing.T, q drillConsole) *config.Config {
	t.Helper()
	cfg := &config.Config{
		Clusters:        map[string]*config.Cluster{"primary": {Bootstrap: []string{q.Primary}}, "dr": {Bootstrap: []string{q.DR}}},
		Flows:           []*config.Flow{rigFlow(q.Policy)},
		RefreshInterval: config.Duration(time.Second),
		FlinkTargets:    []*config.FlinkTarget{{Name: "flink-dr", RestURL: q.FlinkURL, Region: "dr"}},
		SavepointDirs:   []string{q.SavepointDir},
		Drill:           config.Drill{JobArgs: []string{"--group", "{group}", "--name", "drconsole-drill-{run}"}, Timeout: config.Duration(3 * time.Minute)},
	}
	if err := cfg.Normalize("e2e-drill"); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// drillRunbook is the drill test's runbook.
func drillRunbook(cfg *config.Config, store *storage.Store, mon *monitor.Monitor, log *slog.Logger) *runbook.Runbook {
	return failover.Equip(&runbook.Runbook{Store: store, Config: cfg, Audit: runbook.StoreAuditor{Store: store}, Log: log,
		Flink: flink.NewRESTClient}, failover.Env{Monitor: mon, Catalog: &catalog.Catalog{Store: store, Config: cfg, Monitor: mon, Log: log}})
}

// TestDrillKillChild is the child process of TestDrillE2E's killed drill; it does nothing
// unless started by it.
func TestDrillKillChild(t *testing.T) {
	env := os.Getenv(drillChildEnv)
	if env == "" {
		t.Skip("the child of TestDrillE2E")
	}
	var q drillConsole
	if err := json.Unmarshal([]byte(env), &q); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cfg := drillConfig(t, q)
	store, mon, log := childMonitor(t, ctx, cfg, q.DB)
	rb := drillRunbook(cfg, store, mon, log)
	rb.CrashHook = func(p string) {
		if p != "effect-done" {
			return
		}
		if r, err := rb.Get(ctx, q.Run); err == nil && r.Plan.Steps[r.NextStep].Kind == failover.KindRestoreFlink {
			fmt.Println("REACHED restore-flink effect-done")
			select {} // until the parent kills this process
		}
	}
	if err := (&failover.Worker{Runbook: rb, Log: log}).RunDrill(ctx, runbook.Actor{Name: "alice", Role: "operator"}, q.Run, rsFlow); err != nil {
		fmt.Printf("RUNDRILL FAILED %v\n", err)
		os.Exit(3)
	}
	time.Sleep(4 * time.Minute)
	fmt.Println("FINISHED without reaching restore-flink's effect")
	os.Exit(4)
}

// drillKilled runs drill q.Run in a child console and kills it (SIGKILL) right after the
// restore step's effect.
func drillKilled(t *testing.T, q drillConsole) {
	t.Helper()
	b, _ := json.Marshal(q)
	killChildAt(t, "TestDrillKillChild", drillChildEnv+"="+string(b), "REACHED restore-flink effect-done", "the drill to the restore's effect")
}

// drillLeftRunning is the state a killed drill leaves: its steps claimed by a dead console,
// the job copy running on Flink, no cleanup.
func drillLeftRunning(t *testing.T, ctx context.Context, rb *runbook.Runbook, f *testenv.Flink, id int64) *model.Drill {
	t.Helper()
	d, err := failover.BookOf(rb).Drill(ctx, id)
	if err != nil || d == nil || d.JobID == "" || d.Cleanup == model.CleanupDone {
		t.Fatalf("the killed drill: %+v %v", d, err)
	}
	if o, err := f.JobOverview(ctx, d.JobID); err != nil || o.State != "RUNNING" {
		t.Fatalf("the killed drill's job %s: %+v %v, want RUNNING", d.JobID, o, err)
	}
	return d
}
