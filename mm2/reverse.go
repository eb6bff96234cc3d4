package mm2

// Reverse replication for failback: the three connector configs that
// replicate DR back to the primary, and the rule that refuses them while
// the forward flow could form a cycle.
//
// Config keys are MirrorMaker 2's own, checked against apache/kafka at
// 1eb7644349cb07139d6a3c1ad1986979647cac99 (paths under
// connect/mirror/src/main/java/org/apache/kafka/connect/mirror/ unless
// said otherwise):
//   - source.cluster.alias, target.cluster.alias, offset-syncs.topic.location,
//     the source.cluster. / target.cluster. client prefixes:
//     MirrorConnectorConfig.java, MirrorMakerConfig.java (SOURCE_CLUSTER_PREFIX)
//   - replication.policy.class, replication.policy.separator,
//     replication.policy.internal.topic.separator.enabled:
//     connect/mirror-client/.../MirrorClientConfig.java
//   - topics, topics.exclude (and its default): DefaultTopicFilter.java,
//     MirrorSourceConfig.java (TOPICS, TOPICS_EXCLUDE)
//   - emit.checkpoints.enabled, sync.group.offsets.enabled:
//     MirrorCheckpointConfig.java; emit.heartbeats.enabled: MirrorHeartbeatConfig.java
//   - producer.override.: connect/runtime/.../ConnectorConfig.java
//     (CONNECTOR_CLIENT_PRODUCER_OVERRIDES_PREFIX), allowed by the worker's
//     default connector.client.config.override.policy=All (WorkerConfig.java)

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/drconsole/drconsole/model"
)

// Java class names of MM2's connectors and policies.
const (
	MirrorSourceConnectorClass     = "org.apache.kafka.connect.mirror.MirrorSourceConnector"
	MirrorCheckpointConnectorClass = "org.apache.kafka.connect.mirror.MirrorCheckpointConnector"
	MirrorHeartbeatConnectorClass  = "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector"
	DefaultPolicyClass             = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"
	IdentityPolicyClass            = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
	byteArrayConverter             = "org.apache.kafka.connect.converters.ByteArrayConverter"
	// defaultTopicsExclude is DefaultTopicFilter.TOPICS_EXCLUDE_DEFAULT:
	// setting topics.exclude replaces it, so the reverse configs repeat it.
	defaultTopicsExclude = `.*[\-\.]internal, .*\.replica, __.*`
)

// PolicyClass is replication.policy.class for p.
func (p ReplicationPolicy) PolicyClass() string {
	if p.Identity {
		return IdentityPolicyClass
	}
	return DefaultPolicyClass
}

// ForwardFlow is a configured flow Primary -> DR as the reverse set-up
// needs it. Bootstrap addresses and client settings are as the Connect
// workers reach the clusters, which may differ from the console's own.
type ForwardFlow struct {
	PrimaryAlias, DRAlias         string
	Policy                        ReplicationPolicy
	Include, Exclude              []string // the forward topic filter (regexes)
	OffsetSyncsLocation           string   // "source" or "target"; "" is MM2's default
	PrimaryBootstrap, DRBootstrap string
	// PrimaryClient and DRClient are client settings without prefix
	// (security.protocol, sasl.jaas.config, ...). They go out under
	// target.cluster. / source.cluster., and under producer.override. for
	// the cluster a connector's records go to.
	PrimaryClient, DRClient map[string]string
	// Connectors are the forward connector names on the same Connect
	// cluster; the reverse names must differ from every one.
	Connectors []string
	// WorkerTopics are DR topics of the Connect workers themselves (the
	// forward flow's Connect offsets topic): never copied back, or the
	// primary would get DR's connector bookkeeping under the same name.
	WorkerTopics []string
	TasksMax     int // 0: Connect's default (1)
	// Inherited are the forward connectors' configs keyed by connector
	// class (MirrorSourceConnectorClass, ...), as Connect returns them;
	// the reverse connector of each class takes their InheritedKeys.
	Inherited map[string]map[string]string
}

// InheritedKeys are the forward connectors' settings a reverse connector
// of the same class repeats: the replication factors of the topics MM2
// creates and its intervals. Without them the reverse connectors get MM2's
// defaults (replication factor 2 for replicated topics, 3 for the
// offset-syncs, checkpoints and heartbeats topics), which a cluster with
// fewer brokers refuses; and a MirrorSourceConnector whose offset-syncs
// topic cannot be created copies nothing at all: its task blocks for
// max.block.ms (60 s) on every offset sync it sends (seen against real
// MM2 4.3.1 on Connect, TestFailbackE2E). Cluster addresses, aliases,
// topic filters, the policy and client settings are never inherited: the
// reverse flow sets them itself.
var InheritedKeys = []string{
	"replication.factor",
	"offset-syncs.topic.replication.factor",
	"checkpoints.topic.replication.factor",
	"heartbeats.topic.replication.factor",
	"emit.checkpoints.interval.seconds",
	"emit.heartbeats.interval.seconds",
	"refresh.topics.interval.seconds",
	"refresh.groups.interval.seconds",
	"sync.topic.acls.enabled",
	"sync.topic.configs.enabled",
	"offset.lag.max",
}

