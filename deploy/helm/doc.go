// Package helm holds no code. Its tests lint and render the Helm chart in
// drconsole/ with Helm's own Go packages, decode every rendered object into
// its Kubernetes API type (unknown fields refused), load the rendered config
// with drconsole's config loader, and hold the chart's promises: one replica,
// Recreate, non-root, read-only root, probes, a NetworkPolicy by default, no
// secret in the ConfigMap, no proxy example trusting a whole network.
package helm
