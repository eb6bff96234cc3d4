package effect

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/kube"
	"github.com/drconsole/drconsole/kube/kubetest"
)

const ns, dep = "flink-dr", "events-job"

// kubeStand is a stand-in API server holding the DR FlinkDeployment (its
// current nonce 7) and a stand-in operator whose deploys end in state.
type kubeStand struct {
	s        *kubetest.Server
	c        *kube.Client
	mu       sync.Mutex
	deployed []kube.JobSpec
	progress []string
}

func newKubeStand(t *testing.T, state string, deployErr error) *kubeStand {
	k := &kubeStand{s: kubetest.New(t)}
	k.s.Put(kubetest.Deployment(ns, dep, 7))
	k.c = k.s.Client(t, ns, dep)
	ctx, cancel := context.WithCancel(context.Background())
	op := &kubetest.Operator{S: k.s, Namespace: ns, Name: dep, Poll: 5 * time.Millisecond,
		Deploy: func(_ context.Context, j kube.JobSpec) (string, error) {
			// The follower reads the UPGRADING status before the job exists,
			// however the two loops are scheduled.
			for end := time.Now().Add(2 * time.Second); !k.said("lifecycle") && time.Now().Before(end); {
				time.Sleep(time.Millisecond)
			}
			k.mu.Lock()
			defer k.mu.Unlock()
			k.deployed = append(k.deployed, j)
			return "job-2", deployErr
		},
		JobState: func(context.Context, string) (string, error) { return state, nil }}
	done := make(chan struct{})
	go func() { defer close(done); op.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return k
}

func (k *kubeStand) restore(sp string, nonce int64) KubeRestore {
	return KubeRestore{Restore: flink.K8sRestore{Namespace: ns, Name: dep, SavepointPath: sp, Nonce: nonce, Args: []string{"--bootstrap", "kafka.dr:9092"}},
		Poll: 5 * time.Millisecond, Timeout: 5 * time.Second, Progress: func(s string) {
			k.mu.Lock()
			defer k.mu.Unlock()
			k.progress = append(k.progress, s)
		}}
}

func (k *kubeStand) deploys() []kube.JobSpec {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.deployed)
}

func (k *kubeStand) said(sub string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.ContainsFunc(k.progress, func(s string) bool { return strings.Contains(s, sub) })
}

// The patch carries exactly the operator's redeploy fields; the operator
// takes it up, the job runs, and every access the code made is one of
// kube.Used (what deploy/rbac.yaml grants).
func TestKubeRestorePatchesAndFollowsToRunning(t *testing.T) {
	k := newKubeStand(t, "RUNNING", nil)
	res, err := RestoreFlinkDeployment(context.Background(), writtenT(t), k.c, k.restore("s3://dr/sp-1", 42))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Patched || res.JobState != "RUNNING" || res.JobID != "job-2" || res.Nonce != 42 {
		t.Fatalf("result %+v", res)
	}
	job := k.s.Get("flinkdeployments", ns, dep)["spec"].(map[string]any)["job"].(map[string]any)
	want := map[string]any{"initialSavepointPath": "s3://dr/sp-1", "savepointRedeployNonce": float64(42), "upgradeMode": "savepoint",
		"allowNonRestoredState": false, "state": "running", "args": []any{"--bootstrap", "kafka.dr:9092"},
		"jarURI": "local:///opt/flink/usrlib/job.jar", "parallelism": float64(2)}
	if len(job) != len(want) {
		t.Fatalf("spec.job %v, want %v", job, want)
	}
	for f, v := range want {
		if !reflect.DeepEqual(job[f], v) {
			t.Errorf("spec.job.%s = %v, want %v", f, job[f], v)
		}
	}
	if d := k.deploys(); len(d) != 1 || d[0].InitialSavepointPath != "s3://dr/sp-1" {
		t.Fatalf("operator deploys %+v", d)
	}
	if !k.said("waiting for the operator") && !k.said("lifecycle") {
		t.Errorf("no progress while following: %v", k.progress)
	}
	k.onlyUsed(t)
}

// onlyUsed checks every access the code made is one of kube.Used (what
// deploy/rbac.yaml grants).
func (k *kubeStand) onlyUsed(t *testing.T) {
	t.Helper()
	for _, a := range k.s.Calls() {
		if !slices.Contains(kube.Used, a) {
			t.Errorf("the restore used %v, which kube.Used (and so deploy/rbac.yaml) does not list", a)
		}
	}
}

