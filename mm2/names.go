package mm2

import "strings"

// ReplicationPolicy derives topic names the way MM2's replication policies
// do (DefaultReplicationPolicy, IdentityReplicationPolicy), so the console
// finds the same topics MM2 writes.
type ReplicationPolicy struct {
	// Identity keeps remote topic names unchanged (IdentityReplicationPolicy).
	Identity bool
	// Separator is replication.policy.separator; "" means ".".
	Separator string
	// LegacyInternalSeparator mirrors
	// replication.policy.internal.topic.separator.enabled=false: internal
	// topics keep "." whatever the separator.
	LegacyInternalSeparator bool
}

func (p ReplicationPolicy) sep() string {
	if p.Separator == "" {
		return "."
	}
	return p.Separator
}

func (p ReplicationPolicy) internalSep() string {
	if p.LegacyInternalSeparator {
		return "."
	}
	return p.sep()
}

// RemoteTopic is the name topic from sourceAlias gets in the target cluster.
// Heartbeats are prefixed even under the identity policy.
func (p ReplicationPolicy) RemoteTopic(sourceAlias, topic string) string {
	if p.Identity && topic != "heartbeats" {
		return topic
	}
	return sourceAlias + p.sep() + topic
}

// UpstreamTopic reverses RemoteTopic: the source name of a remote topic, and
// false when the name does not come from sourceAlias.
func (p ReplicationPolicy) UpstreamTopic(sourceAlias, remote string) (string, bool) {
	if p.Identity && remote != sourceAlias+p.sep()+"heartbeats" {
		return remote, true
	}
	prefix := sourceAlias + p.sep()
	if !strings.HasPrefix(remote, prefix) || len(remote) == len(prefix) {
		return "", false
	}
	return remote[len(prefix):], true
}

// OffsetSyncsTopic is mm2-offset-syncs.<alias>.internal, where alias is the
// target alias when the topic lives on the source cluster (MM2's default) and
// the source alias when it lives on the target.
func (p ReplicationPolicy) OffsetSyncsTopic(alias string) string {
	s := p.internalSep()
	return "mm2-offset-syncs" + s + alias + s + "internal"
}

// CheckpointsTopic is <source>.checkpoints.internal, always on the target.
func (p ReplicationPolicy) CheckpointsTopic(sourceAlias string) string {
	s := p.internalSep()
	return sourceAlias + s + "checkpoints" + s + "internal"
}

// HeartbeatsTopic is the replicated heartbeats topic in the target, which is
// what proves end-to-end replication (the local "heartbeats" topic only
// proves MM2 can write).
func (p ReplicationPolicy) HeartbeatsTopic(sourceAlias string) string {
	return p.RemoteTopic(sourceAlias, "heartbeats")
}

// ConnectOffsetsTopic is the dedicated-mode Connect offsets topic
// mm2-offsets.<source>.internal on the target. It always uses ".": it is a
// worker setting, not derived from the replication policy.
func ConnectOffsetsTopic(sourceAlias string) string {
	return "mm2-offsets." + sourceAlias + ".internal"
}

// IsInternalTopic is MM2's ReplicationPolicy.isInternalTopic for this
// policy: such topics are never mirrored and never shown as data topics.
// Besides Kafka's and Connect's own names it matches MM2's internal suffix,
// which follows the configured separator: with separator "_",
// mm2-offset-syncs_dr_internal is internal and must not count as a
// partition MM2 fails to copy.
func (p ReplicationPolicy) IsInternalTopic(topic string) bool {
	kafkaInternal := strings.HasPrefix(topic, "__") || strings.HasPrefix(topic, ".")
	connectDefault := strings.HasSuffix(topic, "-internal") || strings.HasSuffix(topic, ".internal")
	return p.IsMM2InternalTopic(topic) || kafkaInternal || connectDefault
}

// IsMM2InternalTopic is DefaultReplicationPolicy.isMM2InternalTopic: the
// name ends with <internal separator>internal.
func (p ReplicationPolicy) IsMM2InternalTopic(topic string) bool {
	return strings.HasSuffix(topic, p.internalSep()+"internal")
}

// IsCheckpointsTopic is DefaultReplicationPolicy.isCheckpointsTopic.
func (p ReplicationPolicy) IsCheckpointsTopic(topic string) bool {
	s := p.internalSep()
	return strings.HasSuffix(topic, s+"checkpoints"+s+"internal")
}

// IsHeartbeatsTopic is ReplicationPolicy.isHeartbeatsTopic: "heartbeats"
// after every source alias is stripped (x.y.heartbeats is one). Both
// policies strip aliases the same way for names that end in heartbeats.
func (p ReplicationPolicy) IsHeartbeatsTopic(topic string) bool {
	for strings.HasSuffix(topic, "heartbeats") {
		source, ok := p.prefix(topic)
		if !ok {
			break
		}
		topic = topic[len(source)+len(p.sep()):]
	}
	return topic == "heartbeats"
}

// IsCycle is MirrorSourceConnector.isCycle for a flow into targetAlias:
// topic came from targetAlias, directly or through other clusters, so MM2
// never copies it there (shouldReplicateTopic). Under the identity policy
// only names ending in heartbeats carry their source (looksLikeHeartbeat);
// every other name is taken as the source cluster's own, never a cycle.
func (p ReplicationPolicy) IsCycle(targetAlias, topic string) bool {
	if p.Identity && !strings.HasSuffix(topic, "heartbeats") {
		return false
	}
	for {
		source, ok := p.prefix(topic)
		switch {
		case !ok:
			return false
		case source == targetAlias:
			return true
		}
		topic = topic[len(source)+len(p.sep()):]
	}
}

// prefix is DefaultReplicationPolicy.topicSource: the name's first part
// when it has two or more. Java's split drops trailing empty strings, so a
// name ending in separators has one part fewer than it seems.
func (p ReplicationPolicy) prefix(topic string) (string, bool) {
	sep := p.sep()
	trimmed := topic
	for strings.HasSuffix(trimmed, sep) {
		trimmed = strings.TrimSuffix(trimmed, sep)
	}
	source, _, found := strings.Cut(trimmed, sep)
	return source, found
}
