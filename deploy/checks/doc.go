// Package checks holds no code: its tests check what deploy/ ships against the
// console. It is a module of its own so that Helm, the Kubernetes API types,
// prometheus-operator and the Prometheus server stay out of the console's
// go.mod; `make checks` (part of `make test` and `make unit`) runs it. It
// imports nothing of the console: deploy/helm's tests, in the console's module,
// keep testdata/exported-metrics.txt equal to what /metrics exports, load
// testdata/rendered-config.yaml with the console's loader, and write the
// sandbox's /metrics after an outage when these tests ask.
//
// The Helm chart is linted and rendered with Helm's own packages, every
// object decoded into its API type (unknown fields refused) and the rendered
// config kept equal to testdata/rendered-config.yaml; the Grafana dashboard
// and the alert rules select only metrics /metrics exports, parsed with
// Prometheus's PromQL parser; the design's alert rules fire, by Prometheus's
// engine, on the sandbox's /metrics after an outage of its mirror.
package checks
