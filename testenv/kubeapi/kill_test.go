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

// A console killed between the snapshot and the patch: the step runs in a
// child process (this test binary, TestKilledConsoleChild) on the same
// database, as a console started on it would, and is killed with SIGKILL
// once its FlinkStateSnapshot exists, while it waits for the operator to
// complete it. The console started again resumes the step: the same
// snapshot (no second create), one patch with the run's one nonce, one
// redeploy.

const childEnv = "DRCONSOLE_KUBEAPI_KILL_CHILD" // JSON killedConsole

// killedConsole is what the child console is started from.
type killedConsole struct {
	Kubeconfig, Bootstrap, DB string
	Run                       int64
}

// TestKilledConsoleChild is the console TestKilledBetweenSnapshotAndPatch
// kills; on its own it does nothing.
func TestKilledConsoleChild(t *testing.T) {
	env := os.Getenv(childEnv)
	if env == "" {
		t.Skip("the child process of TestKilledBetweenSnapshotAndPatch")
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

	q, _ := json.Marshal(killedConsole{Kubeconfig: r.kubeconfig, Bootstrap: r.bootstrap, DB: db, Run: id})
	cmd := exec.Command(os.Args[0], "-test.run", "^TestKilledConsoleChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+string(q))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	snaps := r.dyn(t).Resource(kube.FlinkStateSnapshots).Namespace(ns)
	var first unstructured.Unstructured
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		list, err := snaps.List(context.Background(), metav1.ListOptions{})
		if err == nil && len(list.Items) > 0 {
			first = list.Items[0]
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("the child console created no FlinkStateSnapshot within a minute: %v\n%s", err, out.String())
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	t.Logf("killed the console after it created FlinkStateSnapshot %s", first.GetName())
	if run, err := rb.Get(context.Background(), id); err != nil || run.Steps[0].Status != "running" {
		t.Fatalf("after the kill the step is %+v (%v), want running (interrupted)\n%s", run.Steps[0], err, out.String())
	}
	d := r.get(t, kube.FlinkDeployments.Resource, dep)
	if _, set, _ := unstructured.NestedFieldNoCopy(d.Object, "spec", "job", "savepointRedeployNonce"); set || d.GetGeneration() != 1 {
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
	if s := r.get(t, kube.FlinkStateSnapshots.Resource, first.GetName()); s.GetUID() != first.GetUID() {
		t.Fatalf("snapshot %s was created again (uid %s, was %s)", first.GetName(), s.GetUID(), first.GetUID())
	}
}
