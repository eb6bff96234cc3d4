package flowstate

import (
	"fmt"
	"strings"
	"time"

	"github.com/drconsole/drconsole/clusterlink"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
)

// PartitionSampleEvery is how often the monitor writes per-partition lag
// to SQLite: the partition charts' resolution.
const PartitionSampleEvery = time.Minute

// FlowSnapshot is everything the pages and metrics show about a flow, as of
// the last refresh.
type FlowSnapshot struct {
	Flow   *config.Flow
	Topics FlowTopics
	At     time.Time // the refresh that produced it; zero before the first
	// Partitions are sorted by topic and partition.
	Partitions []model.PartitionLag
	TopicLags  []model.TopicLag
	// RPOMs is the largest LagMs over the partitions, counting a lower
	// bound (LagMsAtLeast) for a partition whose age is unknown; nil when no
	// partition has either.
	RPOMs *int64
	// RPOAtLeast: some partition's lag or age is not known exactly, so the
	// RPO is at least RPOMs, never "about".
	RPOAtLeast bool
	// UnknownAge names the partitions whose age is not known exactly (their
	// lag in messages may be): the ones RPOAtLeast is about.
	UnknownAge []model.TP
	// MaxLagMessages and TotalLagMessages are over partitions with known lag.
	MaxLagMessages   *int64
	TotalLagMessages *int64
	Unknown          int // partitions with unknown lag
	DataLost         int // partitions with a confirmed, unacknowledged loss
	HeartbeatAt      time.Time
	HeartbeatAge     *time.Duration
	Status           model.FlowStatus
	StatusSince      time.Time
	Reason           string
	Source, Target   model.Reachability
	// FiguresAt is when the read the figures rest on reached the clusters
	// (the refresh that last read both sides; for figures saved before a
	// restart, their own time): now minus it is their age. Zero: none.
	FiguresAt time.Time
	// FiguresStale: the partition figures are the last known ones, not
	// this refresh's (a cluster unreachable, the reads late, or saved
	// before a restart), so each is as of its own AsOf and a lower bound.
	FiguresStale bool
	// Bound, when set, says why the figures are only lower bounds ("at
	// least"): they rest on FiguresAt's read and a cluster has not answered
	// since (or its reads ran late), so records acked since are not in
	// them. RPOAtLeast is set with it and the status is never OK.
	Bound string
	// Late is set when this refresh's Kafka reads ran out of their deadline
	// while the cluster kept answering: the figures are the last known
	// ones, stale, and the status holds (never OK on them). Nil otherwise.
	Late *model.LateRefresh
	// PerPartitionOff says why /metrics leaves out this flow's
	// per-partition lag series (more partitions than the bound, or
	// metrics.per_partition: false); "" while they are exported.
	PerPartitionOff string
	// ReadTook is how long this refresh's Kafka reads took.
	ReadTook time.Duration
	Ingest   []model.IngestStats
	// Link is the last good view of a Cluster Linking flow's link and
	// mirrors; nil for MM2 flows.
	Link *LinkStatus
	// Groups are the failover quality of the flow's consumer groups
	// (configured or checkpointed, up to a cap), computed by this
	// refresh; nil for Cluster Linking flows, which translate nothing.
	Groups *model.FlowGroups

	// LossSuspected counts partitions whose source log start passed the
	// replicated position while MM2 may still copy the records (monitor/loss.go).
	LossSuspected int
	// AbortedInDR adds up the partitions' records of aborted transactions
	// MM2 copied to DR (a lower bound, as each partition's is).
	AbortedInDR int64
	// LossOpen are the flow's unacknowledged loss incidents, newest first;
	// the totals count every incident ever recorded and its lost offsets.
	LossOpen           []model.LossIncident
	LossIncidentsTotal int64
	LostOffsetsTotal   int64

	// FailedOver is set while the flow's failover is complete (DR active):
	// Status is then model.FlowStatusFailedOver (monitor/failedover.go).
	FailedOver *model.FailedOver
}

// FiguresAge is how old s's figures are at now: the age of the read they
// rest on (FiguresAt); nil when there are none.
func (s *FlowSnapshot) FiguresAge(now time.Time) *time.Duration {
	if s.FiguresAt.IsZero() {
		return nil
	}
	d := max(now.Sub(s.FiguresAt), 0)
	return &d
}

// RPO is the flow RPO as the status judges it.
func (s *FlowSnapshot) RPO() RPO {
	return RPO{Ms: s.RPOMs, AtLeast: s.RPOAtLeast, Unknown: s.UnknownAge, Bound: s.Bound}
}

// RPOText is the flow RPO for people: "at least X" with the partitions of
// unknown age named when it is only a lower bound.
func (s *FlowSnapshot) RPOText() string {
	return s.RPO().String()
}

