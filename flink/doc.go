// Package flink reads Flink savepoints and checkpoints (the _metadata
// format, KafkaSource reader and enumerator state) as untrusted input:
// files are opened only inside the savepoint's directory or a configured
// root (open.go). It also holds the Flink REST client and the Kubernetes
// FlinkDeployment manifest the runbook hands over.
package flink
