package views

import (
	"time"

	"github.com/drconsole/drconsole/model"
)

// A flow as its pages show it, filled by handlers from the monitor's
// snapshot and the flow's configuration (handlers/viewmodel_flow.go).

// FlowConfig is what the pages show of a flow's configuration.
type FlowConfig struct {
	Name, Source, Target     string
	SourceAlias, TargetAlias string
	ReplicationPolicy        string
	OffsetSyncsLocation      string
	// ClusterLinking: a Confluent Cluster Linking flow, described by
	// ClusterLink; a MirrorMaker 2 flow otherwise.
	ClusterLinking bool
	ClusterLink    *ClusterLink
	// ReverseOf names the forward flow of a failback's reverse flow.
	ReverseOf string
}

// ClusterLink names a Cluster Linking flow's link.
type ClusterLink struct {
	Link, ClusterID, RestURL string
}

// FlowTopics are a flow's MM2 internal topics.
type FlowTopics struct {
	OffsetSyncs string
}

// Reachability is what is known about reaching a cluster.
type Reachability struct {
	Checked bool // at least one attempt was made
	OK      bool // the last attempt worked
	Since   time.Time
	LastOK  time.Time
	Err     string
}

// LinkStatus is what a Cluster Linking flow's page shows besides lag.
type LinkStatus struct {
	LinkState string
	LinkError string // "" or NO_ERROR when healthy
	Message   string
	Mirrors   []MirrorTopic
}

// MirrorTopic is one mirror topic of a cluster link.
type MirrorTopic struct {
	MirrorTopicName, SourceTopicName string
	MirrorStatus                     string
	StateTime                        time.Time
	NumPartitions                    int
	TotalLag                         int64
}

// FlowSnapshot is everything the pages show about a flow as of the last
// refresh; the monitor's comments on its FlowSnapshot say what each
// figure means.
type FlowSnapshot struct {
	Flow       *FlowConfig
	Topics     FlowTopics
	At         time.Time
	Partitions []model.PartitionLag
	RPOMs      *int64
	RPOAtLeast bool
	// RPOText is the RPO in words: "at least X" with the partitions of
	// unknown age named when it is only a lower bound.
	RPOText          string
	MaxLagMessages   *int64
	TotalLagMessages *int64
	Unknown          int
	DataLost         int
	HeartbeatAge     *time.Duration
	Status           model.FlowStatus
	StatusSince      time.Time
	Reason           string
	Source, Target   Reachability
	FiguresAt        time.Time
	FiguresStale     bool // the partitions' figures are an earlier read's
	Bound            string
	Late             *model.LateRefresh
	PerPartitionOff  string
	Ingest           []model.IngestStats
	Link             *LinkStatus
	LossSuspected    int
	AbortedInDR      int64 // records of aborted transactions MM2 copied to DR, at least
	// LossIncidentsTotal and LostOffsetsTotal count every loss incident
	// ever recorded and its lost offsets.
	LossIncidentsTotal int64
	LostOffsetsTotal   int64
	FailedOver         *model.FailedOver
	// Groups are the consumer groups' failover quality; nil for Cluster
	// Linking flows and before the first refresh.
	Groups *model.FlowGroups
}
