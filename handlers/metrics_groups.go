package handlers

import (
	"time"

	"github.com/drconsole/drconsole/flowstate"
)

// A flow's consumer groups in /metrics: their failover quality as the
// monitor's refresh computed it, with labels {flow, group} only for the
// bounded set it computed (configured or checkpointed groups, at most
// config.GroupsPerFlow a flow). As everywhere here, a figure that cannot
// be established is left out, never exported as 0, and a flag says so.

var (
	famGroupReprocess = newFamily("kafka_mirror_group_reprocess_records",
		"Records the consumer group would read again if DR took over now: an upper bound, summed over its partitions from the distance between its primary offset and the offset sync its translation lands on (offsets counted, so at least as many as the records). Absent while unknown (kafka_mirror_group_reprocess_known 0).",
		false, "flow", "group")
	famGroupKnown = newFamily("kafka_mirror_group_reprocess_known",
		"1 when the group's reprocessing bound is established; 0 when some partition could not be translated (see kafka_mirror_group_untranslated_partitions and the groups page), no offsets of the group are known, or the primary does not answer (the group may have read past the offsets last seen).",
		false, "flow", "group")
	famGroupUntranslated = newFamily("kafka_mirror_group_untranslated_partitions",
		"Partitions of the group whose offset could not be translated to DR (no sync at or below it, topic not mirrored, truncated, ...).",
		false, "flow", "group")
	famGroupObjective = newFamily("kafka_mirror_group_reprocess_objective_records",
		"The group's configured reprocess_objective: the most records it may reprocess after a failover (only for groups that have one).",
		false, "flow", "group")
	famGroupCritical = newFamily("kafka_mirror_group_critical",
		"1 for a group configured critical: true (its reprocessing bound above its objective, or unknown, alerts), 0 otherwise.",
		false, "flow", "group")
	famGroupSyncAt = newFamily("kafka_mirror_group_sync_timestamp_seconds",
		"Unix time of the oldest of the group's partitions' newest usable offset syncs (the newest at or below each partition's offset): time() minus it is its age. Absent when some partition has none.",
		false, "flow", "group")
	famGroupCheckpointAt = newFamily("kafka_mirror_group_checkpoint_timestamp_seconds",
		"Unix time of MM2's newest checkpoint of the group (absent when MM2 has checkpointed none).",
		false, "flow", "group")
	famGroupOffsetsAt = newFamily("kafka_mirror_group_offsets_timestamp_seconds",
		"Unix time the oldest primary offset the group's figures rest on was read (the console's last reading of the primary, or MM2's checkpoint where newer): while the primary is down (kafka_mirror_cluster_up{role=\"source\"} 0) commits the group made since add records to reprocess that no figure counts.",
		false, "flow", "group")
	famGroupsWorst = newFamily("kafka_mirror_groups_worst_reprocess_records",
		"The largest kafka_mirror_group_reprocess_records of the flow's groups. Absent while unknown (kafka_mirror_groups_worst_known 0): some group's bound is unknown, groups were left out beyond the cap, or a read failed.",
		false, "flow")
	famGroupsWorstKnown = newFamily("kafka_mirror_groups_worst_known",
		"1 when the flow's worst group's reprocessing bound is established, 0 when not (exported when the flow has groups).",
		false, "flow")
	famGroupsOverCap = newFamily("kafka_mirror_groups_over_cap",
		"Consumer groups of the flow left out beyond the per-flow cap (config.GroupsPerFlow): no per-group series for them, and the worst group is then unknown.",
		false, "flow")
)

// groupFamilies are the families above, in mirrorFamilies.
var groupFamilies = []*family{famGroupReprocess, famGroupKnown, famGroupUntranslated, famGroupObjective, famGroupCritical,
	famGroupSyncAt, famGroupCheckpointAt, famGroupOffsetsAt, famGroupsWorst, famGroupsWorstKnown, famGroupsOverCap}

// groupSeries hands emit s's consumer group samples.
func groupSeries(s *flowstate.FlowSnapshot, emit func(f *family, v float64, labels ...string)) {
	gs := s.Groups
	if gs == nil {
		return
	}
	flow := s.Flow.Name
	for i := range gs.Groups {
		g := &gs.Groups[i]
		if g.Reread != nil {
			emit(famGroupReprocess, float64(*g.Reread), flow, g.Group)
		}
		emit(famGroupKnown, b2f(g.Known()), flow, g.Group)
		emit(famGroupUntranslated, float64(g.Untranslated), flow, g.Group)
		if g.Objective > 0 {
			emit(famGroupObjective, float64(g.Objective), flow, g.Group)
		}
		emit(famGroupCritical, b2f(g.Critical), flow, g.Group)
		emitTime(famGroupSyncAt, g.OldestSyncAt, flow, g.Group, emit)
		emitTime(famGroupCheckpointAt, g.CheckpointAt, flow, g.Group, emit)
		emitTime(famGroupOffsetsAt, g.OffsetsAt, flow, g.Group, emit)
	}
	if _, bound, ok := gs.Worst(); ok {
		if bound != nil {
			emit(famGroupsWorst, float64(*bound), flow)
		}
		emit(famGroupsWorstKnown, b2f(bound != nil), flow)
	}
	emit(famGroupsOverCap, float64(gs.Over), flow)
}

// emitTime emits t as Unix seconds, nothing when it is zero (unknown).
func emitTime(f *family, t time.Time, flow, group string, emit func(f *family, v float64, labels ...string)) {
	if !t.IsZero() {
		emit(f, float64(t.UnixMilli())/1000, flow, group)
	}
}
