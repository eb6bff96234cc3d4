package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestExampleFileLoads(t *testing.T) {
	// The example names secret files that do not exist here; blank them.
	data, err := os.ReadFile("../drconsole.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range []string{"primary-ca.pem", "pw"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s := strings.NewReplacer(
		"/etc/drconsole/primary-ca.pem", filepath.Join(dir, "primary-ca.pem"),
		"/run/secrets/primary-kafka-password", filepath.Join(dir, "pw"),
		"/run/secrets/dr-kafka-password", filepath.Join(dir, "pw"),
	).Replace(string(data))
	c, err := Parse("example.yaml", strings.NewReader(s))
	if err != nil {
		t.Fatalf("example config: %v", err)
	}
	f := c.Flow("primary->dr")
	if f == nil || f.ReplicationPolicy != "identity" || f.OffsetSyncsLocation != "target" {
		t.Fatalf("flow = %+v", f)
	}
	if !f.Topics.Matches("events") || !f.Topics.Matches("orders.eu") || f.Topics.Matches("audit") {
		t.Fatal("topic filter does not match like MM2's full-match regexes")
	}
	if g := f.GroupNamed("billing-service"); g == nil || !g.Critical || g.ReprocessObjective != 1000 {
		t.Fatalf("the example's critical group = %+v", g)
	}
	if c.Clusters["primary"].SASL.Password != "x" {
		t.Fatal("password_file not read")
	}
	if c.Thresholds.Warning.For.D() != 5*time.Minute || c.Thresholds.Critical.Lag.D() != 2*time.Minute {
		t.Fatalf("thresholds = %+v", c.Thresholds)
	}
	if c.Retention.LagHistory.D() != 24*time.Hour || c.Retention.RPOHistory.D() != 90*24*time.Hour {
		t.Fatalf("retention = %+v", c.Retention)
	}
}

func TestDefaults(t *testing.T) {
	c, err := Parse("min.yaml", strings.NewReader(`
clusters:
  a: {bootstrap: ["127.0.0.1:9092"]}
  b: {bootstrap: ["127.0.0.1:9093"]}
flows:
  - {source: a, target: b}
`))
	if err != nil {
		t.Fatal(err)
	}
	f := c.Flows[0]
	if f.Name != "a->b" || f.SourceAlias != "a" || f.ReplicationPolicy != "default" || f.OffsetSyncsLocation != "source" {
		t.Fatalf("flow defaults = %+v", f)
	}
	th := c.Thresholds
	if th.Warning.Lag.D() != 30*time.Second || th.Warning.For.D() != 5*time.Minute ||
		th.Critical.Lag.D() != 2*time.Minute || th.Critical.For.D() != 2*time.Minute || th.HeartbeatTimeout.D() != 30*time.Second {
		t.Fatalf("domain threshold defaults = %+v", th)
	}
	if c.Listen != "127.0.0.1:8080" || c.RefreshInterval.D() != 5*time.Second || c.RefreshReadTimeout.D() != 10*time.Second {
		t.Fatalf("listen %q refresh %v read timeout %v", c.Listen, c.RefreshInterval.D(), c.RefreshReadTimeout.D())
	}
	if r := c.Retention; r.LagHistory.D() != 24*time.Hour || r.RPOHistory.D() != 90*24*time.Hour {
		t.Fatalf("retention defaults = %+v", r)
	}
}

// The per-minute RPO history must outlive the raw samples it rolls up, and
// neither may be negative.
func TestRPOHistoryValidation(t *testing.T) {
	base := `
clusters:
  a: {bootstrap: ["127.0.0.1:9092"]}
  b: {bootstrap: ["127.0.0.1:9093"]}
flows:
  - {source: a, target: b}
retention:
`
	for _, tc := range []struct{ retention, want string }{
		{"  lag_history: 48h\n  rpo_history: 24h\n", "retention.rpo_history: 24h0m0s is shorter than retention.lag_history 48h0m0s"},
		{"  rpo_history: -1h\n", "retention.rpo_history: must not be negative"},
		{"  lag_history: 2400h\n", "retention.rpo_history: 2160h0m0s is shorter than retention.lag_history"},
		{"  lag_history: 1m\n", "retention.lag_history: 1m0s is too short"},
		{"  rpo_history: 8760h\n", ""},
	} {
		c, err := Parse("r.yaml", strings.NewReader(base+tc.retention))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.retention, err)
		case tc.want == "" && c.Retention.RPOHistory.D() != 365*24*time.Hour:
			t.Errorf("%q: rpo_history %v", tc.retention, c.Retention.RPOHistory.D())
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: err %v, want %q", tc.retention, err, tc.want)
		}
	}
}

