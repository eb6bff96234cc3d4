// Package helm holds no code. Its tests are the console's half of the checks
// in deploy/checks (a module of its own, so Helm and Prometheus stay out of
// go.mod): they hold the facts those checks read, from the console's code, in
// deploy/checks/testdata: the metrics /metrics exports, the sandbox's /metrics
// after an outage; and they load the chart's rendered config with drconsole's
// config loader.
package helm
