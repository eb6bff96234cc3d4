// Package config reads and validates drconsole's YAML configuration file.
//
// Validation collects every problem instead of stopping at the first, so an
// operator fixes the file in one pass: each Problem names the file, the key
// and why it is wrong.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/drconsole/drconsole/safefile"
)

// Config is the whole file.
type Config struct {
	// Listen is the HTTP address, default 127.0.0.1:8080.
	Listen string `yaml:"listen"`
	// DataDir holds drconsole.db; default ./data.
	DataDir    string              `yaml:"data_dir"`
	Clusters   map[string]*Cluster `yaml:"clusters"`
	Flows      []*Flow             `yaml:"flows"`
	Thresholds Thresholds          `yaml:"thresholds"`
	// RefreshInterval is how often lag is recomputed; default 5s.
	RefreshInterval Duration `yaml:"refresh_interval"`
	// RefreshReadTimeout bounds the Kafka reads of one flow's refresh
	// (storage writes have deadlines of their own); default twice the
	// refresh interval, at least 10s. Reads that run out of it while the
	// cluster answers make the refresh late, not the cluster unreachable.
	RefreshReadTimeout Duration  `yaml:"refresh_read_timeout"`
	Retention          Retention `yaml:"retention"`
	Failover           Failover  `yaml:"failover"`
	// FlinkTargets are the Flink clusters the console may talk to (savepoint
	// catalog, restore). Only these: a form never names a URL.
	FlinkTargets []*FlinkTarget `yaml:"flink_targets"`
	// SavepointDirs are the directories the savepoint catalog scans for
	// `*/_metadata`: local (absolute paths) or, with S3 set, s3://bucket/prefix;
	// manual registration accepts only paths inside them.
	SavepointDirs []string `yaml:"savepoint_dirs"`
	// S3 lets the catalog read savepoints and checkpoints on S3-compatible
	// storage (s3://, s3a://, s3p:// paths); nil: such paths are listed but
	// their offsets are not read.
	S3 *S3 `yaml:"s3"`
	// Auth is how people sign in (config/auth.go).
	Auth Auth `yaml:"auth"`
	// AuditAnchor copies the audit log's head hash out of the database on
	// a schedule, so `audit verify --anchor` can show records removed from
	// the end.
	AuditAnchor AuditAnchor `yaml:"audit_anchor"`
	// Notifications tell people about failover runs and flow trouble
	// (config/notify.go).
	Notifications Notifications `yaml:"notifications"`
	// Metrics shapes GET /metrics.
	Metrics Metrics `yaml:"metrics"`
	// Drill shapes DR drills (config/drill.go).
	Drill Drill `yaml:"drill"`
	// MemoryLimit is the memory the console should live in (RSS), from
	// which Go's soft memory limit is derived (cli/memlimit.go); 0: the
	// container's cgroup limit when there is one, else DefaultMemoryLimit.
	// A garbage-collection target, never a cap: the console raises it
	// when its live heap needs more, rather than stall.
	MemoryLimit ByteSize `yaml:"memory_limit"`
}

// Metrics shapes GET /metrics. Per-topic aggregates are always exported;
// the per-partition kafka_mirror_lag_messages and kafka_mirror_lag_ms (two
// series per partition: 200k at 100k partitions) are what the design's
// alert rules select, so they are exported by default for every flow of at
// most PerPartitionBound partitions. PerPartition true exports them for
// every flow, false for none.
type Metrics struct {
	PerPartition *bool `yaml:"per_partition"`
	// AllowedHosts are host names besides auth.public_url's, localhost
	// and IP addresses that /metrics answers to (the host check refuses
	// others: a DNS-rebinding page must not read flow names and RPO), e.g.
	// the Service's DNS name a static Prometheus scrape config uses.
	AllowedHosts []string `yaml:"allowed_hosts"`
}

// PerPartitionBound is the most partitions a flow may have for its
// per-partition series to be exported when metrics.per_partition is unset.
const PerPartitionBound = 10_000

// PerPartitionFor says whether a flow of n partitions gets per-partition
// series.
func (m Metrics) PerPartitionFor(n int) bool {
	if m.PerPartition != nil {
		return *m.PerPartition
	}
	return n <= PerPartitionBound
}

// AuditAnchor is where the running console records the audit head: lines
// appended to File and/or a JSON POST to URL, every Interval (default 1h)
// when the head moved. Both empty: off.
type AuditAnchor struct {
	File     string   `yaml:"file"`
	URL      string   `yaml:"url"`
	Interval Duration `yaml:"interval"`
}