func TestProblemsOnePerMistake(t *testing.T) {
	_, err := Parse("bad.yaml", strings.NewReader(`
clusters:
  a: {bootstrap: ["nohost"], sasl: {mechanism: GSSAPI, username: u, password: p}}
  b: {bootstrap: [], tls: {ca_file: /does/not/exist}}
flows:
  - {name: x, source: a, target: c, replication_policy: mirror, offset_syncs_location: both, topics: {include: ["ev("]}}
  - {name: x, source: a, target: a, objectives: {rpo: -1s}}
thresholds:
  warning: {lag: 3m}
  critical: {lag: 1m}
`))
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("err = %v, want Problems", err)
	}
	msg := err.Error()
	for _, want := range []string{
		`bad.yaml: clusters.a.bootstrap[0]: "nohost" has no port`,
		`clusters.a.sasl.mechanism: "GSSAPI" is not supported`,
		`clusters.b.bootstrap: list at least one broker`,
		`clusters.b.tls.ca_file: cannot read /does/not/exist`,
		`flows[0] (x).target: no cluster named "c"`,
		`flows[0] (x).replication_policy: "mirror"`,
		`flows[0] (x).offset_syncs_location: "both"`,
		`flows[0] (x).topics.include[0]: "ev(" is not a valid regular expression`,
		`flows[1] (x).name: duplicate flow name "x"`,
		`flows[1] (x): source and target are the same cluster "a"`,
		`flows[1] (x).objectives.rpo: -1s is negative`,
		`thresholds.critical.lag: 1m0s is below the warning lag 3m0s`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing problem %q in:\n%s", want, msg)
		}
	}
	if len(ps) != 12 {
		t.Errorf("got %d problems, want 12:\n%s", len(ps), msg)
	}
}

func TestUnknownKeyAndBadDuration(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"clustres: {}", "field clustres not found"},
		{"refresh_interval: soon", `"soon" is not a duration`},
		{"refresh_read_timeout: 10ms", `refresh_read_timeout: 10ms is too short (at least 100ms)`},
		{"refresh_read_timeout: -1s", `refresh_read_timeout: must not be negative`},
	} {
		_, err := Parse("f.yaml", strings.NewReader(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) err = %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

func TestSavepointDirsOnS3(t *testing.T) {
	base := `
clusters:
  a: {bootstrap: ["a:9092"]}
  b: {bootstrap: ["b:9092"]}
flows:
  - {source: a, target: b}
`
	c, err := Parse("ok.yaml", strings.NewReader(base+`
savepoint_dirs: [/var/lib/flink/savepoints, "s3://flink/savepoints", "s3a://flink/checkpoints/"]
s3: {endpoint: "https://s3.eu-west-1.amazonaws.com", region: eu-west-1}
`))
	if err != nil || c.S3 == nil || c.S3.Region != "eu-west-1" || c.S3.PathStyle || len(c.SavepointDirs) != 3 {
		t.Fatalf("valid S3 config: %+v %v", c, err)
	}
	_, err = Parse("bad.yaml", strings.NewReader(base+`
savepoint_dirs: ["s3://flink/savepoints", "s3:///no-bucket", "relative/dir", "gs://flink/x"]
`))
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("err = %v, want Problems", err)
	}
	for _, want := range []string{
		`savepoint_dirs[0]: "s3://flink/savepoints" is on S3: set s3.endpoint`,
		`savepoint_dirs[1]: "s3:///no-bucket": want s3://bucket/prefix`,
		`savepoint_dirs[2]: "relative/dir" is not an absolute path`,
		`savepoint_dirs[3]: "gs://flink/x" is not an absolute path`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing problem %q in:\n%v", want, err)
		}
	}
	for _, ep := range []string{"s3.amazonaws.com", "ftp://x", "https://minio:9000/bucket"} {
		_, err := Parse("bad.yaml", strings.NewReader(base+"s3: {endpoint: \""+ep+"\"}\n"))
		if err == nil || !strings.Contains(err.Error(), "s3.endpoint") {
			t.Errorf("endpoint %q: %v", ep, err)
		}
	}
}