// ReverseConnectors are the three connector configs of the reverse flow
// DR -> Primary, keyed by connector name, and what the operator must know
// about what they replicate.
type ReverseConnectors struct {
	Source, Checkpoint, Heartbeat string // connector names
	Configs                       map[string]map[string]string
	Notes                         []string
}

// Names lists the connector names, source first.
func (r ReverseConnectors) Names() []string { return []string{r.Source, r.Checkpoint, r.Heartbeat} }

// ReverseConnectorName is the name of the reverse flow's connector of
// class (MirrorSourceConnector, ...): "<dr>-to-<primary>-<class>". The
// forward ones default to the bare class names (dedicated mode's names), so
// the two sets never share a name, and so never share Connect's stored
// offsets either (keyed by connector name).
func ReverseConnectorName(drAlias, primaryAlias, class string) string {
	return drAlias + "-to-" + primaryAlias + "-" + class
}

// ReverseTopic is the name a topic of the DR cluster gets on the primary
// under the reverse flow, and false when the reverse flow never copies it.
// This is the topic-name rule of failback:
//   - identity policy: the same name. The DR copy of "events" is "events",
//     and DR's producers kept writing "events" after the failover, so DR's
//     new records come back to the primary's original topic.
//   - default policy: "<dr>.<topic>". DefaultReplicationPolicy prefixes every
//     remote topic, so records DR's producers wrote to a local "events"
//     come back as "dr.events", never into the primary's "events". The
//     primary's consumers must read "dr.events" too.
//   - default policy, a remote copy of the primary's topic ("primary.events"
//     on DR) is never copied back (no "dr.primary.events"): its records
//     came from the primary, and MM2 refuses it as a cycle
//     (MirrorSourceConnector.isCycle: topicSource == target alias). Records
//     written in DR INTO "primary.events" after the failover therefore do
//     not come back through MM2 at all; Notes says so.
func (f ForwardFlow) ReverseTopic(drTopic string) (string, bool) {
	if f.Policy.IsInternalTopic(drTopic) {
		return "", false
	}
	sep := f.Policy.sep()
	// IdentityReplicationPolicy handles names ending in "heartbeats" like
	// the default policy does (looksLikeHeartbeat), and only those.
	prefixed := !f.Policy.Identity || strings.HasSuffix(drTopic, "heartbeats")
	if !prefixed {
		return drTopic, true
	}
	if strings.HasPrefix(drTopic, f.PrimaryAlias+sep) {
		return "", false // isCycle: it came from the primary
	}
	return f.DRAlias + sep + drTopic, true
}

