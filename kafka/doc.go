// Package kafka is the console's view of the mirrored clusters: MirrorMaker
// 2's record formats and names (mm2codec.go, names.go), ingestion of its
// internal topics into storage (ingest.go), the offset-sync index and the
// translation rule (syncindex.go, translate.go), lag, RPO, status and data
// loss per flow (lag.go, fetchts.go, aborted.go, loss.go, status.go,
// monitor.go), consumer-group reads (groups.go; committing offsets is an
// effect, in failover/internal/effect) and Cluster Linking lag
// (clusterlink_lag.go; the REST clients are in connect/ and clusterlink/).
// Issue 12 splits it into rooms of their own.
package kafka