func TestNotificationsValidation(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	os.WriteFile(secret, []byte("k3y\n"), 0o600)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	base := `
clusters:
  a: {bootstrap: ["127.0.0.1:9092"]}
  b: {bootstrap: ["127.0.0.1:9093"]}
flows:
  - {source: a, target: b}
notifications:
  webhooks:
`
	c, err := Parse("ok.yaml", strings.NewReader(base+`
    - {name: ops, url: "https://h.example/x", secret_file: "`+secret+`", events: [run.requested]}
    - {name: chat, kind: slack, url: "https://hooks.slack.com/services/T/B/X"}
`))
	if err != nil {
		t.Fatal(err)
	}
	ops := c.Notifications.Webhooks[0]
	if ops.Kind != "webhook" || ops.Secret != "k3y" || !ops.Wants("run.requested") || ops.Wants("flow.critical") || !c.Notifications.Webhooks[1].Wants("flow.critical") {
		t.Fatalf("%+v", ops)
	}
	_, err = Parse("bad.yaml", strings.NewReader(base+`
    - {name: ops, url: "ftp://h.example/x", secret: a, secret_file: "`+secret+`"}
    - {name: ops, kind: teams, url: "https://h.example/x"}
    - {url: "https://h.example/x", secret_file: "`+empty+`", events: [run.exploded]}
`))
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("err %v", err)
	}
	msg := err.Error()
	for _, want := range []string{
		`notifications.webhooks[0].url: not an http(s) URL`,
		`notifications.webhooks[0]: set secret or secret_file, not both`,
		`notifications.webhooks[1].name: "ops" is used twice`,
		`notifications.webhooks[1].kind: "teams": want webhook or slack`,
		`notifications.webhooks[2].name: required`,
		`notifications.webhooks[2].secret_file: ` + empty + ` is empty`,
		`notifications.webhooks[2].events[0]: "run.exploded" is not an event`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing %q in:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "k3y") {
		t.Error("a secret was echoed")
	}
}

func TestFlinkTargetKubernetes(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte("apiVersion: v1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := `
clusters:
  a: {bootstrap: ["127.0.0.1:9092"]}
  b: {bootstrap: ["127.0.0.1:9093"]}
flows:
  - {source: a, target: b}
flink_targets:
`
	c, err := Parse("k.yaml", strings.NewReader(base+`  - name: dr
    rest_url: http://jm:8081
    region: dr
    kubernetes: {kubeconfig: `+kc+`, context: dr-admin, namespace: flink-dr, deployment: events-job}
`))
	if err != nil {
		t.Fatal(err)
	}
	if k := c.FlinkTargets[0].Kubernetes; k.UseStateSnapshot != "auto" || k.Timeout.D() != 10*time.Minute || k.Context != "dr-admin" {
		t.Fatalf("kubernetes defaults = %+v", k)
	}
	_, err = Parse("k.yaml", strings.NewReader(base+`  - {name: p, rest_url: "http://jm:8081", region: primary, kubernetes: {in_cluster: true, namespace: flink, deployment: job}}
  - {name: d1, rest_url: "http://jm:8081", region: dr, kubernetes: {in_cluster: true, kubeconfig: `+kc+`, namespace: Flink_DR, deployment: "events job", use_state_snapshot: maybe}}
  - {name: d2, rest_url: "http://jm:8081", region: dr, kubernetes: {kubeconfig: /does/not/exist, namespace: flink, deployment: job}}
  - {name: d3, rest_url: "http://jm:8081", region: dr, kubernetes: {in_cluster: true, context: x, namespace: flink, deployment: job, use_state_snapshot: true}}
  - {name: d4, rest_url: "http://jm:8081", region: dr, kubernetes: {kubeconfig: kube.yaml, namespace: flink, deployment: job}}
  - {name: d5, rest_url: "http://jm:8081", region: dr, kubernetes: {namespace: flink, deployment: job}}
`))
	msg := fmt.Sprint(err)
	for _, want := range []string{
		`flink_targets[0].kubernetes: only a DR target restores through Kubernetes (region is "primary")`,
		`flink_targets[1].kubernetes: set kubeconfig or in_cluster, not both`,
		`flink_targets[1].kubernetes.namespace: "Flink_DR": want a Kubernetes namespace`,
		`flink_targets[1].kubernetes.deployment: "events job": want the FlinkDeployment's name`,
		`flink_targets[1].kubernetes.use_state_snapshot: "maybe": want auto, true or false`,
		`flink_targets[2].kubernetes.kubeconfig: cannot read /does/not/exist`,
		`flink_targets[3].kubernetes.context: a kubeconfig context; in_cluster has none`,
		`flink_targets[4].kubernetes.kubeconfig: "kube.yaml" is not an absolute path`,
		`flink_targets[5].kubernetes: set kubeconfig (a file path) or in_cluster: true`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing problem %q in:\n%s", want, msg)
		}
	}
	if n := strings.Count(msg, "\n") + 1; n != 9 {
		t.Errorf("%d problems, want 9:\n%s", n, msg)
	}
}