// Failover sets the approval gate of failover runs.
type Failover struct {
	// ApprovalTTL: an approval older than this no longer counts; default 30m.
	ApprovalTTL Duration `yaml:"approval_ttl"`
	// ApprovalsRequired is N of N-of-M: distinct approvers, none of them
	// the requester; default 1.
	ApprovalsRequired int `yaml:"approvals_required"`
	// BreakGlass lets a single operator run a plan with a mandatory
	// reason, loudly flagged in the audit log. Off by default.
	BreakGlass bool `yaml:"break_glass"`
	// PromoteMaxLag: stopping the mirror is refused while the flow's RPO is
	// above this, unless the primary is confirmed unreachable or the
	// operator overrides with a reason; default 30s.
	PromoteMaxLag Duration `yaml:"promote_max_lag"`
}

// S3 is the S3-compatible object store Flink writes savepoints to.
// Credentials are not configured here: they come from the standard AWS
// sources (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, ~/.aws/credentials,
// web identity on EKS, ECS or EC2 instance roles).
type S3 struct {
	// Endpoint is the service URL, e.g. https://s3.eu-west-1.amazonaws.com
	// or http://minio.storage:9000.
	Endpoint string `yaml:"endpoint"`
	// Region, e.g. eu-west-1; empty: asked of the service.
	Region string `yaml:"region"`
	// PathStyle puts the bucket in the path (MinIO, Ceph and most
	// self-hosted stores) instead of the host name (AWS).
	PathStyle bool `yaml:"path_style"`
}

// IsS3URI reports whether p is a path on S3 as Flink names them: s3://,
// s3a:// (Hadoop plugin) or s3p:// (Presto plugin).
func IsS3URI(p string) bool {
	i := strings.Index(p, "://")
	if i <= 0 {
		return false
	}
	switch strings.ToLower(p[:i]) {
	case "s3", "s3a", "s3p":
		return true
	}
	return false
}

// FlinkTarget is a Flink JobManager's REST endpoint.
type FlinkTarget struct {
	Name    string `yaml:"name"`
	RestURL string `yaml:"rest_url"`
	// Region is "primary" or "dr" (shown on screen; restore targets DR).
	Region Region `yaml:"region"`
	// Kubernetes, for a DR target run by the Flink Kubernetes Operator:
	// the runbook restores by patching its FlinkDeployment through the
	// Kubernetes API instead of running a jar through RestURL.
	Kubernetes *Kubernetes `yaml:"kubernetes"`
}

// Kubernetes is how the console reaches a FlinkDeployment: a kubeconfig
// file (and optionally one of its contexts) or, running in a pod, its
// service account (InCluster). The account needs deploy/rbac.yaml.
type Kubernetes struct {
	Kubeconfig string `yaml:"kubeconfig"`
	InCluster  bool   `yaml:"in_cluster"`
	Context    string `yaml:"context"`
	Namespace  string `yaml:"namespace"`
	Deployment string `yaml:"deployment"`
	// UseStateSnapshot registers the savepoint as a FlinkStateSnapshot
	// (operator 1.10+) before the redeploy: "auto" (the default) when the
	// API server serves that resource, "true" always, "false" never.
	UseStateSnapshot StateSnapshotUse `yaml:"use_state_snapshot"`
	// Timeout bounds following the redeploy until the job runs; default 10m.
	Timeout Duration `yaml:"timeout"`
}

// Cluster is how to reach one Kafka cluster.
type Cluster struct {
	Bootstrap []string `yaml:"bootstrap"`
	TLS       *TLS     `yaml:"tls"`
	SASL      *SASL    `yaml:"sasl"`
}

// TLS enables TLS to the brokers. An empty CAFile uses the system roots.
type TLS struct {
	CAFile             string `yaml:"ca_file"`
	CertFile           string `yaml:"cert_file"`
	KeyFile            string `yaml:"key_file"`
	ServerName         string `yaml:"server_name"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify"`
}

// SASL authenticates to the brokers.
type SASL struct {
	Mechanism SASLMechanism `yaml:"mechanism"`
	Username  string        `yaml:"username"`
	Password  string        `yaml:"password"`
	// PasswordFile is read at start-up instead of Password (secrets mounts).
	PasswordFile string `yaml:"password_file"`
}

