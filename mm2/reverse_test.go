package mm2

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/model"
)

// kafkaKeys are the config keys the reverse connectors may use, each with
// the Kafka constant it was read from (apache/kafka at 1eb7644349cb, files
// cited in reverse.go). Any other key in a config fails the test, so a
// misspelt key cannot slip through as "an unknown setting MM2 ignores".
var kafkaKeys = map[string]string{
	"connector.class":                  "ConnectorConfig.CONNECTOR_CLASS_CONFIG",
	"tasks.max":                        "ConnectorConfig.TASKS_MAX_CONFIG",
	"key.converter":                    "ConnectorConfig.KEY_CONVERTER_CLASS_CONFIG",
	"value.converter":                  "ConnectorConfig.VALUE_CONVERTER_CLASS_CONFIG",
	"header.converter":                 "ConnectorConfig.HEADER_CONVERTER_CLASS_CONFIG",
	"source.cluster.alias":             "MirrorConnectorConfig.SOURCE_CLUSTER_ALIAS",
	"target.cluster.alias":             "MirrorConnectorConfig.TARGET_CLUSTER_ALIAS",
	"source.cluster.bootstrap.servers": "MirrorMakerConfig.SOURCE_CLUSTER_PREFIX + bootstrap.servers",
	"target.cluster.bootstrap.servers": "MirrorMakerConfig.TARGET_CLUSTER_PREFIX + bootstrap.servers",
	"replication.policy.class":         "MirrorClientConfig.REPLICATION_POLICY_CLASS",
	"replication.policy.separator":     "MirrorClientConfig.REPLICATION_POLICY_SEPARATOR",
	"replication.policy.internal.topic.separator.enabled": "MirrorClientConfig.INTERNAL_TOPIC_SEPARATOR_ENABLED",
	"offset-syncs.topic.location":                         "MirrorConnectorConfig.OFFSET_SYNCS_TOPIC_LOCATION",
	"topics":                                              "DefaultTopicFilter.TOPICS_INCLUDE_CONFIG",
	"topics.exclude":                                      "DefaultTopicFilter.TOPICS_EXCLUDE_CONFIG",
	"emit.checkpoints.enabled":                            "MirrorCheckpointConfig.EMIT_CHECKPOINTS_ENABLED",
	"sync.group.offsets.enabled":                          "MirrorCheckpointConfig.SYNC_GROUP_OFFSETS_ENABLED",
	"emit.heartbeats.enabled":                             "MirrorHeartbeatConfig.EMIT_HEARTBEATS_ENABLED",
	"producer.override.bootstrap.servers":                 "ConnectorConfig.CONNECTOR_CLIENT_PRODUCER_OVERRIDES_PREFIX + bootstrap.servers",
	// InheritedKeys (and accepted by real MM2 4.3.1 in TestFailbackE2E).
	"replication.factor":                    "MirrorSourceConfig.REPLICATION_FACTOR",
	"offset-syncs.topic.replication.factor": "MirrorSourceConfig.OFFSET_SYNCS_TOPIC_REPLICATION_FACTOR",
	"checkpoints.topic.replication.factor":  "MirrorCheckpointConfig.CHECKPOINTS_TOPIC_REPLICATION_FACTOR",
	"heartbeats.topic.replication.factor":   "MirrorHeartbeatConfig.HEARTBEATS_TOPIC_REPLICATION_FACTOR",
	"emit.checkpoints.interval.seconds":     "MirrorCheckpointConfig.EMIT_CHECKPOINTS_INTERVAL_SECONDS",
	"emit.heartbeats.interval.seconds":      "MirrorHeartbeatConfig.EMIT_HEARTBEATS_INTERVAL_SECONDS",
	"refresh.topics.interval.seconds":       "MirrorSourceConfig.REFRESH_TOPICS_INTERVAL_SECONDS",
	"refresh.groups.interval.seconds":       "MirrorCheckpointConfig.REFRESH_GROUPS_INTERVAL_SECONDS",
	"sync.topic.acls.enabled":               "MirrorSourceConfig.SYNC_TOPIC_ACLS_ENABLED",
	"sync.topic.configs.enabled":            "MirrorSourceConfig.SYNC_TOPIC_CONFIGS_ENABLED",
	"offset.lag.max":                        "MirrorSourceConfig.OFFSET_LAG_MAX",
}