// metrics.per_partition unset exports the per-partition series of flows
// up to PerPartitionBound partitions; true for every flow, false for none;
// a misspelt key or a non-boolean value is refused rather than silently
// ignored.
func TestMetricsSetting(t *testing.T) {
	base := "clusters:\n  a: {bootstrap: [\"h:1\"]}\n  b: {bootstrap: [\"h:2\"]}\nflows:\n  - {source: a, target: b}\n"
	for _, tc := range []struct {
		yaml string
		want [2]bool // for PerPartitionBound partitions, and one more
		err  string
	}{
		{"", [2]bool{true, false}, ""},
		{"metrics: {per_partition: true}", [2]bool{true, true}, ""},
		{"metrics: {per_partition: false}", [2]bool{false, false}, ""},
		{"metrics: {per_partiton: true}", [2]bool{}, "field per_partiton not found"},
		{"metrics: {per_partition: maybe}", [2]bool{}, "cannot unmarshal"},
	} {
		c, err := Parse("m.yaml", strings.NewReader(base+tc.yaml))
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err = %v, want %q", tc.yaml, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.yaml, err)
		case [2]bool{c.Metrics.PerPartitionFor(PerPartitionBound), c.Metrics.PerPartitionFor(PerPartitionBound + 1)} != tc.want:
			t.Errorf("%q: per-partition series for %d and %d partitions: %v, want %v", tc.yaml, PerPartitionBound, PerPartitionBound+1,
				[2]bool{c.Metrics.PerPartitionFor(PerPartitionBound), c.Metrics.PerPartitionFor(PerPartitionBound + 1)}, tc.want)
		}
	}
}

func TestDrillAndObjectives(t *testing.T) {
	base := "clusters:\n  a: {bootstrap: [\"h:1\"]}\n  b: {bootstrap: [\"h:2\"]}\nflows:\n  - {source: a, target: b, objectives: {rpo: 1m, rto: 15m}}\n"
	c, err := Parse("d.yaml", strings.NewReader(base+"drill: {job_args: [\"--suffix\", \"-drill-{run}\", \"--group={group}\"]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if o := c.Flows[0].Objectives; o.RPO.D() != time.Minute || o.RTO.D() != 15*time.Minute {
		t.Fatalf("objectives %+v", o)
	}
	if c.Drill.Timeout.D() != 10*time.Minute || c.Drill.CleanupRetry.D() != 30*time.Second || len(c.Drill.JobArgs) != 3 {
		t.Fatalf("drill %+v", c.Drill)
	}
	for yaml, want := range map[string]string{
		"drill: {job_args: [\"--x={jobid}\"]}": "drill.job_args[0]",
		"drill: {timeout: -1s}":                "drill.timeout",
	} {
		if _, err := Parse("d.yaml", strings.NewReader(base+yaml+"\n")); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want a problem at %s", yaml, err, want)
		}
	}
	if _, err := Parse("d.yaml", strings.NewReader(strings.Replace(base, "rto: 15m", "rto: -15m", 1))); err == nil || !strings.Contains(err.Error(), "objectives.rto") {
		t.Errorf("negative RTO objective: %v", err)
	}
}

func TestSyncsPerPartition(t *testing.T) {
	base := "clusters:\n  a: {bootstrap: [\"h:1\"]}\n  b: {bootstrap: [\"h:2\"]}\nflows:\n  - {source: a, target: b}\n"
	for _, tc := range []struct {
		yaml string
		want int
		err  string
	}{
		{"", DefaultSyncsPerPartition, ""},
		{"retention: {syncs_per_partition: 16}", 16, ""},
		{"retention: {syncs_per_partition: -3}", 0, "retention.syncs_per_partition: must be at least 1"},
		{"retention: {syncs_per_partition: many}", 0, "cannot unmarshal"},
	} {
		c, err := Parse("r.yaml", strings.NewReader(base+tc.yaml))
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err = %v, want %q", tc.yaml, err, tc.err)
			}
			var ps Problems
			if errors.As(err, &ps) && len(ps) != 1 {
				t.Errorf("%q: %d problems, want 1: %v", tc.yaml, len(ps), err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.yaml, err)
		case c.Retention.SyncsPerPartition != tc.want:
			t.Errorf("%q: syncs_per_partition = %d, want %d", tc.yaml, c.Retention.SyncsPerPartition, tc.want)
		}
	}
}

