package kubetest

import (
	"context"
	"encoding/json"
	"time"

	"github.com/drconsole/drconsole/kube"
)

// Operator is a stand-in for the Flink Kubernetes Operator's savepoint
// redeploy (job-management.md, "Redeploy using the savepointRedeployNonce";
// AbstractJobReconciler.redeployWithSavepoint): when spec.job's
// savepointRedeployNonce changes to a new value it records the spec as
// reconciled (UPGRADING, job RECONCILING), calls Deploy, and then reports
// the job's state from JobState until it runs (DEPLOYED, then STABLE), or
// FAILED with status.error. FlinkStateSnapshots with alreadyExists it marks
// COMPLETED with their path, as the operator does on first reconciliation.
type Operator struct {
	S               API
	Namespace, Name string
	// Deploy starts the job of spec (in the e2e: a real jar run from
	// InitialSavepointPath) and returns its job id.
	Deploy func(ctx context.Context, spec kube.JobSpec) (jobID string, err error)
	// JobState is the state of the job Deploy started.
	JobState func(ctx context.Context, jobID string) (string, error)
	// IgnoreSnapshots leaves snapshots unprocessed (snapshot resources
	// disabled in the operator's configuration).
	IgnoreSnapshots bool
	// Poll is the loop's interval (default 20ms).
	Poll time.Duration
}

// API is where the operator loop reads and writes: the stand-in Server,
// or a client of a real API server (testenv/kubeapi).
type API interface {
	// Get returns a copy of an object, nil when absent.
	Get(resource, ns, name string) map[string]any
	// SetStatus merges status into an object's status.
	SetStatus(resource, ns, name string, status map[string]any)
	// NewSnapshots names namespace ns's FlinkStateSnapshots without a status.
	NewSnapshots(ns string) []string
}

// Run loops until ctx is done.
func (o *Operator) Run(ctx context.Context) {
	poll := o.Poll
	if poll == 0 {
		poll = 20 * time.Millisecond
	}
	var seen *int64
	if d := o.read(); d != nil {
		seen = d.Job.Nonce
	}
	job := ""
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(poll):
		}
		o.snapshots()
		d := o.read()
		if d == nil {
			continue
		}
		if n := d.Job.Nonce; n != nil && (seen == nil || *n != *seen) {
			seen = n
			job = o.redeploy(ctx, d)
			continue
		}
		if job != "" {
			state, err := o.JobState(ctx, job)
			if err != nil {
				continue // the operator retries its observation
			}
			lc := kube.LifecycleDeployed
			if kube.JobState(state) == kube.JobRunning {
				lc = kube.LifecycleStable
			}
			o.S.SetStatus(kube.FlinkDeployments.Resource, o.Namespace, o.Name, map[string]any{"lifecycleState": string(lc),
				"jobStatus": map[string]any{"state": state}})
		}
	}
}

func (o *Operator) read() *kube.Deployment {
	obj := o.S.Get(kube.FlinkDeployments.Resource, o.Namespace, o.Name)
	if obj == nil {
		return nil
	}
	d, err := kube.ParseDeployment(unstructuredOf(obj))
	if err != nil {
		return nil
	}
	return d
}

// redeploy deploys d's job and returns its id ("" when it failed).
func (o *Operator) redeploy(ctx context.Context, d *kube.Deployment) string {
	obj := o.S.Get(kube.FlinkDeployments.Resource, o.Namespace, o.Name)
	spec, _ := json.Marshal(map[string]any{"spec": obj["spec"], "resource_metadata": map[string]any{"apiVersion": kube.Group + "/" + kube.Version}})
	o.S.SetStatus(kube.FlinkDeployments.Resource, o.Namespace, o.Name, map[string]any{
		"lifecycleState": "UPGRADING", "error": nil,
		"jobStatus":            map[string]any{"state": "RECONCILING"},
		"reconciliationStatus": map[string]any{"state": "UPGRADING", "lastReconciledSpec": string(spec)}})
	id, err := o.Deploy(ctx, d.Job)
	if err != nil {
		e, _ := json.Marshal(map[string]any{"type": "org.apache.flink.kubernetes.operator.exception.DeploymentFailedException", "message": err.Error()})
		o.S.SetStatus(kube.FlinkDeployments.Resource, o.Namespace, o.Name, map[string]any{"lifecycleState": "FAILED", "error": string(e),
			"jobStatus": map[string]any{"state": "FAILED"}, "reconciliationStatus": map[string]any{"state": "DEPLOYED"}})
		return ""
	}
	o.S.SetStatus(kube.FlinkDeployments.Resource, o.Namespace, o.Name, map[string]any{"lifecycleState": "DEPLOYED",
		"jobStatus": map[string]any{"state": "RECONCILING", "jobId": id}, "reconciliationStatus": map[string]any{"state": "DEPLOYED"}})
	return id
}

func (o *Operator) snapshots() {
	if o.IgnoreSnapshots {
		return
	}
	for _, name := range o.S.NewSnapshots(o.Namespace) {
		obj := o.S.Get(kube.FlinkStateSnapshots.Resource, o.Namespace, name)
		spec, _ := obj["spec"].(map[string]any)
		sp, _ := spec["savepoint"].(map[string]any)
		st := map[string]any{"state": "FAILED", "error": "the stand-in operator only registers existing savepoints", "failures": 1}
		if exists, _ := sp["alreadyExists"].(bool); exists {
			st = map[string]any{"state": "COMPLETED", "path": sp["path"], "resultTimestamp": time.Now().UTC().Format(time.RFC3339)}
		}
		o.S.SetStatus(kube.FlinkStateSnapshots.Resource, o.Namespace, name, st)
	}
}
