package failover

import (
	"context"
	"fmt"
	"strconv"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/kube"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/internal/effect"
)

// The restore-flink step on a target with `kubernetes`: the FlinkDeployment
// is patched to redeploy from the savepoint (effect.RestoreFlinkDeployment)
// instead of a jar run through Flink REST.

func (rb Book) kubeClient(k *config.Kubernetes) (*kube.Client, error) {
	if rb.Kube != nil {
		return rb.Kube(k)
	}
	return kube.New(k)
}

// kubeRestore is the step's restore, with a nonce and snapshot name fixed
// by the run and step: a resumed step recognises its own earlier patch.
func kubeRestore(r *runbook.Run, idx int, s runbook.Step, k *config.Kubernetes) flink.K8sRestore {
	id := restoreJobID(r, idx)
	nonce, _ := strconv.ParseInt(id[:12], 16, 64) // 48 bits: exact as a JSON number anywhere
	if nonce == 0 {
		nonce = 1
	}
	return flink.K8sRestore{Namespace: k.Namespace, Name: k.Deployment, SavepointPath: s.SavepointPath, Nonce: nonce,
		AllowNonRestoredState: s.AllowNonRestoredState, Args: s.Args}
}

func snapshotName(r *runbook.Run, idx int) string {
	return fmt.Sprintf("drconsole-run-%d-step-%d-%s", r.ID, idx+1, restoreJobID(r, idx)[:8])
}

func (rb Book) restoreKubernetes(ctx context.Context, w audit.Written, r *runbook.Run, idx int, s runbook.Step, t *config.FlinkTarget, progress func(string)) (any, error) {
	k := t.Kubernetes
	c, err := rb.kubeClient(k)
	if err != nil {
		return nil, err
	}
	snapshot := ""
	switch k.UseStateSnapshot {
	case config.StateSnapshotAlways:
		snapshot = snapshotName(r, idx)
	case config.StateSnapshotAuto, "":
		served, err := c.SnapshotsServed(ctx)
		if err != nil {
			return nil, err
		}
		if served {
			snapshot = snapshotName(r, idx)
		}
	}
	return effect.RestoreFlinkDeployment(ctx, w, c, effect.KubeRestore{Restore: kubeRestore(r, idx, s, k), Snapshot: snapshot,
		Progress: progress, Timeout: k.Timeout.D()})
}

func (rb Book) previewKubernetes(ctx context.Context, r *runbook.Run, idx int, s runbook.Step, t *config.FlinkTarget) []string {
	k := t.Kubernetes
	p := kubeRestore(r, idx, s, k)
	lines := []string{fmt.Sprintf("Kubernetes API: merge-patch FlinkDeployment %s/%s (on its current resourceVersion) so the Flink Kubernetes Operator redeploys it from %s:", k.Namespace, k.Deployment, OrNone(s.SavepointPath)),
		p.MergePatch(),
		fmt.Sprintf("then follow its status until the job is RUNNING (at most %s); no rollback to the previous job afterwards.", k.Timeout.D())}
	c, err := rb.kubeClient(k)
	if err == nil {
		var d *kube.Deployment
		if d, err = c.GetDeployment(ctx); err == nil {
			lines = append(lines, fmt.Sprintf("now: lifecycle %s, job %s, savepointRedeployNonce %s", OrNone(string(d.Status.LifecycleState)), OrNone(string(d.Status.JobState)), nonceText(d.Job.Nonce)))
		}
	}
	if err != nil {
		lines = append(lines, "now: unknown ("+err.Error()+")")
	}
	switch k.UseStateSnapshot {
	case config.StateSnapshotAlways:
		lines = append(lines, "first registers the savepoint as FlinkStateSnapshot "+snapshotName(r, idx)+" (alreadyExists, never disposed on delete)")
	case config.StateSnapshotAuto:
		lines = append(lines, "registers the savepoint as FlinkStateSnapshot "+snapshotName(r, idx)+" first when the API server serves that resource (operator 1.10+)")
	}
	return lines
}

func nonceText(n *int64) string {
	if n == nil {
		return "unset"
	}
	return strconv.FormatInt(*n, 10)
}
