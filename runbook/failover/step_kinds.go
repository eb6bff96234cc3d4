package failover

import "github.com/drconsole/drconsole/runbook"

const (
	// KindPreflight checks the safety rules and records their evidence;
	// it changes nothing.
	KindPreflight runbook.StepKind = "preflight"
	// KindStopMirror stops MirrorMaker 2: its connectors through Kafka
	// Connect REST, or (dedicated MM2, no REST) a manual stop the operator
	// confirms and the console verifies as heartbeats and syncs stop.
	KindStopMirror runbook.StepKind = "stop-mirror"
	// KindTranslateGroup translates a consumer group's primary offsets and
	// commits them to the (empty) DR group.
	KindTranslateGroup runbook.StepKind = "translate-group"
	// KindRestoreFlink starts the Flink job in DR from a savepoint.
	KindRestoreFlink runbook.StepKind = "restore-flink"
	// KindPromoteMirrors promotes a Cluster Linking flow's mirror topics:
	// the planned, lossless path; Confluent refuses unless lag is zero.
	KindPromoteMirrors runbook.StepKind = "promote-mirrors"
	// KindFailoverMirrors fails the mirror topics over at once, whatever
	// their lag: the unplanned path; unreplicated records are lost.
	KindFailoverMirrors runbook.StepKind = "failover-mirrors"
	// KindRewriteSavepoint writes a copy of a catalog savepoint whose
	// Kafka source state holds the DR topics and offsets (rewrite.go), for
	// a restore with the same source uid.
	KindRewriteSavepoint runbook.StepKind = "rewrite-savepoint"
)