// A Cluster Linking flow's primary REST API (for a failback): checked like
// DR's, the link name is the same on both ends, and a password file is read.
func TestClusterLinkPrimary(t *testing.T) {
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const head = `
clusters:
  a: {bootstrap: ["a:9092"]}
  b: {bootstrap: ["b:9092"]}
flows:
  - name: l
    kind: cluster-link
    source: a
    target: b
    cluster_link:
      rest_url: https://dr:8090/kafka
      cluster_id: lkc-dr
      link: dr-link
`
	c, err := Parse("ok.yaml", strings.NewReader(head+"      primary: {rest_url: https://primary:8090/kafka, cluster_id: lkc-primary, password_file: "+pw+"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Flow("l").ClusterLink.Primary; p.Link != "dr-link" || p.Password != "s3cret" || p.ClusterID != "lkc-primary" {
		t.Fatalf("primary %+v", p)
	}
	_, err = Parse("bad.yaml", strings.NewReader(head+"      primary: {rest_url: ftp://x, cluster_id: lkc-dr, link: other}\n"))
	for _, want := range []string{
		`flows[0] (l).cluster_link.primary.rest_url: "ftp://x" is not an http(s) URL`,
		`flows[0] (l).cluster_link.primary.link: "other": a bidirectional link has the same name on both ends ("dr-link")`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in %v", want, err)
		}
	}
	_, err = Parse("bad.yaml", strings.NewReader(head+"      primary: {rest_url: https://p/kafka, cluster_id: lkc-dr}\n"))
	if err == nil || !strings.Contains(err.Error(), `cluster_link.primary.cluster_id: "lkc-dr" is the DR cluster's id`) {
		t.Errorf("the DR cluster's id as the primary's: %v", err)
	}
	_, err = Parse("bad.yaml", strings.NewReader(head+"      primary: {rest_url: https://p/kafka}\n"))
	if err == nil || !strings.Contains(err.Error(), `cluster_link.primary.cluster_id: required: the primary cluster's id`) {
		t.Errorf("no cluster id: %v", err)
	}
}

// A flow's groups: list is read and each mistake in it is one problem.
func TestFlowGroups(t *testing.T) {
	c, err := Parse("g.yaml", strings.NewReader(`
clusters:
  a: {bootstrap: ["127.0.0.1:9092"]}
  b: {bootstrap: ["127.0.0.1:9093"]}
flows:
  - source: a
    target: b
    groups:
      - {name: billing, critical: true, reprocess_objective: 500}
      - {name: analytics}
`))
	if err != nil {
		t.Fatal(err)
	}
	f := c.Flows[0]
	if g := f.GroupNamed("billing"); g == nil || !g.Critical || g.ReprocessObjective != 500 {
		t.Fatalf("billing = %+v", g)
	}
	if g := f.GroupNamed("analytics"); g == nil || g.Critical || g.ReprocessObjective != 0 || f.GroupNamed("other") != nil {
		t.Fatalf("analytics = %+v", g)
	}
	_, err = Parse("bad.yaml", strings.NewReader(`
clusters:
  a: {bootstrap: ["127.0.0.1:9092"]}
  b: {bootstrap: ["127.0.0.1:9093"]}
flows:
  - name: x
    source: a
    target: b
    groups:
      - {name: billing, critical: true}
      - {name: billing}
      - {critical: false}
      - {name: " padded", reprocess_objective: -3}
`))
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("err = %v, want Problems", err)
	}
	msg := err.Error()
	for _, want := range []string{
		`flows[0] (x).groups[0] (billing).reprocess_objective: required for a critical group`,
		`flows[0] (x).groups[1] (billing).name: duplicate group "billing" in this flow`,
		`flows[0] (x).groups[2].name: required`,
		`flows[0] (x).groups[3] ( padded).name: " padded" has leading or trailing spaces`,
		`flows[0] (x).groups[3] ( padded).reprocess_objective: -3 is negative`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing problem %q in:\n%s", want, msg)
		}
	}
	if len(ps) != 5 {
		t.Errorf("got %d problems, want 5:\n%s", len(ps), msg)
	}
}
