package mm2

import "testing"

// TestInternalTopics checks internal-topic detection against what MM2's
// DefaultReplicationPolicy / IdentityReplicationPolicy answer (their
// isInternalTopic, isMM2InternalTopic, isCheckpointsTopic and
// isHeartbeatsTopic), for the default separator, a custom one, and a custom
// one with replication.policy.internal.topic.separator.enabled=false.
func TestInternalTopics(t *testing.T) {
	dot := ReplicationPolicy{}
	under := ReplicationPolicy{Separator: "_"}
	underIdentity := ReplicationPolicy{Separator: "_", Identity: true}
	underLegacy := ReplicationPolicy{Separator: "_", LegacyInternalSeparator: true}
	dash2 := ReplicationPolicy{Separator: "--"}
	for _, c := range []struct {
		p                                   ReplicationPolicy
		topic                               string
		internal, mm2, checkpoints, hbTopic bool
	}{
		{dot, "events", false, false, false, false},
		{dot, "mm2-offset-syncs.dr.internal", true, true, false, false},
		{dot, "primary.checkpoints.internal", true, true, true, false},
		{dot, "mm2-offsets.primary.internal", true, true, false, false},
		{dot, "connect-offsets-internal", true, false, false, false},
		{dot, "__consumer_offsets", true, false, false, false},
		{dot, ".hidden", true, false, false, false},
		{dot, "mm2-offset-syncs_dr_internal", false, false, false, false},
		{dot, "heartbeats", false, false, false, true},
		{dot, "primary.heartbeats", false, false, false, true},
		{dot, "east.primary.heartbeats", false, false, false, true},
		{dot, "myheartbeats", false, false, false, false},
		{dot, "primary.heartbeats.", false, false, false, false},
		// The defect: with "_" MM2's own topics end in _internal.
		{under, "mm2-offset-syncs_dr_internal", true, true, false, false},
		{under, "primary_checkpoints_internal", true, true, true, false},
		{under, "primary.checkpoints.internal", true, false, false, false}, // Connect's default suffix still counts
		{under, "orders_internal", true, true, false, false},               // MM2 would not mirror it either
		{under, "orders_internals", false, false, false, false},
		{under, "primary_heartbeats", false, false, false, true},
		{under, "primary.heartbeats", false, false, false, false}, // "." is not the separator
		{underIdentity, "mm2-offset-syncs_dr_internal", true, true, false, false},
		{underIdentity, "primary_heartbeats", false, false, false, true},
		{underIdentity, "events", false, false, false, false},
		// Internal separator disabled: internal topics keep ".".
		{underLegacy, "mm2-offset-syncs.dr.internal", true, true, false, false},
		{underLegacy, "primary.checkpoints.internal", true, true, true, false},
		{underLegacy, "mm2-offset-syncs_dr_internal", false, false, false, false},
		// A multi-character separator.
		{dash2, "mm2-offset-syncs--dr--internal", true, true, false, false},
		{dash2, "primary--checkpoints--internal", true, true, true, false},
		{dash2, "a--b--heartbeats", false, false, false, true},
		{dash2, "a-heartbeats", false, false, false, false},
	} {
		p := c.p
		if got := p.IsInternalTopic(c.topic); got != c.internal {
			t.Errorf("%+v IsInternalTopic(%q) = %v, want %v", p, c.topic, got, c.internal)
		}
		if got := p.IsMM2InternalTopic(c.topic); got != c.mm2 {
			t.Errorf("%+v IsMM2InternalTopic(%q) = %v, want %v", p, c.topic, got, c.mm2)
		}
		if got := p.IsCheckpointsTopic(c.topic); got != c.checkpoints {
			t.Errorf("%+v IsCheckpointsTopic(%q) = %v, want %v", p, c.topic, got, c.checkpoints)
		}
		if got := p.IsHeartbeatsTopic(c.topic); got != c.hbTopic {
			t.Errorf("%+v IsHeartbeatsTopic(%q) = %v, want %v", p, c.topic, got, c.hbTopic)
		}
	}
	// The names the policy derives are the ones it calls internal.
	for _, p := range []ReplicationPolicy{dot, under, underIdentity, underLegacy, dash2} {
		for _, n := range []string{p.OffsetSyncsTopic("dr"), p.CheckpointsTopic("primary")} {
			if !p.IsInternalTopic(n) || !p.IsMM2InternalTopic(n) {
				t.Errorf("%+v: derived internal topic %q not detected", p, n)
			}
		}
		if hb := p.HeartbeatsTopic("primary"); !p.IsHeartbeatsTopic(hb) || p.IsInternalTopic(hb) {
			t.Errorf("%+v: heartbeats topic %q misclassified", p, hb)
		}
	}
}

// TestIsCycle checks the cycle rule against MirrorSourceConnector.isCycle
// with DefaultReplicationPolicy and IdentityReplicationPolicy (topicSource,
// upstreamTopic, looksLikeHeartbeat), for a flow into the cluster "dr".
func TestIsCycle(t *testing.T) {
	dot, identity, under := ReplicationPolicy{}, ReplicationPolicy{Identity: true}, ReplicationPolicy{Separator: "_"}
	for _, c := range []struct {
		p     ReplicationPolicy
		topic string
		cycle bool
	}{
		{dot, "events", false},
		{dot, "dr.events", true},          // came from dr
		{dot, "east.dr.events", true},     // from dr through east
		{dot, "dr", false},                // one part: not remote
		{dot, "dr.", false},               // trailing separators are dropped by Java's split
		{dot, "primary.events", false},    // from primary, into dr: copied
		{dot, "drx.events", false},        // another alias
		{dot, "dr.heartbeats", true},      // a heartbeats topic from dr
		{identity, "dr.events", false},    // identity: only heartbeats carry a source
		{identity, "dr.heartbeats", true}, // the reverse flow's heartbeats, on the primary
		{identity, "primary.heartbeats", false},
		{identity, "heartbeats", false},
		{under, "dr_events", true},
		{under, "dr.events", false}, // "." is not the separator
	} {
		if got := c.p.IsCycle("dr", c.topic); got != c.cycle {
			t.Errorf("%+v IsCycle(dr, %q) = %v, want %v", c.p, c.topic, got, c.cycle)
		}
	}
}