// clientSetting reports a passed-through client setting under one of
// MM2's client prefixes (the test flows pass security.protocol only).
func clientSetting(k string) bool {
	for _, p := range []string{"source.cluster.", "target.cluster.", "producer.override."} {
		if k == p+"security.protocol" {
			return true
		}
	}
	return false
}

func TestReverseConfigs(t *testing.T) {
	common := func(policy string) map[string]string {
		return map[string]string{
			"source.cluster.alias":                "dr",
			"target.cluster.alias":                "primary",
			"source.cluster.bootstrap.servers":    "dr:9092",
			"target.cluster.bootstrap.servers":    "primary:9092",
			"replication.policy.class":            policy,
			"key.converter":                       byteArrayConverter,
			"value.converter":                     byteArrayConverter,
			"header.converter":                    byteArrayConverter,
			"producer.override.bootstrap.servers": "primary:9092",
		}
	}
	with := func(m map[string]string, kv ...string) map[string]string {
		out := maps.Clone(m)
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	base := ForwardFlow{PrimaryAlias: "primary", DRAlias: "dr", PrimaryBootstrap: "primary:9092", DRBootstrap: "dr:9092",
		Connectors: []string{"MirrorSourceConnector", "MirrorCheckpointConnector", "MirrorHeartbeatConnector"}}
	identity := base
	identity.Policy = ReplicationPolicy{Identity: true}
	identity.Include = []string{"events.*", "orders"}
	identity.Exclude = []string{"events-tmp"}
	identity.OffsetSyncsLocation = "target"
	identity.TasksMax = 4
	// The forward connectors' replication factors and intervals come
	// along, per class; nothing else of theirs does.
	identity.Inherited = map[string]map[string]string{
		MirrorSourceConnectorClass: {"replication.factor": "1", "offset-syncs.topic.replication.factor": "1", "refresh.topics.interval.seconds": "2",
			"topics": "forward-only", "source.cluster.bootstrap.servers": "elsewhere:9092", "sync.group.offsets.enabled": "true"},
		MirrorCheckpointConnectorClass: {"checkpoints.topic.replication.factor": "1", "emit.checkpoints.interval.seconds": "1", "sync.group.offsets.enabled": "true"},
		MirrorHeartbeatConnectorClass:  {"heartbeats.topic.replication.factor": "1", "emit.heartbeats.interval.seconds": "1"},
	}
	deflt := base
	deflt.Policy = ReplicationPolicy{Separator: "_", LegacyInternalSeparator: true}
	deflt.PrimaryClient = map[string]string{"security.protocol": "SSL"}
	deflt.DRClient = map[string]string{"security.protocol": "SASL_SSL"}
	deflt.WorkerTopics = []string{"connect.offsets"}

	idc := common(IdentityPolicyClass)
	idc = with(idc, "offset-syncs.topic.location", "target", "tasks.max", "4",
		"topics", "events.*,orders", "topics.exclude", `events-tmp,.*[\-\.]internal, .*\.replica, __.*`)
	dfc := with(common(DefaultPolicyClass), "replication.policy.separator", "_", "replication.policy.internal.topic.separator.enabled", "false",
		"source.cluster.security.protocol", "SASL_SSL", "target.cluster.security.protocol", "SSL", "producer.override.security.protocol", "SSL")
	dfTopics := []string{"topics", ".*", "topics.exclude", `connect\.offsets,.*[\-\.]internal, .*\.replica, __.*,primary_.*`}
	cases := []struct {
		name string
		flow ForwardFlow
		want map[string]map[string]string
	}{
		{"identity", identity, map[string]map[string]string{
			"dr-to-primary-MirrorSourceConnector": with(idc, "connector.class", MirrorSourceConnectorClass,
				"replication.factor", "1", "offset-syncs.topic.replication.factor", "1", "refresh.topics.interval.seconds", "2"),
			"dr-to-primary-MirrorCheckpointConnector": with(idc, "connector.class", MirrorCheckpointConnectorClass,
				"emit.checkpoints.enabled", "true", "sync.group.offsets.enabled", "false",
				"checkpoints.topic.replication.factor", "1", "emit.checkpoints.interval.seconds", "1"),
			"dr-to-primary-MirrorHeartbeatConnector": with(common(IdentityPolicyClass), "connector.class", MirrorHeartbeatConnectorClass,
				"offset-syncs.topic.location", "target", "tasks.max", "4", "emit.heartbeats.enabled", "true",
				"heartbeats.topic.replication.factor", "1", "emit.heartbeats.interval.seconds", "1",
				"producer.override.bootstrap.servers", "dr:9092"), // heartbeats into DR, replicated as dr.heartbeats
		}},
		{"default, separator _", deflt, map[string]map[string]string{
			"dr-to-primary-MirrorSourceConnector": with(dfc, append([]string{"connector.class", MirrorSourceConnectorClass}, dfTopics...)...),
			"dr-to-primary-MirrorCheckpointConnector": with(dfc, append([]string{"connector.class", MirrorCheckpointConnectorClass,
				"emit.checkpoints.enabled", "true", "sync.group.offsets.enabled", "false"}, dfTopics...)...),
			"dr-to-primary-MirrorHeartbeatConnector": with(dfc, "connector.class", MirrorHeartbeatConnectorClass, "emit.heartbeats.enabled", "true",
				"producer.override.bootstrap.servers", "dr:9092", "producer.override.security.protocol", "SASL_SSL"),
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := tc.flow.ReverseConfigs()
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Configs) != 3 || len(r.Notes) == 0 {
				t.Fatalf("configs %d, notes %q", len(r.Configs), r.Notes)
			}
			for name, want := range tc.want {
				got := r.Configs[name]
				if !maps.Equal(got, want) {
					t.Errorf("%s:\n got %v\nwant %v", name, got, want)
				}
				for k := range got {
					if _, ok := kafkaKeys[k]; !ok && !clientSetting(k) {
						t.Errorf("%s: key %q is not one checked against Kafka's source", name, k)
					}
				}
			}
			if got := strings.Join(r.Names(), " "); got != "dr-to-primary-MirrorSourceConnector dr-to-primary-MirrorCheckpointConnector dr-to-primary-MirrorHeartbeatConnector" {
				t.Errorf("names %s", got)
			}
		})
	}
}

