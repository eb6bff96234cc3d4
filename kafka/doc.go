// Package kafka is the console's one door to Kafka for reads, with
// franz-go: clients and their options from the config (client.go), log
// starts and ends by leader, the one way offsets are listed (offsets.go,
// records.go: ListOffsets, ListAt, ListBounds, StableEnds), first-record
// timestamps and record-batch scanning for aborted transactions
// (fetchts.go, aborted.go), consumer-group reads and seeks by timestamp
// (group_reads.go), bounded reads of the records in offset ranges
// (records.go), and tailing MM2's internal topics (tail.go). Translating a
// group's offsets to DR, which joins these reads with MM2's syncs and
// checkpoints, is package translation's.
// It writes nothing to a cluster: committing offsets is an effect, in
// runbook/internal/effect. What MM2's records mean is package mm2's; the
// refresh loop that uses these reads is package monitor's; the REST clients
// are connect's and clusterlink's.
package kafka
