package handlers

import (
	"github.com/drconsole/drconsole/clusterlink"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/views"
)

// The monitor's snapshot and the flow's configuration as the pages show
// them. The partition rows are model's, shared, not copied: a snapshot
// is never changed once published.

func flowConfigView(f *config.Flow) *views.FlowConfig {
	if f == nil {
		return nil
	}
	v := &views.FlowConfig{Name: f.Name, Source: f.Source, Target: f.Target, SourceAlias: f.SourceAlias, TargetAlias: f.TargetAlias,
		ReplicationPolicy: string(f.ReplicationPolicy), OffsetSyncsLocation: string(f.OffsetSyncsLocation), ClusterLinking: f.IsClusterLink(),
		ReverseOf: f.ReverseOf}
	if l := f.ClusterLink; l != nil {
		v.ClusterLink = &views.ClusterLink{Link: l.Link, ClusterID: l.ClusterID, RestURL: l.RestURL}
	}
	return v
}

func reachabilityView(r model.Reachability) views.Reachability {
	return views.Reachability{Checked: r.Checked, OK: r.OK, Since: r.Since, LastOK: r.LastOK, Err: r.Err}
}

func linkStatusView(l *flowstate.LinkStatus) *views.LinkStatus {
	if l == nil {
		return nil
	}
	v := &views.LinkStatus{LinkState: string(l.LinkState), LinkError: l.LinkError, Message: l.Message}
	for _, m := range l.Mirrors {
		v.Mirrors = append(v.Mirrors, mirrorTopicView(m))
	}
	return v
}

func mirrorTopicView(m clusterlink.MirrorTopic) views.MirrorTopic {
	return views.MirrorTopic{MirrorTopicName: m.MirrorTopicName, SourceTopicName: m.SourceTopicName, MirrorStatus: string(m.MirrorStatus),
		StateTime: m.StateTime(), NumPartitions: m.NumPartitions, TotalLag: m.TotalLag()}
}

func snapshotView(s *flowstate.FlowSnapshot) *views.FlowSnapshot {
	if s == nil {
		return nil
	}
	return &views.FlowSnapshot{Flow: flowConfigView(s.Flow), Topics: views.FlowTopics{OffsetSyncs: s.Topics.OffsetSyncs},
		At: s.At, Partitions: s.Partitions, RPOMs: s.RPOMs, RPOAtLeast: s.RPOAtLeast, RPOText: s.RPOText(),
		MaxLagMessages: s.MaxLagMessages, TotalLagMessages: s.TotalLagMessages, Unknown: s.Unknown, DataLost: s.DataLost,
		HeartbeatAge: s.HeartbeatAge, Status: s.Status, StatusSince: s.StatusSince, Reason: s.Reason,
		Source: reachabilityView(s.Source), Target: reachabilityView(s.Target), FiguresAt: s.FiguresAt, FiguresStale: s.FiguresStale, Bound: s.Bound,
		Late: s.Late, PerPartitionOff: s.PerPartitionOff, Ingest: s.Ingest, Link: linkStatusView(s.Link),
		LossSuspected: s.LossSuspected, AbortedInDR: s.AbortedInDR, LossIncidentsTotal: s.LossIncidentsTotal, LostOffsetsTotal: s.LostOffsetsTotal,
		FailedOver: s.FailedOver, Groups: s.Groups}
}