func TestReverseConfigsRefuse(t *testing.T) {
	ok := ForwardFlow{PrimaryAlias: "primary", DRAlias: "dr", PrimaryBootstrap: "p:1", DRBootstrap: "d:1"}
	for name, f := range map[string]func(*ForwardFlow){
		"same alias":    func(f *ForwardFlow) { f.DRAlias = "primary" },
		"no alias":      func(f *ForwardFlow) { f.PrimaryAlias = "" },
		"no bootstrap":  func(f *ForwardFlow) { f.DRBootstrap = "" },
		"comma pattern": func(f *ForwardFlow) { f.Include = []string{"events{1,3}"} },
		"name collision": func(f *ForwardFlow) {
			f.Connectors = []string{"dr-to-primary-MirrorCheckpointConnector"}
		},
	} {
		flow := ok
		f(&flow)
		if _, err := flow.ReverseConfigs(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := ok.ReverseConfigs(); err != nil {
		t.Fatal(err)
	}
}

func TestReverseTopic(t *testing.T) {
	id := ForwardFlow{PrimaryAlias: "primary", DRAlias: "dr", Policy: ReplicationPolicy{Identity: true}}
	df := ForwardFlow{PrimaryAlias: "primary", DRAlias: "dr"}
	cases := []struct {
		flow  ForwardFlow
		dr    string
		want  string
		wantK bool
	}{
		{id, "events", "events", true},                       // the primary's original name
		{id, "heartbeats", "dr.heartbeats", true},            // heartbeats are prefixed even under identity
		{id, "primary.heartbeats", "", false},                // came from the primary: a cycle
		{df, "events", "dr.events", true},                    // DR's local topic comes back prefixed
		{df, "primary.events", "", false},                    // the DR copy is never copied back
		{df, "primary.heartbeats", "", false},                // nor its heartbeats
		{df, "mm2-offset-syncs.primary.internal", "", false}, // internal
		{id, "__consumer_offsets", "", false},
	}
	for _, tc := range cases {
		got, ok := tc.flow.ReverseTopic(tc.dr)
		if got != tc.want || ok != tc.wantK {
			t.Errorf("identity=%v ReverseTopic(%q) = %q, %v; want %q, %v", tc.flow.Policy.Identity, tc.dr, got, ok, tc.want, tc.wantK)
		}
	}
}

func TestCheckReverseCycle(t *testing.T) {
	stopped := func(n string) ForwardConnector { return ForwardConnector{Name: n, Known: true, State: "STOPPED"} }
	identity := ReplicationPolicy{Identity: true}
	cases := []struct {
		name    string
		policy  ReplicationPolicy
		forward []ForwardConnector
		refused string // "" means allowed; else a part of the sentence
	}{
		{"identity, all stopped", identity, []ForwardConnector{stopped("src"), stopped("cp")}, ""},
		{"identity, one running", identity, []ForwardConnector{stopped("src"), {Name: "cp", Known: true, State: "RUNNING", Tasks: 1}}, "cp (RUNNING)"},
		{"identity, paused", identity, []ForwardConnector{{Name: "src", Known: true, State: "PAUSED", Tasks: 1}}, "src (PAUSED)"},
		{"identity, failed", identity, []ForwardConnector{{Name: "src", Known: true, State: "FAILED"}}, "src (FAILED)"},
		{"identity, unknown", identity, []ForwardConnector{{Name: "src"}}, "src (state unknown)"},
		{"identity, stopping", identity, []ForwardConnector{{Name: "src", Known: true, State: "STOPPED", Tasks: 2}}, "2 task(s) still listed"},
		{"identity, none known", identity, nil, "knows of none"},
		{"default, running", ReplicationPolicy{}, []ForwardConnector{{Name: "src", Known: true, State: "RUNNING"}}, ""},
		{"default, unknown", ReplicationPolicy{}, []ForwardConnector{{Name: "src"}}, ""},
	}
	for _, tc := range cases {
		err := CheckReverseCycle(tc.policy, tc.forward)
		switch {
		case tc.refused == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.refused != "" && (!errors.Is(err, ErrReverseCycle) || !strings.Contains(err.Error(), tc.refused)):
			t.Errorf("%s: got %v, want a refusal naming %q", tc.name, err, tc.refused)
		}
	}
}

func TestReverseStartOffsets(t *testing.T) {
	got, err := ReverseStartOffsets("dr", map[model.TP]int64{{Topic: "orders", Partition: 1}: 7, {Topic: "events", Partition: 0}: 1200, {Topic: "events", Partition: 2}: 0})
	want := `{"offsets":[{"partition":{"cluster":"dr","partition":0,"topic":"events"},"offset":{"offset":1199}},` +
		`{"partition":{"cluster":"dr","partition":1,"topic":"orders"},"offset":{"offset":6}}]}`
	if err != nil || string(got) != want {
		t.Fatalf("got %s, %v\nwant %s", got, err, want)
	}
	if _, err := ReverseStartOffsets("dr", map[model.TP]int64{{Topic: "x"}: -1}); err == nil {
		t.Fatal("a negative cut accepted")
	}
}
