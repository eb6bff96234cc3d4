package effect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/kube"
)

// KubeRestore is a restore of a FlinkDeployment through the Flink
// Kubernetes Operator: Restore's merge patch (a new savepointRedeployNonce
// with initialSavepointPath) applied through the Kubernetes API, then the
// resource's status followed until the job runs or fails.
type KubeRestore struct {
	Restore flink.K8sRestore
	// Snapshot, when set, is the name of a FlinkStateSnapshot (operator
	// 1.10+) that first registers the savepoint with the operator
	// (alreadyExists, never disposed on delete); the redeploy then uses
	// the path the operator recorded for it.
	Snapshot string
	// Progress, when set, hears what the operator is doing.
	Progress func(string)
	// Poll is the interval between status reads (default 2s); Timeout
	// bounds the following (default 10m).
	Poll, Timeout time.Duration
}

// KubeRestoreResult is what the restore did and saw last.
type KubeRestoreResult struct {
	Namespace     string `json:"namespace"`
	Deployment    string `json:"deployment"`
	Nonce         int64  `json:"savepoint_redeploy_nonce"`
	SavepointPath string `json:"savepoint_path"`
	Snapshot      string `json:"state_snapshot,omitempty"`
	// Patched is false when an earlier attempt had patched already.
	Patched        bool   `json:"patched"`
	Conflicts      int    `json:"conflicts_retried,omitempty"`
	JobState       string `json:"job_state,omitempty"`
	JobID          string `json:"job_id,omitempty"`
	LifecycleState string `json:"lifecycle_state,omitempty"`
}

// maxConflicts bounds the re-read-and-patch rounds when the deployment
// changes between read and patch (409: someone else, or the operator
// writing its status, moved resourceVersion on).
const maxConflicts = 5

// RestoreFlinkDeployment patches c's FlinkDeployment to redeploy from
// r.Restore.SavepointPath and follows it until status.jobStatus.state is
// RUNNING with the new spec reconciled. Idempotent: a deployment already
// carrying this nonce and path is followed, not patched again.
func RestoreFlinkDeployment(ctx context.Context, w audit.Written, c *kube.Client, r KubeRestore) (KubeRestoreResult, error) {
	k := r.Restore
	res := KubeRestoreResult{Namespace: c.Namespace, Deployment: c.Deployment, Nonce: k.Nonce, SavepointPath: k.SavepointPath, Snapshot: r.Snapshot}
	if err := audited(w, "kubernetes: restore of FlinkDeployment "+c.Namespace+"/"+c.Deployment); err != nil {
		return res, err
	}
	switch {
	case k.Namespace != c.Namespace || k.Name != c.Deployment:
		return res, fmt.Errorf("kubernetes: the restore names %s/%s but the client reaches %s/%s", k.Namespace, k.Name, c.Namespace, c.Deployment)
	case k.SavepointPath == "":
		return res, errors.New("kubernetes: a redeploy needs a savepoint path (the operator refuses an empty initialSavepointPath)")
	case k.Nonce == 0:
		return res, errors.New("kubernetes: the redeploy nonce must not be 0")
	}
	r.defaults()
	if r.Snapshot != "" {
		path, err := registerSnapshot(ctx, c, r)
		if err != nil {
			return res, err
		}
		k.SavepointPath, res.SavepointPath = path, path
	}
	for {
		d, err := c.GetDeployment(ctx)
		if err != nil {
			return res, err
		}
		if d.Job.Nonce != nil && *d.Job.Nonce == k.Nonce {
			if d.Job.InitialSavepointPath != k.SavepointPath {
				return res, fmt.Errorf("kubernetes: FlinkDeployment %s/%s carries this run's redeploy nonce %d but savepoint %q, not %q: changed by someone else since; not touching it",
					c.Namespace, c.Deployment, k.Nonce, d.Job.InitialSavepointPath, k.SavepointPath)
			}
			r.say("FlinkDeployment %s/%s already carries this restore (nonce %d): following it", c.Namespace, c.Deployment, k.Nonce)
			break
		}
		body, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": d.ResourceVersion}, "spec": map[string]any{"job": k.Job()}})
		if err != nil {
			return res, err
		}
		_, err = c.Resource(kube.FlinkDeployments).Patch(ctx, c.Deployment, types.MergePatchType, body, metav1.PatchOptions{FieldManager: "drconsole"})
		if err == nil {
			res.Patched = true
			r.say("patched FlinkDeployment %s/%s: redeploy from %s (nonce %d)", c.Namespace, c.Deployment, k.SavepointPath, k.Nonce)
			break
		}
		if !kube.IsConflict(err) {
			return res, c.Explain(err, kube.PatchDeployment, c.Deployment)
		}
		if res.Conflicts++; res.Conflicts >= maxConflicts {
			return res, fmt.Errorf("kubernetes: FlinkDeployment %s/%s changed under %d patches in a row (409 Conflict each time): try again: %w", c.Namespace, c.Deployment, res.Conflicts, err)
		}
		r.say("FlinkDeployment %s/%s changed since it was read (409 Conflict): reading it again", c.Namespace, c.Deployment)
		if err := sleep(ctx, time.Duration(res.Conflicts)*100*time.Millisecond); err != nil {
			return res, err
		}
	}
	return follow(ctx, c, r, k, res)
}

