package config

// The config's enum fields are named string types so a comparison names
// its constant and a typo does not compile; their YAML values are these
// strings.

// FlowKind is how a flow replicates (flows[].kind).
type FlowKind string

// Flow kinds.
const (
	FlowMM2         FlowKind = "mm2"          // MirrorMaker 2, the default
	FlowClusterLink FlowKind = "cluster-link" // a Confluent Cluster Link
)

// ReplicationPolicy is how mirrored topics are named (flows[].replication_policy).
type ReplicationPolicy string

// Replication policies.
const (
	PolicyIdentity ReplicationPolicy = "identity" // the topic keeps its name
	PolicyDefault  ReplicationPolicy = "default"  // prefixed with the source alias
)

// SyncsLocation is the cluster holding MM2's offset-syncs topic (flows[].offset_syncs_location).
type SyncsLocation string

// Offset-syncs locations.
const (
	SyncsOnSource SyncsLocation = "source" // MM2's default
	SyncsOnTarget SyncsLocation = "target"
)

// Region is the side a Flink target runs on (flink_targets[].region).
type Region string

// Regions.
const (
	RegionPrimary Region = "primary"
	RegionDR      Region = "dr"
)

// StateSnapshotUse says whether a restore registers a FlinkStateSnapshot
// (flink_targets[].kubernetes.use_state_snapshot).
type StateSnapshotUse string

// State-snapshot uses.
const (
	StateSnapshotAuto   StateSnapshotUse = "auto" // when the API server serves it
	StateSnapshotAlways StateSnapshotUse = "true"
	StateSnapshotNever  StateSnapshotUse = "false"
)

// SASLMechanism is how the console authenticates to brokers (clusters.*.sasl.mechanism).
type SASLMechanism string

// SASL mechanisms.
const (
	SASLPlain       SASLMechanism = "PLAIN"
	SASLScramSHA256 SASLMechanism = "SCRAM-SHA-256"
	SASLScramSHA512 SASLMechanism = "SCRAM-SHA-512"
)

// AuthMode is how people sign in (auth.mode).
type AuthMode string

// WebhookKind is the format a notification receiver takes (notifications.webhooks[].kind).
type WebhookKind string

// Webhook kinds.
const (
	WebhookGeneric WebhookKind = "webhook" // JSON signed with HMAC-SHA256, the default
	WebhookSlack   WebhookKind = "slack"   // a Slack incoming webhook
)