// Flow is one replication flow source -> target: MirrorMaker 2 (the
// default) or a Confluent Cluster Link.
type Flow struct {
	Name string `yaml:"name"`
	// Kind is "mm2" (default) or "cluster-link".
	Kind FlowKind `yaml:"kind"`
	// ClusterLink describes the link for kind cluster-link.
	ClusterLink *ClusterLink `yaml:"cluster_link"`
	// Source and Target name entries of Clusters.
	Source string `yaml:"source"`
	Target string `yaml:"target"`
	// SourceAlias and TargetAlias are MM2's cluster aliases; default to the
	// cluster names.
	SourceAlias string `yaml:"source_alias"`
	TargetAlias string `yaml:"target_alias"`
	// ReplicationPolicy is "identity" or "default".
	ReplicationPolicy ReplicationPolicy `yaml:"replication_policy"`
	// Separator is replication.policy.separator, default ".".
	Separator string `yaml:"separator"`
	// LegacyInternalSeparator mirrors
	// replication.policy.internal.topic.separator.enabled=false.
	LegacyInternalSeparator bool   `yaml:"legacy_internal_separator"`
	Topics                  Topics `yaml:"topics"`
	// OffsetSyncsLocation is "source" (MM2's default) or "target".
	OffsetSyncsLocation SyncsLocation `yaml:"offset_syncs_location"`
	// The internal topic names; derived from the policy when empty.
	OffsetSyncsTopic string `yaml:"offset_syncs_topic"`
	CheckpointsTopic string `yaml:"checkpoints_topic"`
	HeartbeatsTopic  string `yaml:"heartbeats_topic"`
	// ConnectOffsetsTopic is the Connect offsets topic on the target holding
	// MirrorSourceConnector's positions, e.g. mm2-offsets.primary.internal
	// in dedicated mode. Empty: positions are estimated from syncs.
	ConnectOffsetsTopic string `yaml:"connect_offsets_topic"`
	// ConnectURL is the Kafka Connect REST API running this flow's MM2
	// connectors; empty for dedicated-mode MM2 (no REST: the failover step
	// is then a manual instruction the console verifies).
	ConnectURL string `yaml:"connect_url"`
	// Connectors are the MM2 connector names on ConnectURL; default
	// MirrorSourceConnector, MirrorCheckpointConnector, MirrorHeartbeatConnector.
	Connectors []string `yaml:"connectors"`
	// Objectives are what the flow is held to in the RPO report.
	Objectives Objectives `yaml:"objectives"`
	// Groups are consumer groups whose failover quality the console
	// reports (besides those MM2 checkpoints), some critical, with an
	// objective on the records they may reprocess (groups.go).
	Groups []Group `yaml:"groups"`
	// Switchover configures the flow's planned switchover (fence, verify,
	// catch up, then the failover's steps); nil: no switchover plan.
	Switchover *Switchover `yaml:"switchover"`
	// ReverseOf is set only on a failback's reverse flow DR -> primary,
	// which the console derives while its connectors run, never from
	// YAML: the name of the forward flow it reverses. The reverse flow's
	// Connect positions are then in ConnectOffsetsTopic on its source
	// (DR), the cluster the forward flow's Connect workers run against.
	ReverseOf string `yaml:"-"`
}

// Objectives are a flow's recovery objectives.
type Objectives struct {
	// RPO: the most data, in time, the flow may be behind; the RPO report
	// counts the share of time within it. Default: the warning lag.
	RPO Duration `yaml:"rpo"`
	// RTO: the longest a failover may take until the DR job processes
	// records; DR drills judge their achieved RTO against it. 0: none.
	RTO Duration `yaml:"rto"`
}

// ClusterLink is a Confluent cluster link as seen from the DR (destination)
// cluster's REST API v3.
type ClusterLink struct {
	// RestURL is the REST endpoint up to, not including, /v3: e.g.
	// https://dr-kafka:8090/kafka (Confluent Server or Cloud) or
	// http://rest-proxy:8082 (REST Proxy).
	RestURL   string `yaml:"rest_url"`
	ClusterID string `yaml:"cluster_id"`
	Link      string `yaml:"link"`
	// Username and Password: basic auth, or a Confluent Cloud API key and
	// secret. PasswordFile is read at start-up instead of Password.
	Username     string `yaml:"username"`
	Password     string `yaml:"password"`
	PasswordFile string `yaml:"password_file"`
	TLS          *TLS   `yaml:"tls"`
	// Primary is the primary cluster's REST API (rest_url, cluster_id,
	// credentials, tls; link left out: a bidirectional link has the same
	// name on both ends). Only a failback needs it: truncate-and-restore
	// and reverse-and-start are sent to the cluster whose topics become,
	// then stop being, mirrors.
	Primary *ClusterLink `yaml:"primary"`
}

