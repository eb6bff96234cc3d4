package kube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/config"
)

// The client is built from the kubeconfig's named context (or its current
// one); a missing file or context is a clear error.
func TestNewFromKubeconfig(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
current-context: primary
clusters:
- name: primary
  cluster: {server: "https://primary.example:6443"}
- name: dr
  cluster: {server: "https://dr.example:6443"}
users:
- name: console
  user: {token: "t"}
contexts:
- name: primary
  context: {cluster: primary, user: console}
- name: dr-admin
  context: {cluster: dr, user: console, namespace: flink-dr}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for ctxName, host := range map[string]string{"": "https://primary.example:6443", "dr-admin": "https://dr.example:6443"} {
		c, err := New(&config.Kubernetes{Kubeconfig: kc, Context: ctxName, Namespace: "flink-dr", Deployment: "events-job"})
		if err != nil || c.Host != host || c.Namespace != "flink-dr" || c.Deployment != "events-job" {
			t.Fatalf("context %q: %+v %v", ctxName, c, err)
		}
	}
	if _, err := New(&config.Kubernetes{Kubeconfig: kc, Context: "nope"}); err == nil || !strings.Contains(err.Error(), `context "nope"`) {
		t.Fatalf("unknown context: %v", err)
	}
	if _, err := New(&config.Kubernetes{InCluster: true}); err == nil || !strings.Contains(err.Error(), "in_cluster") {
		t.Fatalf("in-cluster outside a pod: %v", err)
	}
}