func (r *KubeRestore) defaults() {
	if r.Poll <= 0 {
		r.Poll = 2 * time.Second
	}
	if r.Timeout <= 0 {
		r.Timeout = 10 * time.Minute
	}
}

func (r *KubeRestore) say(format string, args ...any) {
	if r.Progress != nil {
		r.Progress(fmt.Sprintf(format, args...))
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// follow reads the deployment every r.Poll until the operator has taken up
// this nonce and path (lastReconciledSpec) and the job runs, or the job or
// the resource failed, or r.Timeout passed. Before the take-up, the status
// is the old job's and proves nothing.
func follow(ctx context.Context, c *kube.Client, r KubeRestore, k flink.K8sRestore, res KubeRestoreResult) (KubeRestoreResult, error) {
	fctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	var last, lastErr string
	for {
		d, err := c.GetDeployment(fctx)
		switch {
		case err == nil:
			st := d.Status
			res.JobState, res.JobID, res.LifecycleState = string(st.JobState), st.JobID, string(st.LifecycleState)
			taken := st.Reconciled != nil && st.Reconciled.Nonce != nil && *st.Reconciled.Nonce == k.Nonce && st.Reconciled.InitialSavepointPath == k.SavepointPath
			opErr := ""
			if st.Error != "" {
				opErr = kube.ErrorText(st.Error)
				lastErr = opErr
			}
			last = fmt.Sprintf("lifecycle %s, job %s", orDash(string(st.LifecycleState)), orDash(string(st.JobState)))
			switch {
			case !taken:
				last = "waiting for the operator to take up the redeploy (" + last + ", from before)"
			case st.JobState == kube.JobRunning && st.LifecycleState != kube.LifecycleFailed && (st.ReconciliationState == "" || st.ReconciliationState == kube.ReconciliationDeployed):
				r.say("FlinkDeployment %s/%s: job %s RUNNING from %s", c.Namespace, c.Deployment, st.JobID, k.SavepointPath)
				return res, nil
			case st.JobState == kube.JobFailed || st.LifecycleState == kube.LifecycleFailed || st.LifecycleState == kube.LifecycleRolledBack:
				if opErr == "" {
					opErr = "the operator gave no error text (kubectl describe flinkdeployment " + c.Deployment + " shows its events)"
				}
				return res, fmt.Errorf("kubernetes: FlinkDeployment %s/%s failed to restore from %s (%s): %s", c.Namespace, c.Deployment, k.SavepointPath, last, opErr)
			}
			if opErr != "" {
				last += "; operator error: " + opErr
			}
			r.say("FlinkDeployment %s/%s: %s", c.Namespace, c.Deployment, last)
		case kube.Permanent(err) || ctx.Err() != nil:
			return res, err
		case fctx.Err() == nil: // a passing failure (the API server restarting): keep following
			if last == "" {
				last = "reading the status failed: " + err.Error()
			}
			r.say("FlinkDeployment %s/%s: reading the status failed (retrying): %v", c.Namespace, c.Deployment, err)
		}
		if err := sleep(fctx, r.Poll); err != nil {
			if ctx.Err() != nil {
				return res, fmt.Errorf("kubernetes: stopped following FlinkDeployment %s/%s (the redeploy is requested; run the step again to follow it): %w", c.Namespace, c.Deployment, ctx.Err())
			}
			msg := fmt.Sprintf("kubernetes: FlinkDeployment %s/%s is not RUNNING from %s within %s; last seen: %s", c.Namespace, c.Deployment, k.SavepointPath, r.Timeout, last)
			if lastErr != "" && !strings.Contains(msg, lastErr) {
				msg += "; last operator error: " + lastErr
			}
			return res, errors.New(msg)
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// registerSnapshot creates (or finds, after a crash) the FlinkStateSnapshot
// r.Snapshot for the savepoint and waits until the operator marks it
// COMPLETED; it returns the path the operator recorded.
func registerSnapshot(ctx context.Context, c *kube.Client, r KubeRestore) (string, error) {
	path := r.Restore.SavepointPath
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kube.Group + "/" + kube.Version,
		"kind":       "FlinkStateSnapshot",
		"metadata": map[string]any{"name": r.Snapshot, "namespace": c.Namespace,
			"labels": map[string]any{"app.kubernetes.io/managed-by": "drconsole"}},
		"spec": map[string]any{
			"backoffLimit": int64(0),
			"jobReference": map[string]any{"kind": "FlinkDeployment", "name": c.Deployment},
			// disposeOnDelete false: deleting this resource must never
			// delete the savepoint the DR job restores from.
			"savepoint": map[string]any{"alreadyExists": true, "disposeOnDelete": false, "path": path},
		},
	}}
	_, err := c.Resource(kube.FlinkStateSnapshots).Create(ctx, obj, metav1.CreateOptions{FieldManager: "drconsole"})
	switch {
	case err == nil:
		r.say("created FlinkStateSnapshot %s/%s for %s", c.Namespace, r.Snapshot, path)
	case kube.IsAlreadyExists(err):
		r.say("FlinkStateSnapshot %s/%s exists (an earlier attempt): checking it", c.Namespace, r.Snapshot)
	default:
		return "", c.Explain(err, kube.CreateSnapshot, r.Snapshot)
	}
	wctx, cancel := context.WithTimeout(ctx, min(r.Timeout, 2*time.Minute))
	defer cancel()
	for {
		s, err := c.GetSnapshot(wctx, r.Snapshot)
		if err != nil && (kube.Permanent(err) || wctx.Err() != nil) {
			return "", err
		}
		if err == nil {
			if s.Path != path || !s.AlreadyExists {
				return "", fmt.Errorf("kubernetes: FlinkStateSnapshot %s/%s exists for savepoint %q (alreadyExists %t), not this run's %q: not using it", c.Namespace, r.Snapshot, s.Path, s.AlreadyExists, path)
			}
			switch s.State {
			case kube.SnapshotCompleted:
				if s.StatusPath != "" {
					return s.StatusPath, nil
				}
				return path, nil
			case kube.SnapshotFailed, kube.SnapshotAbandoned:
				return "", fmt.Errorf("kubernetes: the operator marked FlinkStateSnapshot %s/%s %s: %s", c.Namespace, r.Snapshot, s.State, kube.ErrorText(s.Error))
			}
			state := s.State
			if state == "" {
				state = "not reconciled by the operator yet"
			}
			r.say("FlinkStateSnapshot %s/%s: %s", c.Namespace, r.Snapshot, state)
		}
		if err := sleep(wctx, r.Poll); err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			return "", fmt.Errorf("kubernetes: the operator did not mark FlinkStateSnapshot %s/%s COMPLETED within %s (is kubernetes.operator.snapshot.resource.enabled off? then set use_state_snapshot: false)",
				c.Namespace, r.Snapshot, min(r.Timeout, 2*time.Minute))
		}
	}
}