// IsClusterLink reports a Cluster Linking flow.
func (f *Flow) IsClusterLink() bool { return f.Kind == FlowClusterLink }

// Topics selects the source topics a flow mirrors, as MM2's topic filter
// does (full-match regexes).
type Topics struct {
	Include []string `yaml:"include"`
	Exclude []string `yaml:"exclude"`

	include, exclude []*regexp.Regexp
}

// Thresholds turn lag into a status.
type Thresholds struct {
	Warning  LagThreshold `yaml:"warning"`
	Critical LagThreshold `yaml:"critical"`
	// HeartbeatTimeout: no new replicated heartbeat for this long means
	// replication is broken.
	HeartbeatTimeout Duration `yaml:"heartbeat_timeout"`
}

// LagThreshold fires when lag stays above Lag for For.
type LagThreshold struct {
	Lag Duration `yaml:"lag"`
	For Duration `yaml:"for"`
}

// DefaultSyncsPerPartition is retention.syncs_per_partition when unset:
// MM2's own OffsetSyncStore keeps 64 syncs per partition.
const DefaultSyncsPerPartition = 64

// Retention bounds what SQLite keeps.
type Retention struct {
	// SyncsFull: syncs younger than this are not thinned by time
	// (SyncsThinInterval); SyncsPerPartition still bounds them.
	SyncsFull Duration `yaml:"syncs_full"`
	// SyncsThinInterval: older syncs are thinned to about one per interval
	// per partition. The newest sync of a partition is always kept.
	SyncsThinInterval Duration `yaml:"syncs_thin_interval"`
	// SyncsPerPartition: at most this many syncs of any age are kept per
	// partition (exponentially spaced back from the newest, like MM2's 64
	// slots), plus what is always kept: the newest 16, the history
	// boundaries, and the syncs an undecided data-loss gap is judged from.
	// Bounds the sync index's memory and the disk it uses however busy a
	// partition is.
	SyncsPerPartition int `yaml:"syncs_per_partition"`
	// LagHistory: how long lag samples are kept: every flow sample and the
	// per-minute topic and partition rows.
	LagHistory Duration `yaml:"lag_history"`
	// RPOHistory: how long each flow's per-minute RPO rollups are kept (the
	// RPO report's history).
	RPOHistory Duration `yaml:"rpo_history"`
}

// Duration is a time.Duration written as "30s", "5m".
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// UnmarshalYAML parses Go duration syntax.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration (use e.g. 30s, 5m, 2h)", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the Go duration syntax.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// Problem is one thing wrong with a config file.
type Problem struct {
	File, Key, Why string
}

func (p Problem) Error() string { return fmt.Sprintf("%s: %s: %s", p.File, p.Key, p.Why) }

// Problems is every problem found; its Error lists them one per line.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}

// MaxFileSize bounds a config file: it is read whole.
const MaxFileSize = safefile.SmallLimit

// Load reads, defaults and validates the file at path. The error is a
// Problems value when the file was readable but wrong. Only a regular
// file of at most MaxFileSize is read: a FIFO or a device named by
// --config is refused, not waited on or read for ever.
func Load(path string) (*Config, error) {
	data, err := safefile.ReadFile(path, MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(path, bytes.NewReader(data))
}

// Parse is Load for an already open file; name is used in messages.
func Parse(name string, r io.Reader) (*Config, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("config: reading %s: %w", name, err)
	}
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true) // a misspelt key is an error, not a silent default
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return nil, Problems{{File: name, Key: "(file)", Why: strings.TrimPrefix(err.Error(), "yaml: ")}}
	}
	if err := c.Normalize(name); err != nil {
		return nil, err
	}
	return &c, nil
}

// readable checks that a file another library reads later (a kubeconfig,
// a TLS file) is a regular file of at most safefile.SmallLimit bytes, so
// that library never waits on a FIFO or reads a device; the error does not
// repeat the path.
func readable(p string) error {
	f, _, err := safefile.Open(p, safefile.SmallLimit)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return pe.Err
		}
		return err
	}
	return f.Close()
}

// Normalize fills in defaults and validates c; name is used in messages.
// Configs built in code (the demo) go through it too.
func (c *Config) Normalize(name string) error {
	c.applyDefaults()
	if ps := c.validate(name); len(ps) > 0 {
		return ps
	}
	return nil
}

