package testenv

import (
	"strings"
	"testing"
)

// Fast checks of the generated configuration (no JVM needed).
func TestMM2Properties(t *testing.T) {
	src := &Kafka{Name: "primary", Bootstrap: "127.0.0.1:1"}
	dst := &Kafka{Name: "dr", Bootstrap: "127.0.0.1:2"}
	tests := []struct {
		name      string
		opts      MM2Options
		want      []string
		syncTopic string
		syncOn    *Kafka
		remote    string
	}{
		{
			name: "defaults",
			opts: MM2Options{Source: src, Target: dst},
			want: []string{
				"clusters = primary, dr\n",
				"primary.bootstrap.servers = 127.0.0.1:1\n",
				"dr.bootstrap.servers = 127.0.0.1:2\n",
				"primary->dr.enabled = true\n",
				"primary->dr.topics = events.*,orders.*,users.*\n",
				"dr->primary.enabled = false\n",
				"replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy\n",
				"offset-syncs.topic.location = target\n",
				"sync.group.offsets.enabled = true\n",
				"emit.checkpoints.interval.seconds = 1\n",
				"dr.offset.flush.interval.ms = 1000\n",
				"primary.offset.flush.interval.ms = 1000\n",
			},
			syncTopic: "mm2-offset-syncs.primary.internal", syncOn: dst, remote: "events",
		},
		{
			name: "default policy, source location, other aliases, extra",
			opts: MM2Options{Source: src, Target: dst, SourceAlias: "east", TargetAlias: "west",
				Policy: "default", OffsetSyncsLocation: "source", Topics: "a.*",
				Extra: map[string]string{"offset-syncs.topic.location": "target", "east->west.offset.lag.max": "10"}},
			want: []string{
				"clusters = east, west\n",
				"east->west.topics = a.*\n",
				"west->east.enabled = false\n",
				"replication.policy.class = org.apache.kafka.connect.mirror.DefaultReplicationPolicy\n",
				"offset-syncs.topic.location = source\n",
				"west.offset.flush.interval.ms = 1000\n",
				"# Extra\neast->west.offset.lag.max = 10\noffset-syncs.topic.location = target\n",
			},
			syncTopic: "mm2-offset-syncs.west.internal", syncOn: src, remote: "east.events",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := MM2Properties(tc.opts)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in:\n%s", w, got)
				}
			}
			if !strings.HasSuffix(got, tc.want[len(tc.want)-1]) && tc.opts.Extra != nil {
				t.Errorf("Extra must come last:\n%s", got)
			}
			topic, on := tc.opts.OffsetSyncsTopic()
			if topic != tc.syncTopic || on != tc.syncOn {
				t.Errorf("OffsetSyncsTopic = %s on %s, want %s on %s", topic, on.Name, tc.syncTopic, tc.syncOn.Name)
			}
			if r := tc.opts.RemoteTopic("events"); r != tc.remote {
				t.Errorf("RemoteTopic(events) = %s, want %s", r, tc.remote)
			}
		})
	}
}

func TestMirrorConnectorConfigs(t *testing.T) {
	opts := MM2Options{Source: &Kafka{Bootstrap: "s:1"}, Target: &Kafka{Bootstrap: "t:2"}}
	cfgs := MirrorConnectorConfigs(opts)
	for _, name := range []string{"MirrorSourceConnector", "MirrorCheckpointConnector", "MirrorHeartbeatConnector"} {
		c, ok := cfgs[name]
		if !ok {
			t.Fatalf("no config for %s", name)
		}
		if c["connector.class"] != "org.apache.kafka.connect.mirror."+name {
			t.Errorf("%s: connector.class %q", name, c["connector.class"])
		}
		if c["source.cluster.alias"] != "primary" || c["target.cluster.alias"] != "dr" ||
			c["source.cluster.bootstrap.servers"] != "s:1" || c["target.cluster.bootstrap.servers"] != "t:2" {
			t.Errorf("%s: aliases/bootstrap wrong: %v", name, c)
		}
		if c["value.converter"] != "org.apache.kafka.connect.converters.ByteArrayConverter" {
			t.Errorf("%s: value.converter %q", name, c["value.converter"])
		}
	}
}

func TestRandomClusterID(t *testing.T) {
	for range 100 {
		id := randomClusterID()
		if len(id) != 22 || strings.HasPrefix(id, "-") {
			t.Fatalf("bad cluster id %q", id)
		}
	}
}

// The matrix's expectations hang on MirrorAtLeast (timed offset syncs from 3.7).
func TestKafkaDistMirrorAtLeast(t *testing.T) {
	for _, tc := range []struct {
		mirror string
		want   bool
	}{{"3.6.2", false}, {"3.7.0", true}, {"3.9.1", true}, {"3.10.0", true}, {"4.3.1", true}, {"2.8.2", false}} {
		if got := (KafkaDist{Mirror: tc.mirror}).MirrorAtLeast(3, 7); got != tc.want {
			t.Errorf("MirrorAtLeast(3, 7) on %s = %v, want %v", tc.mirror, got, tc.want)
		}
	}
	if got := Kafka4_4.String(); got != "kafka-4.4.0-mm2-"+KafkaVersion {
		t.Errorf("Kafka4_4.String() = %q", got)
	}
}

// A failed test's log shows the component's warnings and errors, with
// their stack traces, not only its routine last lines.
func TestLogProblems(t *testing.T) {
	log := strings.Join([]string{
		"[06:02:07.857] INFO  [main] started (X)",
		"[06:02:08.000] WARN  [task-thread-1] producer send failed (WorkerSourceTask)",
		"org.apache.kafka.common.errors.TimeoutException: Expiring 44 record(s)",
		"\tat org.apache.kafka.clients.producer.internals...",
		"[06:02:09.000] INFO  [committer] Committing offsets for 1 acknowledged messages (WorkerSourceTask)",
		"[06:02:10.000] ERROR [task-thread-1] task failed (WorkerTask)",
	}, "\n")
	want := strings.Join([]string{
		"[06:02:08.000] WARN  [task-thread-1] producer send failed (WorkerSourceTask)",
		"org.apache.kafka.common.errors.TimeoutException: Expiring 44 record(s)",
		"\tat org.apache.kafka.clients.producer.internals...",
		"[06:02:10.000] ERROR [task-thread-1] task failed (WorkerTask)",
	}, "\n")
	if got := logProblems(log, 20); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if got := logProblems(log, 1); got != "[06:02:10.000] ERROR [task-thread-1] task failed (WorkerTask)" {
		t.Fatalf("the last one: %q", got)
	}
	if got := logProblems("[06:02:07.857] INFO  [main] started (X)", 5); got != "" {
		t.Fatalf("no problems: %q", got)
	}
}
