// Package switchover holds the planned switchover: a plan kind through the
// same approval gate and engine as a failover, for the planned move of a
// MirrorMaker 2 flow to DR (a region evacuation, a migration, an
// exercise), where the honest RPO is exactly 0, verified. Its steps:
//
//	fence, verify-fence, wait-caught-up, stop-mirror,
//	[translate-group ...,] [rewrite-savepoint,] [restore-flink,] [unfence-dr,] verdict
//
// fence stops the primary's writers to the mirrored topics by the flow's
// configured method (Kafka DENY WRITE ACLs for the producing principals,
// an operator's command, or by hand with the typed flow name);
// verify-fence watches the primary's log ends of those topics over the
// quiet period (a writer that bypasses the fence fails it, and the run
// offers the rollback: the fence's ACLs removed, audited); wait-caught-up
// waits until MirrorMaker 2's replicated position reaches every fenced
// end (what DR holds, read_committed: for an exactly-once mirror only
// committed data counts); then the failover's own steps (runbook/failover),
// with an ACL fence unfence-dr (the principals' DENY WRITE entries on DR's
// copies removed, so they may write there), and the verdict, "RPO 0, verified" or exactly which partitions and
// records were not. It registers itself from init, as runbook/failback
// does: a binary that does not import it refuses a switchover plan.
package switchover