// ReverseConfigs builds the reverse flow's MirrorSourceConnector,
// MirrorCheckpointConnector and MirrorHeartbeatConnector configs:
// source.cluster.alias = DR, target.cluster.alias = primary, the forward
// flow's policy and separator, the forward topic filter.
func (f ForwardFlow) ReverseConfigs() (ReverseConnectors, error) {
	if f.PrimaryAlias == "" || f.DRAlias == "" || f.PrimaryAlias == f.DRAlias {
		return ReverseConnectors{}, fmt.Errorf("reverse connectors: need two different cluster aliases, got %q and %q", f.PrimaryAlias, f.DRAlias)
	}
	if f.PrimaryBootstrap == "" || f.DRBootstrap == "" {
		return ReverseConnectors{}, errors.New("reverse connectors: both clusters' bootstrap servers are needed")
	}
	for _, p := range slices.Concat(f.Include, f.Exclude) {
		// MM2 splits topics and topics.exclude on commas.
		if strings.Contains(p, ",") {
			return ReverseConnectors{}, fmt.Errorf("reverse connectors: topic pattern %q contains a comma, which MM2 would split into two patterns", p)
		}
	}
	include := f.Include
	if len(include) == 0 {
		include = []string{".*"}
	}
	exclude := slices.Clone(f.Exclude)
	for _, w := range f.WorkerTopics {
		exclude = append(exclude, regexp.QuoteMeta(w))
	}
	exclude = append(exclude, defaultTopicsExclude)
	var notes []string
	if len(f.Include) == 0 {
		notes = append(notes, "Every DR topic is copied back (the forward filter takes every topic) except MM2's internal topics and "+
			strings.Join(f.WorkerTopics, ", ")+". The Connect workers' config and status topics on DR are left out only if their names end in -internal or .internal: if not, add them to the flow's topics.exclude.")
	}
	if f.Policy.Identity {
		notes = append(notes, "Identity policy: DR's topics come back under the same names, so DR's new records land in the primary's original topics. "+
			"MM2 starts a new source connector at the earliest offset: unless it is created stopped and its offsets set to the failover's cut first (ReverseStartOffsets), the reverse flow also copies back every record the primary already has.")
	} else {
		// Belt and braces: MM2 already skips these as cycles; the exclude
		// makes the choice visible in the config itself.
		exclude = append(exclude, regexp.QuoteMeta(f.PrimaryAlias+f.Policy.sep())+".*")
		notes = append(notes,
			fmt.Sprintf("Default policy: DR's local topics come back prefixed, e.g. %q on %s becomes %q on %s; the primary's consumers must read the prefixed topics.",
				"events", f.DRAlias, f.Policy.RemoteTopic(f.DRAlias, "events"), f.PrimaryAlias),
			fmt.Sprintf("Default policy: the DR copies of the primary's topics (%q...) are not replicated back (MM2 treats them as a cycle); records written into them in DR after the failover do not reach the primary through this flow.",
				f.Policy.RemoteTopic(f.PrimaryAlias, "")))
	}
	r := ReverseConnectors{
		Source:     ReverseConnectorName(f.DRAlias, f.PrimaryAlias, "MirrorSourceConnector"),
		Checkpoint: ReverseConnectorName(f.DRAlias, f.PrimaryAlias, "MirrorCheckpointConnector"),
		Heartbeat:  ReverseConnectorName(f.DRAlias, f.PrimaryAlias, "MirrorHeartbeatConnector"),
		Configs:    map[string]map[string]string{},
		Notes:      notes,
	}
	for _, n := range r.Names() {
		if slices.Contains(f.Connectors, n) {
			return ReverseConnectors{}, fmt.Errorf("reverse connectors: %q is already a forward connector's name", n)
		}
	}
	topics := map[string]string{"topics": strings.Join(include, ","), "topics.exclude": strings.Join(exclude, ",")}
	// Connect writes a source connector's records through the worker's
	// producer, to the worker's own cluster; the forward flow's workers
	// usually run against DR. So each connector names where its records
	// go: data and checkpoints to the primary. Heartbeats go to DR's
	// "heartbeats", which the reverse source connector copies to the
	// primary as "<dr>.heartbeats": the end-to-end proof that the reverse
	// flow replicates, as "<primary>.heartbeats" is for the forward one
	// (in dedicated MM2 the opposite direction's herder emits them there).
	// Written into the primary they would prove only that Connect can
	// write to it, which the data already proves.
	src := f.base(MirrorSourceConnectorClass, f.PrimaryBootstrap, f.PrimaryClient)
	maps.Copy(src, topics)
	cp := f.base(MirrorCheckpointConnectorClass, f.PrimaryBootstrap, f.PrimaryClient)
	maps.Copy(cp, topics)
	cp["emit.checkpoints.enabled"] = "true"
	// The primary's group offsets change only in the console's audited
	// translate step, never behind its back by MM2.
	cp["sync.group.offsets.enabled"] = "false"
	hb := f.base(MirrorHeartbeatConnectorClass, f.DRBootstrap, f.DRClient)
	hb["emit.heartbeats.enabled"] = "true"
	r.Configs[r.Source], r.Configs[r.Checkpoint], r.Configs[r.Heartbeat] = src, cp, hb
	return r, nil
}

// base is what all three connectors share; their records are produced to
// the cluster at produceTo with the client settings produceClient.
func (f ForwardFlow) base(class, produceTo string, produceClient map[string]string) map[string]string {
	m := map[string]string{
		"connector.class":                  class,
		"source.cluster.alias":             f.DRAlias,
		"target.cluster.alias":             f.PrimaryAlias,
		"source.cluster.bootstrap.servers": f.DRBootstrap,
		"target.cluster.bootstrap.servers": f.PrimaryBootstrap,
		"replication.policy.class":         f.Policy.PolicyClass(),
		// MM2's records are raw bytes; Connect's default JSON converter
		// would mangle data and checkpoints (mm2.md §1.3).
		"key.converter":                       byteArrayConverter,
		"value.converter":                     byteArrayConverter,
		"header.converter":                    byteArrayConverter,
		"producer.override.bootstrap.servers": produceTo,
	}
	if f.Policy.Separator != "" && f.Policy.Separator != "." {
		m["replication.policy.separator"] = f.Policy.Separator
	}
	if f.Policy.LegacyInternalSeparator {
		m["replication.policy.internal.topic.separator.enabled"] = "false"
	}
	if f.OffsetSyncsLocation != "" {
		m["offset-syncs.topic.location"] = f.OffsetSyncsLocation
	}
	if f.TasksMax > 0 {
		m["tasks.max"] = fmt.Sprint(f.TasksMax)
	}
	for _, k := range InheritedKeys {
		if v, ok := f.Inherited[class][k]; ok {
			m[k] = v
		}
	}
	for k, v := range f.DRClient {
		m["source.cluster."+k] = v
	}
	for k, v := range f.PrimaryClient {
		m["target.cluster."+k] = v
	}
	for k, v := range produceClient {
		m["producer.override."+k] = v
	}
	return m
}

