// Package flowstate holds a flow's state as of the monitor's last
// refresh (FlowSnapshot: lag, RPO, status, reachability, a Cluster
// Linking flow's link) and the flow's MM2 internal topics (TopicsOf): the
// values the monitor computes and the pages, /metrics, notifications and
// the runbook's safety rules read. It imports no Kafka or Kubernetes
// client, so its readers reach neither through it; model holds the plain
// values it is made of, and it holds what names config's flows.
package flowstate
