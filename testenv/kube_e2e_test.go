//go:build e2e

// The Kubernetes side of TestKubeRewriteRestoreE2E: kube/kubetest's stand-in API server and its
// stand-in operator loop, whose deploy REALLY runs the job on a real Flink from
// initialSavepointPath. The restore alone runs against the real API machinery in
// testenv/kubeapi (TestRestoreRealFlinkJob, a module of its own); the rewrite route stays here,
// on the stand-in, until it moves there too.
package testenv_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/kube"
	"github.com/drconsole/drconsole/kube/kubetest"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/testenv"
)

// kubeStandIn is the DR Kubernetes side for a Flink cluster f: kube/kubetest's stand-in API
// server holding the FlinkDeployment ns/name, and its stand-in operator loop (until ctx ends),
// whose deploy REALLY runs the job jar on f from initialSavepointPath (the spec's args and
// allowNonRestoredState, claimMode NO_CLAIM) and reports the job's state from Flink REST.
type kubeStandIn struct {
	s        *kubetest.Server
	ns, name string
	mu       sync.Mutex
	deployed []kube.JobSpec
}

func startKubeStandIn(t *testing.T, ctx context.Context, f *testenv.Flink, ns, name string, parallelism int) *kubeStandIn {
	t.Helper()
	ks := &kubeStandIn{s: kubetest.New(t), ns: ns, name: name}
	ks.s.Put(kubetest.Deployment(ns, name, 0))
	jarID := f.JobJarID(t)
	op := &kubetest.Operator{S: ks.s, Namespace: ns, Name: name, Poll: 100 * time.Millisecond,
		Deploy: func(ctx context.Context, j kube.JobSpec) (string, error) {
			ks.mu.Lock()
			ks.deployed = append(ks.deployed, j)
			ks.mu.Unlock()
			return f.RunJobFrom(ctx, jarID, j.Args, parallelism, j.InitialSavepointPath, j.AllowNonRestoredState)
		},
		JobState: func(ctx context.Context, id string) (string, error) {
			o, err := f.JobOverview(ctx, id)
			return o.State, err
		}}
	octx, stop := context.WithCancel(ctx)
	t.Cleanup(stop)
	go op.Run(octx)
	return ks
}

// client is failover.Runbook.Kube: client-go against the stand-in API server.
func (ks *kubeStandIn) client(k *config.Kubernetes) (*kube.Client, error) {
	return kube.NewForConfig(ks.s.Config(), k.Namespace, k.Deployment)
}

// checkDeployed checks the operator deployed exactly once, from savepoint with args, in
// upgradeMode savepoint and without allowNonRestoredState.
func (ks *kubeStandIn) checkDeployed(t *testing.T, savepoint string, args []string) {
	t.Helper()
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if len(ks.deployed) != 1 || ks.deployed[0].InitialSavepointPath != savepoint || strings.Join(ks.deployed[0].Args, " ") != strings.Join(args, " ") ||
		ks.deployed[0].UpgradeMode != "savepoint" || ks.deployed[0].AllowNonRestoredState {
		t.Errorf("the operator deployed %+v, want once from %s with args %v, upgradeMode savepoint, allowNonRestoredState off", ks.deployed, savepoint, args)
	}
}

// checkSnapshot checks the operator recorded the FlinkStateSnapshot the console registered as
// COMPLETED at savepoint.
func (ks *kubeStandIn) checkSnapshot(t *testing.T, name, savepoint string) {
	t.Helper()
	snap := ks.s.Get("flinkstatesnapshots", ks.ns, name)
	if st, _ := snap["status"].(map[string]any); st["state"] != "COMPLETED" || st["path"] != savepoint {
		t.Fatalf("snapshot %s status %v, want COMPLETED at %s", name, st, savepoint)
	}
}

// kubeResult is the result of a restore-flink step on a target with `kubernetes`.
type kubeResult struct {
	Patched  bool   `json:"patched"`
	JobState string `json:"job_state"`
	JobID    string `json:"job_id"`
	Snapshot string `json:"state_snapshot"`
	Path     string `json:"savepoint_path"`
}

// kubeStepResult reads step idx of a completed run as a restore through Kubernetes from
// savepoint that ended with the job RUNNING.
func kubeStepResult(t *testing.T, run *runbook.Run, idx int, savepoint string) kubeResult {
	t.Helper()
	var res kubeResult
	if err := json.Unmarshal([]byte(run.Steps[idx].Result), &res); err != nil || run.Status != "completed" || !res.Patched ||
		res.JobState != "RUNNING" || res.JobID == "" || res.Path != savepoint {
		t.Fatalf("run %s, step %d result %s (%v)", run.Status, idx+1, run.Steps[idx].Result, err)
	}
	return res
}

// e2eRunApproved has alice plan p, bob approve it, and alice run every step in order (each
// step's progress logged and collected); it returns the run once done and the progress lines.
func e2eRunApproved(t *testing.T, ctx context.Context, rb *runbook.Runbook, p runbook.Plan, why string) (*runbook.Run, []string) {
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
	// Without a savepoint catalog (and a monitor that is not run) what a
	// restore rests on cannot be checked when it starts: the second
	// operator overrides that, as the runbook allows.
	who, args := alice, runbook.StepArgs{Confirmation: p.Flow}
	if failover.BookOf(rb).Catalog == nil {
		who, args.InputsOverride = bob, "e2e: no savepoint catalog in this test"
	}
	var progress []string
	for idx, s := range p.Steps {
		x, err := rb.BeginWith(ctx, who, runID, idx, args)
		if err != nil {
			t.Fatalf("step %d (%s): %v", idx+1, s.Kind, err)
		}
		x.Progress = func(line string) {
			if len(progress) == 0 || progress[len(progress)-1] != line {
				progress = append(progress, line)
				t.Logf("step %d progress: %s", idx+1, line)
			}
		}
		t0 := time.Now()
		if err := x.Perform(ctx); err != nil {
			t.Fatalf("step %d (%s): %v", idx+1, s.Kind, err)
		}
		t.Logf("TIMING step %d (%s): %s", idx+1, s.Kind, time.Since(t0).Round(time.Millisecond))
	}
	if run, err = rb.Get(ctx, runID); err != nil {
		t.Fatal(err)
	}
	return run, progress
}
