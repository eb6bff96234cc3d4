// Package checks holds no code. It is a module of its own so that the Helm,
// Kubernetes, prometheus-operator and Prometheus server modules its tests need
// stay out of the console's go.mod; `make checks` (part of `make test`) runs it.
//
// Its tests check what deploy/ ships against the console:
//   - the Helm chart in ../helm/drconsole, linted and rendered with Helm's own
//     Go packages, every rendered object decoded into its Kubernetes API type
//     (unknown fields refused), the rendered config loaded with drconsole's
//     config loader, and the chart's promises held: one replica, Recreate,
//     non-root, read-only root, probes, a NetworkPolicy by default, no secret
//     in the ConfigMap, no proxy example trusting a whole network;
//   - the Grafana dashboard and the alerting rules, parsed with Prometheus's
//     PromQL parser, selecting only metrics /metrics exports;
//   - the design's alert rules, evaluated with Prometheus's engine on the
//     sandbox's /metrics after an outage of its mirror.
package checks
