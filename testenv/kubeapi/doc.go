// Package kubeapi runs the console's Kubernetes restore against the real
// Kubernetes API machinery: the CRD-serving half of kube-apiserver
// (k8s.io/apiextensions-apiserver) on an in-process etcd, with the Flink
// Kubernetes Operator's published CRDs installed (testdata/), and
// kube/kubetest's stand-in operator loop as a client of it (Cluster).
//
// It is a module of its own so that k8s.io/apiserver and etcd stay out of
// the console's go.mod; `make e2e` runs it.
package kubeapi