// A deployment changed between read and patch (409) is read again and
// patched on its new resourceVersion; one that keeps changing is given up
// after maxConflicts rounds, unpatched.
func TestKubeRestoreRetriesConflicts(t *testing.T) {
	k := newKubeStand(t, "RUNNING", nil)
	k.s.OnPatch(func(n int) {
		if n <= 2 {
			k.s.Touch("flinkdeployments", ns, dep) // someone else wrote in between
		}
	})
	res, err := RestoreFlinkDeployment(context.Background(), writtenT(t), k.c, k.restore("s3://dr/sp-1", 42))
	if err != nil || res.Conflicts != 2 || !res.Patched || res.JobState != "RUNNING" {
		t.Fatalf("result %+v err %v", res, err)
	}
	if !k.said("409 Conflict") {
		t.Errorf("conflicts not reported: %v", k.progress)
	}

	k = newKubeStand(t, "RUNNING", nil)
	k.s.OnPatch(func(int) { k.s.Touch("flinkdeployments", ns, dep) })
	res, err = RestoreFlinkDeployment(context.Background(), writtenT(t), k.c, k.restore("s3://dr/sp-1", 42))
	if err == nil || !strings.Contains(err.Error(), "changed under 5 patches") || !kube.IsConflict(err) || res.Patched {
		t.Fatalf("endless conflicts: %+v %v", res, err)
	}
	if n := k.s.Get("flinkdeployments", ns, dep)["spec"].(map[string]any)["job"].(map[string]any)["savepointRedeployNonce"]; n != float64(7) {
		t.Fatalf("nonce %v after refused patches", n)
	}
}

// 403 names the verb, the resource and the namespace; 404 names the
// deployment; an API server that does not answer is said to be
// unreachable. Nothing is patched.
func TestKubeRestoreErrors(t *testing.T) {
	ctx := context.Background()
	k := newKubeStand(t, "RUNNING", nil)
	k.s.Deny(kube.PatchDeployment)
	_, err := RestoreFlinkDeployment(ctx, writtenT(t), k.c, k.restore("s3://dr/sp-1", 42))
	if err == nil || !strings.Contains(err.Error(), "the console's service account may not patch flinkdeployments.flink.apache.org in namespace flink-dr") {
		t.Fatalf("403: %v", err)
	}
	k.s.Deny(kube.GetDeployment)
	_, err = RestoreFlinkDeployment(ctx, writtenT(t), k.c, k.restore("s3://dr/sp-1", 42))
	if err == nil || !strings.Contains(err.Error(), "may not get flinkdeployments.flink.apache.org in namespace flink-dr") {
		t.Fatalf("403 on get: %v", err)
	}

	k = newKubeStand(t, "RUNNING", nil)
	other := k.s.Client(t, ns, "no-such-job")
	_, err = RestoreFlinkDeployment(ctx, writtenT(t), other, KubeRestore{Restore: flink.K8sRestore{Namespace: ns, Name: "no-such-job", SavepointPath: "s3://dr/sp-1", Nonce: 42}})
	if err == nil || !strings.Contains(err.Error(), "FlinkDeployment flink-dr/no-such-job not found") || !kube.IsNotFound(err) {
		t.Fatalf("404: %v", err)
	}

	k.s.Close()
	_, err = RestoreFlinkDeployment(ctx, writtenT(t), k.c, k.restore("s3://dr/sp-1", 42))
	if err == nil || !strings.Contains(err.Error(), "the Kubernetes API server "+k.s.URL+" is unreachable") {
		t.Fatalf("unreachable: %v", err)
	}
}

// A job the operator cannot start ends the step with the operator's
// error text; a job that never runs ends it at the timeout, saying what
// was seen last.
func TestKubeRestoreFailures(t *testing.T) {
	k := newKubeStand(t, "RUNNING", errors.New("Could not restore from savepoint s3://dr/sp-1: FileNotFoundException"))
	_, err := RestoreFlinkDeployment(context.Background(), writtenT(t), k.c, k.restore("s3://dr/sp-1", 42))
	if err == nil || !strings.Contains(err.Error(), "failed to restore from s3://dr/sp-1") ||
		!strings.Contains(err.Error(), "DeploymentFailedException: Could not restore from savepoint s3://dr/sp-1: FileNotFoundException") {
		t.Fatalf("failed deploy: %v", err)
	}

	k = newKubeStand(t, "FAILED", nil)
	_, err = RestoreFlinkDeployment(context.Background(), writtenT(t), k.c, k.restore("s3://dr/sp-1", 42))
	if err == nil || !strings.Contains(err.Error(), "job FAILED") {
		t.Fatalf("failed job: %v", err)
	}

	k = newKubeStand(t, "INITIALIZING", nil)
	r := k.restore("s3://dr/sp-1", 42)
	r.Timeout = 300 * time.Millisecond
	_, err = RestoreFlinkDeployment(context.Background(), writtenT(t), k.c, r)
	if err == nil || !strings.Contains(err.Error(), "is not RUNNING from s3://dr/sp-1 within 300ms; last seen: lifecycle DEPLOYED, job INITIALIZING") {
		t.Fatalf("timeout: %v", err)
	}
}

