// Package kafka reads the mirrored clusters with franz-go: client options
// from the config (client.go), first-record timestamps and record-batch
// scanning for aborted transactions (fetchts.go, aborted.go), and consumer
// group reads and seeks by timestamp (group_reads.go), and bounded reads of
// the records in offset ranges (records.go). Translating a
// group's offsets to DR, which joins these reads with MM2's syncs and
// checkpoints, is package translation's.
// It writes nothing to a cluster: committing offsets is an effect, in
// failover/internal/effect. What MM2's records mean is package mm2's; the
// refresh loop that uses these reads is package monitor's; the REST clients
// are connect's and clusterlink's.
package kafka
