// Package monitor watches the mirrors: the refresh loop (monitor.go) that
// ingests MirrorMaker 2's internal topics into storage (ingest.go, state.go)
// and the primary's consumer-group offsets every 30 s (primary_groups.go),
// reads lag, RPO and status per flow (lag.go, status.go; clusterlink_lag.go
// for Cluster Linking; overdue.go marks the last figures lower bounds while
// a refresh waits on clusters that answer nothing), counts records of aborted transactions copied to DR
// (aborted.go) and judges data loss (loss.go). It reads clusters through
// package kafka and knows MM2 through package mm2; it changes nothing
// outside the console but its own storage.
package monitor
