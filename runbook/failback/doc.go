// Package failback holds the failback to the primary after a completed
// failover: over MirrorMaker 2 (reverse replication from the failover's
// cut, the wait, the forward flow restarted; with the Flink job's
// savepoint taken on DR, rewritten back and restored on the primary) and
// over Cluster Linking, with the reverse flow the pages watch. It
// registers its plan kind from init, with the engine and with
// runbook/failover, whose steps and figures it builds on; a binary that
// does not import it refuses a failback plan as an unknown kind.
package failback
