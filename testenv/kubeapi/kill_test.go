package kubeapi

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drconsole/drconsole/kube"
)

// A console killed mid-restore: the step runs in a child process (this
// test binary, TestKilledConsoleChild) on the same database, as a console
// started on it would, and is killed with SIGKILL at a point seen on the
// real API server: once its FlinkStateSnapshot exists (while it waits for
// the operator to complete it), or once its patch is in. The console
// started again resumes the step: the same snapshot (no second create),
// one patch with the run's one nonce, one redeploy.

const childEnv = "DRCONSOLE_KUBEAPI_KILL_CHILD" // JSON killedConsole

// killedConsole is what the child console is started from.
type killedConsole struct {
	Kubeconfig, Bootstrap, DB string
	Run                       int64
}

// TestKilledConsoleChild is the console the kill tests kill; on its own it
// does nothing.
func TestKilledConsoleChild(t *testing.T) {
	env := os.Getenv(childEnv)
	if env == "" {
		t.Skip("the child process of the kill tests")
	}
	var q killedConsole
	if err := json.Unmarshal([]byte(env), &q); err != nil {
		t.Fatal(err)
	}
	rb := console(t, consoleConfig(t, q.Kubeconfig, q.Bootstrap), q.DB)
	err, res := execute(t, context.Background(), rb, q.Run)
	t.Fatalf("the step ended before the kill: %v %+v", err, res)
}

func TestKilledBetweenSnapshotAndPatch(t *testing.T) {
	r := newRig(t, nil)
	stop := r.operator(t, true) // leaves snapshots alone: the console waits between create and patch
	db := filepath.Join(t.TempDir(), "db")
	rb := console(t, consoleConfig(t, r.kubeconfig, r.bootstrap), db)
	id := approvedRestore(t, rb, savepoint, drArgs)
	first := r.killConsoleWhen(t, db, id, "it created its FlinkStateSnapshot", func(t *testing.T) bool { return r.snapshot(t) != nil })
	if d := r.get(t, kube.FlinkDeployments.Resource, dep); d.GetGeneration() != 1 {
		t.Fatalf("the FlinkDeployment was patched before the kill (generation %d): the kill came too late", d.GetGeneration())
	}

	stop()
	r.operator(t, false)
	err, res := execute(t, context.Background(), rb, id) // the console started again resumes the interrupted step
	if err != nil {
		t.Fatalf("resumed restore: %v", err)
	}
	if res.Snapshot != first.GetName() || !res.Patched {
		t.Fatalf("resumed with snapshot %q (the killed console created %q), patched %t", res.Snapshot, first.GetName(), res.Patched)
	}
	r.checkRestored(t, res, drArgs) // exactly one snapshot, one patch (generation 2), one deploy with res.Nonce
	if s := r.snapshot(t); s.GetUID() != first.GetUID() {
		t.Fatalf("snapshot %s was created again (uid %s, was %s)", first.GetName(), s.GetUID(), first.GetUID())
	}
}

// A console killed after its patch, while the operator deploys: started
// again it finds its own nonce on the FlinkDeployment and follows it,
// patching nothing.
func TestKilledAfterPatch(t *testing.T) {
	r := newRig(t, nil)
	release := make(chan struct{})
	r.deploy = func(ctx context.Context, _ kube.JobSpec) (string, error) {
		select { // the deploy takes until the console is killed
		case <-release:
			return "job-dr", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	r.operator(t, false)
	db := filepath.Join(t.TempDir(), "db")
	rb := console(t, consoleConfig(t, r.kubeconfig, r.bootstrap), db)
	id := approvedRestore(t, rb, savepoint, drArgs)
	r.killConsoleWhen(t, db, id, "it patched the FlinkDeployment", func(t *testing.T) bool {
		return r.get(t, kube.FlinkDeployments.Resource, dep).GetGeneration() == 2
	})
	close(release)
	err, res := execute(t, context.Background(), rb, id)
	if err != nil {
		t.Fatalf("resumed restore: %v", err)
	}
	if res.Patched || res.JobState != "RUNNING" {
		t.Fatalf("resumed: %+v, want followed without a second patch", res)
	}
	r.checkRestored(t, res, drArgs)
}

// killConsoleWhen runs step 1 of run id in a child console on db and kills
// it (SIGKILL) as soon as reached holds; the step is left running
// (interrupted). It returns the FlinkStateSnapshot then on the server.
func (r *rig) killConsoleWhen(t *testing.T, db string, id int64, what string, reached func(*testing.T) bool) *unstructured.Unstructured {
	t.Helper()
	q, _ := json.Marshal(killedConsole{Kubeconfig: r.kubeconfig, Bootstrap: r.bootstrap, DB: db, Run: id})
	cmd := exec.Command(os.Args[0], "-test.run", "^TestKilledConsoleChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+string(q))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); !reached(t); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("the child console did not get to where %s within a minute:\n%s", what, out.String())
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	t.Logf("killed the console after %s", what)
	rb := console(t, consoleConfig(t, r.kubeconfig, r.bootstrap), db)
	if run, err := rb.Get(context.Background(), id); err != nil || run.Steps[0].Status != "running" {
		t.Fatalf("after the kill the step is %+v (%v), want running (interrupted)\n%s", run.Steps[0], err, out.String())
	}
	return r.snapshot(t)
}

// snapshot is the namespace's one FlinkStateSnapshot on the server, nil
// when there is none.
func (r *rig) snapshot(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	list, err := r.dyn(t).Resource(kube.FlinkStateSnapshots).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	switch len(list.Items) {
	case 0:
		return nil
	case 1:
		return &list.Items[0]
	}
	t.Fatalf("%d FlinkStateSnapshots, want at most one", len(list.Items))
	return nil
}
