package kubetest

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/drconsole/drconsole/kube"
)

func unstructuredOf(obj map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: obj}
}

// Deployment is a FlinkDeployment as an administrator applies it and the
// operator reports it running (the shape of the operator's
// examples/basic-checkpoint-ha.yaml), with nonce as its current
// savepointRedeployNonce (0: unset).
func Deployment(namespace, name string, nonce int64) map[string]any {
	job := map[string]any{"jarURI": "local:///opt/flink/usrlib/job.jar", "parallelism": 2, "upgradeMode": "last-state", "state": "running"}
	if nonce != 0 {
		job["savepointRedeployNonce"] = nonce
	}
	return map[string]any{
		"apiVersion": kube.Group + "/" + kube.Version, "kind": "FlinkDeployment",
		"metadata": map[string]any{"name": name, "namespace": namespace, "generation": 1},
		"spec": map[string]any{"image": "flink:1.20", "flinkVersion": "v1_20", "serviceAccount": "flink",
			"flinkConfiguration": map[string]any{"taskmanager.numberOfTaskSlots": "2"},
			"jobManager":         map[string]any{"resource": map[string]any{"memory": "2048m", "cpu": 1}},
			"taskManager":        map[string]any{"resource": map[string]any{"memory": "2048m", "cpu": 1}},
			"job":                job},
		"status": map[string]any{"lifecycleState": "STABLE", "jobStatus": map[string]any{"state": "RUNNING", "jobId": "old"},
			"reconciliationStatus": map[string]any{"state": "DEPLOYED"}},
	}
}
