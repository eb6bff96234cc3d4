// Package kafka is the console's view of the mirrored clusters: MirrorMaker
// 2's record formats and names (mm2codec.go, names.go), ingestion of its
// internal topics into storage (ingest.go), the offset-sync index and the
// translation rule (syncindex.go, translate.go), lag, RPO, status and data
// loss per flow (lag.go, fetchts.go, aborted.go, loss.go, status.go,
// monitor.go), consumer-group reads and writes (groups.go), and the REST
// clients for Kafka Connect and Confluent Cluster Linking (connect.go,
// clusterlink*.go). Issue 12 splits it into rooms of their own.
package kafka