// The old job's RUNNING, before the operator took the redeploy up, is not
// success: with no operator at all, the restore times out.
func TestKubeRestoreWaitsForTakeUp(t *testing.T) {
	s := kubetest.New(t)
	s.Put(kubetest.Deployment(ns, dep, 7)) // RUNNING, STABLE: the job before
	c := s.Client(t, ns, dep)
	r := KubeRestore{Restore: flink.K8sRestore{Namespace: ns, Name: dep, SavepointPath: "s3://dr/sp-1", Nonce: 42}, Poll: 5 * time.Millisecond, Timeout: 200 * time.Millisecond}
	_, err := RestoreFlinkDeployment(context.Background(), writtenT(t), c, r)
	if err == nil || !strings.Contains(err.Error(), "waiting for the operator to take up the redeploy") {
		t.Fatalf("no operator: %v", err)
	}
}

// A re-run (after a crash) finds this run's nonce and path on the
// deployment and follows it without patching again; the same nonce with
// another path is someone else's change and is refused.
func TestKubeRestoreIdempotent(t *testing.T) {
	k := newKubeStand(t, "RUNNING", nil)
	ctx := context.Background()
	if _, err := RestoreFlinkDeployment(ctx, writtenT(t), k.c, k.restore("s3://dr/sp-1", 42)); err != nil {
		t.Fatal(err)
	}
	rv := k.s.Get("flinkdeployments", ns, dep)["metadata"].(map[string]any)["generation"]
	res, err := RestoreFlinkDeployment(ctx, writtenT(t), k.c, k.restore("s3://dr/sp-1", 42))
	if err != nil || res.Patched || res.JobState != "RUNNING" || !k.said("already carries this restore") {
		t.Fatalf("re-run: %+v %v", res, err)
	}
	if g := k.s.Get("flinkdeployments", ns, dep)["metadata"].(map[string]any)["generation"]; g != rv || len(k.deploys()) != 1 {
		t.Fatalf("re-run patched again: generation %v -> %v, %d deploys", rv, g, len(k.deploys()))
	}
	_, err = RestoreFlinkDeployment(ctx, writtenT(t), k.c, k.restore("s3://dr/other", 42))
	if err == nil || !strings.Contains(err.Error(), "changed by someone else") {
		t.Fatalf("same nonce, other path: %v", err)
	}
}

// Cancelling the context stops the following at once and says the
// redeploy is requested.
func TestKubeRestoreCancel(t *testing.T) {
	k := newKubeStand(t, "INITIALIZING", nil)
	ctx, cancel := context.WithCancel(context.Background())
	r := k.restore("s3://dr/sp-1", 42)
	r.Timeout = time.Minute
	r.Progress = func(string) { cancel() }
	start := time.Now()
	_, err := RestoreFlinkDeployment(ctx, writtenT(t), k.c, r)
	if !errors.Is(err, context.Canceled) || time.Since(start) > 10*time.Second {
		t.Fatalf("cancel: %v after %v", err, time.Since(start))
	}
}

// With a FlinkStateSnapshot: it is created for the existing savepoint
// (never disposed on delete), the operator marks it COMPLETED, and the
// redeploy uses the path it recorded. A re-run finds it and goes on.
func TestKubeRestoreWithStateSnapshot(t *testing.T) {
	k := newKubeStand(t, "RUNNING", nil)
	ctx := context.Background()
	ok, err := k.c.SnapshotsServed(ctx)
	if err != nil || !ok {
		t.Fatalf("snapshots served: %v %v", ok, err)
	}
	r := k.restore("s3://dr/sp-1", 42)
	r.Snapshot = "drconsole-run-1-step-4"
	res, err := RestoreFlinkDeployment(ctx, writtenT(t), k.c, r)
	if err != nil || res.JobState != "RUNNING" || res.Snapshot != r.Snapshot {
		t.Fatalf("%+v %v", res, err)
	}
	snap := k.s.Get("flinkstatesnapshots", ns, r.Snapshot)
	sp := snap["spec"].(map[string]any)["savepoint"].(map[string]any)
	ref := snap["spec"].(map[string]any)["jobReference"].(map[string]any)
	if sp["alreadyExists"] != true || sp["disposeOnDelete"] != false || sp["path"] != "s3://dr/sp-1" || ref["name"] != dep || ref["kind"] != "FlinkDeployment" {
		t.Fatalf("snapshot spec %v", snap["spec"])
	}
	if res, err = RestoreFlinkDeployment(ctx, writtenT(t), k.c, r); err != nil || res.Patched {
		t.Fatalf("re-run: %+v %v", res, err)
	}
	k.onlyUsed(t)
	k.s.Deny(kube.CreateSnapshot)
	r.Snapshot = "another"
	if _, err = RestoreFlinkDeployment(ctx, writtenT(t), k.c, r); err == nil ||
		!strings.Contains(err.Error(), "may not create flinkstatesnapshots.flink.apache.org in namespace flink-dr") {
		t.Fatalf("403 on create: %v", err)
	}

	s := kubetest.New(t)
	s.NoSnapshots = true
	if ok, err := s.Client(t, ns, dep).SnapshotsServed(ctx); err != nil || ok {
		t.Fatalf("without the CRD: %v %v", ok, err)
	}
}
