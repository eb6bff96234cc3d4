package kube

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func deployment(job, status map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkDeployment",
		"metadata": map[string]any{"name": "j", "namespace": "n", "resourceVersion": "5", "generation": int64(2)},
		"spec":     map[string]any{"job": job}, "status": status}}
}

// The fields the operator writes are read, the lastReconciledSpec in both
// of its encodings (with resource_metadata since 1.3, bare before).
func TestParseDeployment(t *testing.T) {
	d, err := ParseDeployment(deployment(map[string]any{"initialSavepointPath": "s3://b/sp", "savepointRedeployNonce": int64(9),
		"upgradeMode": "savepoint", "allowNonRestoredState": true, "args": []any{"--a", "b"}, "state": "running"},
		map[string]any{"lifecycleState": "STABLE", "error": "x", "jobStatus": map[string]any{"state": "RUNNING", "jobId": "id1"},
			"reconciliationStatus": map[string]any{"state": "DEPLOYED",
				"lastReconciledSpec": `{"spec":{"job":{"initialSavepointPath":"s3://b/sp","savepointRedeployNonce":9}},"resource_metadata":{"apiVersion":"flink.apache.org/v1beta1","firstDeployment":false}}`}}))
	if err != nil {
		t.Fatal(err)
	}
	if d.ResourceVersion != "5" || d.Generation != 2 || *d.Job.Nonce != 9 || d.Job.InitialSavepointPath != "s3://b/sp" || !d.Job.AllowNonRestoredState ||
		d.Job.UpgradeMode != "savepoint" || len(d.Job.Args) != 2 || d.Status.JobState != "RUNNING" || d.Status.JobID != "id1" ||
		d.Status.LifecycleState != "STABLE" || d.Status.ReconciliationState != "DEPLOYED" || *d.Status.Reconciled.Nonce != 9 {
		t.Fatalf("%+v", d)
	}
	d, err = ParseDeployment(deployment(map[string]any{"savepointRedeployNonce": float64(3)},
		map[string]any{"reconciliationStatus": map[string]any{"lastReconciledSpec": `{"job":{"savepointRedeployNonce":3,"initialSavepointPath":"p"}}`}}))
	if err != nil || *d.Job.Nonce != 3 || d.Status.Reconciled.InitialSavepointPath != "p" {
		t.Fatalf("bare spec: %+v %v", d, err)
	}
}

// An answer of the wrong shape is an error naming the field, never a
// panic or a guess.
func TestParseDeploymentRefusesMalformed(t *testing.T) {
	for name, u := range map[string]*unstructured.Unstructured{
		"nonce string":     deployment(map[string]any{"savepointRedeployNonce": "9"}, nil),
		"nonce fraction":   deployment(map[string]any{"savepointRedeployNonce": 9.5}, nil),
		"args not strings": deployment(map[string]any{"args": []any{1}}, nil),
		"job not a map":    {Object: map[string]any{"kind": "FlinkDeployment", "metadata": map[string]any{"resourceVersion": "1"}, "spec": map[string]any{"job": "x"}}},
		"state not string": deployment(nil, map[string]any{"jobStatus": map[string]any{"state": 3}}),
		"bad reconciled":   deployment(nil, map[string]any{"reconciliationStatus": map[string]any{"lastReconciledSpec": "{"}}),
		"wrong kind":       {Object: map[string]any{"kind": "Pod", "metadata": map[string]any{"resourceVersion": "1"}}},
		"no version":       {Object: map[string]any{"kind": "FlinkDeployment"}},
	} {
		if _, err := ParseDeployment(u); !errors.Is(err, ErrBadAnswer) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestErrorText(t *testing.T) {
	js := `{"type":"org.apache.flink.kubernetes.operator.exception.ReconciliationException","message":"Could not deploy","stackTrace":"...","throwableList":[{"type":"java.io.FileNotFoundException","message":"s3://b/sp/_metadata"}]}`
	if got := ErrorText(js); got != "org.apache.flink.kubernetes.operator.exception.ReconciliationException: Could not deploy; caused by s3://b/sp/_metadata" {
		t.Fatalf("json: %q", got)
	}
	if got := ErrorText("Job Not Found"); got != "Job Not Found" {
		t.Fatalf("text: %q", got)
	}
	if got := ErrorText(strings.Repeat("x", 5000)); len(got) > 2010 {
		t.Fatalf("long: %d", len(got))
	}
}