func (c *Config) applyDefaults() {
	if c.Listen == "" {
		c.Listen = "127.0.0.1:8080"
	}
	if c.DataDir == "" {
		c.DataDir = "data"
	}
	t := &c.Thresholds
	setDefault(&t.Warning.Lag, 30*time.Second)
	setDefault(&t.Warning.For, 5*time.Minute)
	setDefault(&t.Critical.Lag, 2*time.Minute)
	setDefault(&t.Critical.For, 2*time.Minute)
	setDefault(&t.HeartbeatTimeout, 30*time.Second)
	setDefault(&c.RefreshInterval, 5*time.Second)
	setDefault(&c.RefreshReadTimeout, c.ReadTimeout())
	setDefault(&c.Retention.SyncsFull, 24*time.Hour)
	setDefault(&c.Retention.SyncsThinInterval, time.Hour)
	if c.Retention.SyncsPerPartition == 0 {
		c.Retention.SyncsPerPartition = DefaultSyncsPerPartition
	}
	setDefault(&c.Retention.LagHistory, 24*time.Hour)
	setDefault(&c.Retention.RPOHistory, 90*24*time.Hour)
	c.Auth.ApplyDefaults()
	c.Notifications.applyDefaults()
	setDefault(&c.AuditAnchor.Interval, time.Hour)
	setDefault(&c.Failover.ApprovalTTL, 30*time.Minute)
	setDefault(&c.Failover.PromoteMaxLag, 30*time.Second)
	c.Drill.applyDefaults()
	if c.Failover.ApprovalsRequired == 0 {
		c.Failover.ApprovalsRequired = 1
	}
	for _, ft := range c.FlinkTargets {
		if ft != nil && ft.Kubernetes != nil {
			if ft.Kubernetes.UseStateSnapshot == "" {
				ft.Kubernetes.UseStateSnapshot = StateSnapshotAuto
			}
			setDefault(&ft.Kubernetes.Timeout, 10*time.Minute)
		}
	}
	for _, f := range c.Flows {
		if f == nil {
			continue
		}
		if f.SourceAlias == "" {
			f.SourceAlias = f.Source
		}
		if f.TargetAlias == "" {
			f.TargetAlias = f.Target
		}
		if f.Name == "" && f.SourceAlias != "" && f.TargetAlias != "" {
			f.Name = f.SourceAlias + "->" + f.TargetAlias
		}
		if f.Kind == "" {
			f.Kind = FlowMM2
		}
		if f.ReplicationPolicy == "" {
			f.ReplicationPolicy = PolicyDefault
			if f.Kind == FlowClusterLink {
				f.ReplicationPolicy = PolicyIdentity // mirror topics keep their names unless prefixed
			}
		}
		if f.OffsetSyncsLocation == "" {
			f.OffsetSyncsLocation = SyncsOnSource
		}
		if len(f.Topics.Include) == 0 {
			f.Topics.Include = []string{".*"}
		}
		if f.ConnectURL != "" && len(f.Connectors) == 0 {
			f.Connectors = []string{"MirrorSourceConnector", "MirrorCheckpointConnector", "MirrorHeartbeatConnector"}
		}
		if f.Switchover != nil {
			f.Switchover.applyDefaults()
		}
	}
}

// ReadTimeout is the deadline of a flow's Kafka reads per refresh:
// RefreshReadTimeout, or its default (twice the refresh interval, at least
// 10s) when unset, as in a config built in code.
func (c *Config) ReadTimeout() time.Duration {
	if c.RefreshReadTimeout > 0 {
		return c.RefreshReadTimeout.D()
	}
	return max(2*c.RefreshInterval.D(), 10*time.Second)
}

func setDefault(d *Duration, v time.Duration) {
	if *d == 0 {
		*d = Duration(v)
	}
}

var flowNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._>-]*$`)

func (c *Config) validate(file string) Problems {
	var ps Problems
	bad := func(key, format string, args ...any) {
		ps = append(ps, Problem{File: file, Key: key, Why: fmt.Sprintf(format, args...)})
	}
	if len(c.Clusters) == 0 {
		bad("clusters", "at least the source and target clusters are required")
	}
	for name, cl := range c.Clusters {
		key := "clusters." + name
		if cl == nil {
			bad(key, "empty cluster entry")
			continue
		}
		if len(cl.Bootstrap) == 0 {
			bad(key+".bootstrap", "list at least one broker host:port")
		}
		for i, b := range cl.Bootstrap {
			if !strings.Contains(b, ":") {
				bad(fmt.Sprintf("%s.bootstrap[%d]", key, i), "%q has no port (want host:port)", b)
			}
		}
		if t := cl.TLS; t != nil {
			for k, p := range map[string]string{"ca_file": t.CAFile, "cert_file": t.CertFile, "key_file": t.KeyFile} {
				if p != "" {
					if err := readable(p); err != nil {
						bad(key+".tls."+k, "cannot read %s: %v", p, err)
					}
				}
			}
			if (t.CertFile == "") != (t.KeyFile == "") {
				bad(key+".tls", "cert_file and key_file go together (client certificate)")
			}
		}
		if s := cl.SASL; s != nil {
			switch s.Mechanism {
			case SASLPlain, SASLScramSHA256, SASLScramSHA512:
			default:
				bad(key+".sasl.mechanism", "%q is not supported (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)", s.Mechanism)
			}
			if s.Username == "" {
				bad(key+".sasl.username", "required")
			}
			readSecret(&s.Password, s.PasswordFile, key+".sasl", "password", bad)
		}
	}
	if len(c.Flows) == 0 {
		bad("flows", "at least one replication flow is required")
	}
	seen := map[string]bool{}
	for i, f := range c.Flows {
		key := fmt.Sprintf("flows[%d]", i)
		if f == nil {
			bad(key, "empty flow entry")
			continue
		}
		if f.Name != "" {
			key = fmt.Sprintf("flows[%d] (%s)", i, f.Name)
		}
		if !flowNameRE.MatchString(f.Name) {
			bad(key+".name", "%q: use letters, digits and . _ - > (it appears in URLs and metrics)", f.Name)
		}
		if seen[f.Name] {
			bad(key+".name", "duplicate flow name %q", f.Name)
		}
		seen[f.Name] = true
		for k, cl := range map[string]string{"source": f.Source, "target": f.Target} {
			if cl == "" {
				bad(key+"."+k, "required: the name of a cluster under clusters")
			} else if c.Clusters[cl] == nil {
				bad(key+"."+k, "no cluster named %q under clusters", cl)
			}
		}
		if f.Source != "" && f.Source == f.Target {
			bad(key, "source and target are the same cluster %q", f.Source)
		}
		switch f.Kind {
		case FlowMM2:
			if f.ClusterLink != nil {
				bad(key+".cluster_link", "only for kind cluster-link")
			}
		case FlowClusterLink:
			cl := f.ClusterLink
			if cl == nil {
				bad(key+".cluster_link", "required for kind cluster-link (rest_url, cluster_id, link)")
				break
			}
			checkLinkEndpoint(bad, key+".cluster_link", cl, "DR")
			if cl.Link == "" {
				bad(key+".cluster_link.link", "required: the link name")
			}
			if pr := cl.Primary; pr != nil {
				checkLinkEndpoint(bad, key+".cluster_link.primary", pr, "primary")
				switch {
				case pr.Link != "" && pr.Link != cl.Link:
					bad(key+".cluster_link.primary.link", "%q: a bidirectional link has the same name on both ends (%q); leave it out", pr.Link, cl.Link)
				case pr.Primary != nil:
					bad(key+".cluster_link.primary.primary", "not allowed")
				case pr.ClusterID != "" && pr.ClusterID == cl.ClusterID:
					bad(key+".cluster_link.primary.cluster_id", "%q is the DR cluster's id", pr.ClusterID)
				}
				pr.Link = cl.Link
			}
		default:
			bad(key+".kind", "%q: want mm2 or cluster-link", f.Kind)
		}
		switch f.ReplicationPolicy {
		case PolicyIdentity, PolicyDefault:
		default:
			bad(key+".replication_policy", "%q: want identity or default", f.ReplicationPolicy)
		}
		switch f.OffsetSyncsLocation {
		case SyncsOnSource, SyncsOnTarget:
		default:
			bad(key+".offset_syncs_location", "%q: want source or target", f.OffsetSyncsLocation)
		}
		if f.ConnectURL != "" {
			if u, err := url.Parse(f.ConnectURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				bad(key+".connect_url", "%q is not an http(s) URL", f.ConnectURL)
			}
		}
		if f.Objectives.RPO < 0 {
			bad(key+".objectives.rpo", "%s is negative", f.Objectives.RPO.D())
		}
		if f.Objectives.RTO < 0 {
			bad(key+".objectives.rto", "%s is negative", f.Objectives.RTO.D())
		}
		f.validateGroups(key, bad)
		if f.Switchover != nil {
			f.Switchover.validate(key+".switchover", f, bad)
		}
		f.Topics.include = compileAll(f.Topics.Include, key+".topics.include", bad)
		f.Topics.exclude = compileAll(f.Topics.Exclude, key+".topics.exclude", bad)
	}
	t := c.Thresholds
	if t.Critical.Lag < t.Warning.Lag {
		bad("thresholds.critical.lag", "%s is below the warning lag %s", t.Critical.Lag.D(), t.Warning.Lag.D())
	}
	for k, d := range map[string]Duration{
		"thresholds.warning.lag": t.Warning.Lag, "thresholds.warning.for": t.Warning.For,
		"thresholds.critical.lag": t.Critical.Lag, "thresholds.critical.for": t.Critical.For,
		"thresholds.heartbeat_timeout": t.HeartbeatTimeout, "refresh_interval": c.RefreshInterval,
		"refresh_read_timeout": c.RefreshReadTimeout,
		"retention.syncs_full": c.Retention.SyncsFull, "retention.syncs_thin_interval": c.Retention.SyncsThinInterval,
		"retention.lag_history": c.Retention.LagHistory, "retention.rpo_history": c.Retention.RPOHistory,
	} {
		if d < 0 {
			bad(k, "must not be negative")
		}
	}
	if c.Retention.SyncsPerPartition < 1 {
		bad("retention.syncs_per_partition", "must be at least 1 (offset syncs kept per partition)")
	}
	if l := c.Retention.LagHistory; l >= 0 && l.D() < 2*time.Minute {
		bad("retention.lag_history", "%s is too short: per-minute RPO rollups are made from the samples of the last minutes (at least 2m)", l.D())
	}
	if c.Retention.RPOHistory >= 0 && c.Retention.RPOHistory < c.Retention.LagHistory {
		bad("retention.rpo_history", "%s is shorter than retention.lag_history %s: the per-minute RPO history must cover at least the raw samples",
			c.Retention.RPOHistory.D(), c.Retention.LagHistory.D())
	}
	if c.MemoryLimit != 0 && c.MemoryLimit < MinMemoryLimit {
		bad("memory_limit", "%s is too small: at least %s (SQLite's caches and the runtime alone need about 64MiB)", c.MemoryLimit, MinMemoryLimit)
	}
	if c.Failover.ApprovalsRequired < 1 {
		bad("failover.approvals_required", "must be at least 1 (a second operator approves)")
	}
	c.validateDrill(bad)
	seenTargets := map[string]bool{}
	for i, ft := range c.FlinkTargets {
		key := fmt.Sprintf("flink_targets[%d]", i)
		if ft == nil || ft.Name == "" {
			bad(key+".name", "required")
			continue
		}
		if seenTargets[ft.Name] {
			bad(key+".name", "duplicate Flink target %q", ft.Name)
		}
		seenTargets[ft.Name] = true
		if u, err := url.Parse(ft.RestURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad(key+".rest_url", "%q is not an http(s) URL", ft.RestURL)
		}
		if ft.Region != RegionPrimary && ft.Region != RegionDR {
			bad(key+".region", "%q: want primary or dr", ft.Region)
		}
		if k := ft.Kubernetes; k != nil {
			k.validate(key+".kubernetes", ft.Region, bad)
		}
	}
	for i, d := range c.SavepointDirs {
		key := fmt.Sprintf("savepoint_dirs[%d]", i)
		switch {
		case IsS3URI(d):
			if u, err := url.Parse(d); err != nil || u.Host == "" {
				bad(key, "%q: want s3://bucket/prefix", d)
			} else if c.S3 == nil {
				bad(key, "%q is on S3: set s3.endpoint so the console can read it", d)
			}
		case d == "" || !filepath.IsAbs(d):
			bad(key, "%q is not an absolute path (or an s3:// URI)", d)
		}
	}
	if c.S3 != nil {
		if u, err := url.Parse(c.S3.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			(u.Path != "" && u.Path != "/") {
			bad("s3.endpoint", "%q is not an http(s) URL without a path (e.g. https://s3.eu-west-1.amazonaws.com)", c.S3.Endpoint)
		}
	}
	if c.RefreshInterval.D() < 500*time.Millisecond {
		bad("refresh_interval", "%s is too short (at least 500ms)", c.RefreshInterval.D())
	}
	if d := c.RefreshReadTimeout.D(); d >= 0 && d < 100*time.Millisecond {
		bad("refresh_read_timeout", "%s is too short (at least 100ms)", d)
	}
	c.Auth.validate(bad)
	c.Notifications.validate(bad)
	for i, h := range c.Metrics.AllowedHosts {
		if h == "" || strings.ContainsAny(h, "/:@ ") {
			bad(fmt.Sprintf("metrics.allowed_hosts[%d]", i), "%q: want a bare host name (no scheme, port or path)", h)
		}
	}
	if a := c.AuditAnchor; a.URL != "" {
		if u, err := url.Parse(a.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("audit_anchor.url", "%q: want an http(s) URL", a.URL)
		}
	}
	if a := c.AuditAnchor; a.File != "" && filepath.Base(a.File) == "drconsole.db" {
		bad("audit_anchor.file", "%q: the anchor belongs outside the database it vouches for", a.File)
	}
	if c.AuditAnchor.Interval < Duration(time.Minute) {
		bad("audit_anchor.interval", "%s: at least 1m", c.AuditAnchor.Interval.D())
	}
	// Map iteration made the order random; sort for stable output.
	slices.SortStableFunc(ps, func(a, b Problem) int { return strings.Compare(a.Key, b.Key) })
	return ps
}

// k8sLabelRE is a DNS-1123 label (a namespace); k8sNameRE a DNS-1123
// subdomain (a resource name), checked for length apart.
var (
	k8sLabelRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	k8sNameRE  = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
)

func (k *Kubernetes) validate(key string, region Region, bad func(key, format string, args ...any)) {
	if region != RegionDR {
		bad(key, "only a DR target restores through Kubernetes (region is %q)", region)
	}
	switch {
	case k.InCluster && k.Kubeconfig != "":
		bad(key, "set kubeconfig or in_cluster, not both")
	case !k.InCluster && k.Kubeconfig == "":
		bad(key, "set kubeconfig (a file path) or in_cluster: true (the pod's service account)")
	case k.Kubeconfig != "" && !filepath.IsAbs(k.Kubeconfig):
		bad(key+".kubeconfig", "%q is not an absolute path", k.Kubeconfig)
	case k.Kubeconfig != "":
		if err := readable(k.Kubeconfig); err != nil {
			bad(key+".kubeconfig", "cannot read %s: %v", k.Kubeconfig, err)
		}
	}
	if k.InCluster && k.Context != "" {
		bad(key+".context", "a kubeconfig context; in_cluster has none")
	}
	if len(k.Namespace) > 63 || !k8sLabelRE.MatchString(k.Namespace) {
		bad(key+".namespace", "%q: want a Kubernetes namespace (lower-case letters, digits and '-', at most 63)", k.Namespace)
	}
	if len(k.Deployment) > 253 || !k8sNameRE.MatchString(k.Deployment) {
		bad(key+".deployment", "%q: want the FlinkDeployment's name (lower-case letters, digits, '-' and '.')", k.Deployment)
	}
	switch k.UseStateSnapshot {
	case "", StateSnapshotAuto, StateSnapshotAlways, StateSnapshotNever:
	default:
		bad(key+".use_state_snapshot", "%q: want auto, true or false", k.UseStateSnapshot)
	}
	if k.Timeout < 0 {
		bad(key+".timeout", "must not be negative")
	}
}

func compileAll(patterns []string, key string, bad func(key, format string, args ...any)) []*regexp.Regexp {
	var out []*regexp.Regexp
	for i, p := range patterns {
		// MM2 filters match the whole topic name.
		re, err := regexp.Compile("^(?:" + p + ")$")
		if err != nil {
			bad(fmt.Sprintf("%s[%d]", key, i), "%q is not a valid regular expression: %v", p, err)
			continue
		}
		out = append(out, re)
	}
	return out
}

// Matches reports whether the flow mirrors topic: included, not excluded.
func (t Topics) Matches(topic string) bool {
	for _, re := range t.exclude {
		if re.MatchString(topic) {
			return false
		}
	}
	for _, re := range t.include {
		if re.MatchString(topic) {
			return true
		}
	}
	return false
}

// Flow returns the flow called name, or nil.
func (c *Config) Flow(name string) *Flow {
	for _, f := range c.Flows {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// checkLinkEndpoint checks a Cluster Linking REST endpoint (the DR
// cluster's, or the primary's for a failback) and reads its password file.
func checkLinkEndpoint(bad func(key, format string, args ...any), key string, cl *ClusterLink, side string) {
	if u, err := url.Parse(cl.RestURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad(key+".rest_url", "%q is not an http(s) URL", cl.RestURL)
	}
	if cl.ClusterID == "" {
		bad(key+".cluster_id", "required: the %s cluster's id", side)
	}
	if cl.PasswordFile != "" {
		if cl.Password != "" {
			bad(key, "set password or password_file, not both")
		} else if pw, err := safefile.ReadFile(cl.PasswordFile, safefile.SecretLimit); err != nil {
			bad(key+".password_file", "cannot read: %v", errors.Unwrap(err))
		} else {
			cl.Password = strings.TrimRight(string(pw), "\r\n")
		}
	}
}