// ForwardConnector is a forward connector's state as the console last read
// it from Connect REST (GET /connectors/{name}/status).
type ForwardConnector struct {
	Name  string
	Known bool   // false: no answer, or no REST (dedicated mode)
	State string // RUNNING, PAUSED, STOPPED, FAILED, UNASSIGNED, RESTARTING
	Tasks int    // tasks still listed in the status
}

// ErrReverseCycle refuses a reverse flow that could copy records back and forth.
var ErrReverseCycle = errors.New("reverse replication refused: it would form a cycle")

// CheckReverseCycle is the cycle rule. Under the identity policy the
// reverse flow DR -> primary and the forward flow primary -> DR copy the
// same topic names, and IdentityReplicationPolicy cannot tell a copy from
// an original (its topicSource is the configured source alias for every
// topic, and MirrorSourceConnector.isCycle gives up when upstreamTopic
// returns the name unchanged: "Extra check for IdentityReplicationPolicy
// and similar impls that don't prevent cycles"). With both running every
// record would travel back and forth for ever. So under identity every
// forward connector must be known STOPPED with its tasks gone; PAUSED,
// FAILED or any other state is one resume or restart away from a cycle,
// and an unknown state fails closed.
//
// Under the default policy it is not a cycle: each direction prefixes, and
// MirrorSourceConnector.shouldReplicateTopic skips any topic whose
// topicSource is its own target alias (isCycle), so "primary.events" is
// never copied back to the primary, nor "dr.events" back to DR. (apache/kafka
// connect/mirror/.../MirrorSourceConnector.java, isCycle and
// shouldReplicateTopic; connect/mirror-client/.../IdentityReplicationPolicy.java)
func CheckReverseCycle(p ReplicationPolicy, forward []ForwardConnector) error {
	if !p.Identity {
		return nil
	}
	if len(forward) == 0 {
		return fmt.Errorf("%w: under the identity policy the forward connectors must be known stopped, and the console knows of none", ErrReverseCycle)
	}
	var bad []string
	for _, c := range forward {
		switch {
		case !c.Known:
			bad = append(bad, c.Name+" (state unknown)")
		case c.State != "STOPPED":
			bad = append(bad, fmt.Sprintf("%s (%s)", c.Name, c.State))
		case c.Tasks > 0:
			bad = append(bad, fmt.Sprintf("%s (STOPPED, %d task(s) still listed)", c.Name, c.Tasks))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: under the identity policy both directions copy the same topic names, so the forward connectors must be stopped first; not known stopped: %s",
			ErrReverseCycle, strings.Join(bad, ", "))
	}
	return nil
}

// ReverseStartOffsets is the body of PATCH /connectors/{source}/offsets
// (Kafka 3.6+, the connector STOPPED) that starts the reverse
// MirrorSourceConnector at the failover's cut: cut holds, per DR topic
// partition, DR's log end when the forward mirror stopped, so records from
// there on were produced in DR. Without it MM2 starts a new connector at
// the earliest offset (MirrorConnectorConfig forces auto.offset.reset
// earliest), and under the identity policy would copy back everything the
// primary already holds. Connect stores the last replicated offset and
// MirrorSourceTask.initializeConsumer seeks to it + 1, hence cut - 1; a
// partition cut at 0 has nothing to skip and is left out (MM2 refuses
// negative offsets, MirrorUtils.validateSourceOffset).
func ReverseStartOffsets(drAlias string, cut map[model.TP]int64) ([]byte, error) {
	type entry struct {
		Partition map[string]any   `json:"partition"`
		Offset    map[string]int64 `json:"offset"`
	}
	tps := slices.SortedFunc(maps.Keys(cut), func(a, b model.TP) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
	entries := []entry{}
	for _, tp := range tps {
		switch c := cut[tp]; {
		case c < 0:
			return nil, fmt.Errorf("reverse start offsets: %s-%d: cut %d is negative", tp.Topic, tp.Partition, c)
		case c > 0:
			o := model.ConnectOffset{Cluster: drAlias, Topic: tp.Topic, Partition: tp.Partition}
			entries = append(entries, entry{connectPartition(o), map[string]int64{"offset": c - 1}})
		}
	}
	return json.Marshal(map[string]any{"offsets": entries})
}