// RPO is a flow RPO: exact, a lower bound (some partitions of
// unknown age, named), or unknown (ms nil).
type RPO struct {
	Ms      *int64
	AtLeast bool
	Unknown []model.TP
	Bound   string // why the figures are lower bounds besides unknown ages (FlowSnapshot.Bound)
}

// maxNamed is how many partitions of unknown age a reason names.
const maxNamed = 5

// String says the RPO for people: unknown, exact, or "at least" with
// why.
func (r RPO) String() string {
	switch {
	case r.Ms == nil && len(r.Unknown) == 0:
		return "unknown"
	case !r.AtLeast:
		return (time.Duration(*r.Ms) * time.Millisecond).String()
	}
	s := "unknown"
	if r.Ms != nil {
		s = "at least " + (time.Duration(*r.Ms) * time.Millisecond).String()
	}
	if len(r.Unknown) > 0 {
		s += "; age unknown for " + namePartitions(r.Unknown)
	}
	if r.Bound != "" {
		s += "; " + r.Bound
	}
	return s
}

func namePartitions(tps []model.TP) string {
	var b strings.Builder
	for i, tp := range tps {
		if i == maxNamed {
			fmt.Fprintf(&b, " and %d more", len(tps)-maxNamed)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s-%d", tp.Topic, tp.Partition)
	}
	return b.String()
}

// FlowTopics are the MM2 internal topics of a flow, derived the way MM2
// derives them unless the config names them.
type FlowTopics struct {
	Policy mm2.ReplicationPolicy
	// OffsetSyncs lives on the target when OffsetSyncsOnTarget, else on the
	// source cluster (MM2's default).
	OffsetSyncs         string
	OffsetSyncsOnTarget bool
	Checkpoints         string // on the target
	Heartbeats          string // replicated heartbeats, on the target
	ConnectOffsets      string // on the target; "" when unknown
	// ConnectOffsetsOnSource: a reverse flow's Connect positions, on the
	// cluster the forward workers use, its source (config.Flow.ReverseOf).
	ConnectOffsetsOnSource bool
}

// TopicsOf derives the internal topics of f.
func TopicsOf(f *config.Flow) FlowTopics {
	p := mm2.ReplicationPolicy{Identity: f.ReplicationPolicy == config.PolicyIdentity, Separator: f.Separator, LegacyInternalSeparator: f.LegacyInternalSeparator}
	t := FlowTopics{
		Policy:                 p,
		OffsetSyncsOnTarget:    f.OffsetSyncsLocation == config.SyncsOnTarget,
		Checkpoints:            or(f.CheckpointsTopic, p.CheckpointsTopic(f.SourceAlias)),
		Heartbeats:             or(f.HeartbeatsTopic, p.HeartbeatsTopic(f.SourceAlias)),
		ConnectOffsets:         f.ConnectOffsetsTopic,
		ConnectOffsetsOnSource: f.ReverseOf != "",
	}
	// The topic is named after the *other* cluster: the target alias when it
	// lives on the source, the source alias when it lives on the target.
	alias := f.TargetAlias
	if t.OffsetSyncsOnTarget {
		alias = f.SourceAlias
	}
	t.OffsetSyncs = or(f.OffsetSyncsTopic, p.OffsetSyncsTopic(alias))
	return t
}

// OwnOnSource says whether topic is one of the flow's bookkeeping topics
// that live on its source cluster. Only those: a source topic that merely
// shares a name with one on the target is still the source's data.
func (t FlowTopics) OwnOnSource(topic string) bool {
	return !t.OffsetSyncsOnTarget && topic == t.OffsetSyncs || t.ConnectOffsetsOnSource && topic == t.ConnectOffsets
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// LinkStatus is what a Cluster Linking flow's page shows besides lag.
type LinkStatus struct {
	LinkState clusterlink.LinkState
	LinkError string // "" or NO_ERROR when healthy
	Message   string
	Mirrors   []clusterlink.MirrorTopic
	// Problems are mirrors in a failed state (FAILED, LINK_FAILED,
	// SOURCE_UNAVAILABLE, ...): replication is broken for them whatever the
	// link state says (a link can stay ACTIVE with its source gone).
	Problems []string
}

// Unhealthy says why the link's state breaks replication, "" when it does not.
func (s *LinkStatus) Unhealthy() string {
	if s == nil {
		return ""
	}
	var why []string
	if s.LinkState != clusterlink.LinkActive {
		why = append(why, "link is "+string(s.LinkState))
	}
	if s.LinkError != "" && s.LinkError != clusterlink.LinkNoError {
		why = append(why, "link error "+s.LinkError+" "+s.Message)
	}
	why = append(why, s.Problems...)
	return strings.Join(why, "; ")
}
