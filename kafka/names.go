package kafka

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

// IsInternalTopic matches ReplicationPolicy.isInternalTopic: such topics are
// never mirrored and never shown as data topics.
func IsInternalTopic(topic string) bool {
	return strings.HasSuffix(topic, ".internal") || strings.HasSuffix(topic, "-internal") ||
		strings.HasPrefix(topic, "__") || strings.HasPrefix(topic, ".")
}
