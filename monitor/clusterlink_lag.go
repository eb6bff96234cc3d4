package monitor

import (
	"context"
	"fmt"
	"time"

	"github.com/drconsole/drconsole/clusterlink"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/model"
)

// ClusterLinkReader computes lag for a cluster-link flow: messages from the
// link's mirror_lags, time from the source record at the last fetched
// offset when the source cluster answers.
type ClusterLinkReader struct {
	Flow   *config.Flow
	REST   *clusterlink.Client
	Source *kafka.Client // may be unreachable
	ts     *LagReader    // reuses the timestamp cache and Fetch logic
}

// NewClusterLinkReader builds the REST client from the flow's config.
func NewClusterLinkReader(f *config.Flow, source *kafka.Client) (*ClusterLinkReader, error) {
	rest, err := clusterlink.ForFlow(f)
	if err != nil {
		return nil, err
	}
	return &ClusterLinkReader{Flow: f, Source: source, ts: &LagReader{Flow: f, Source: source}, REST: rest}, nil
}

// failedMirrorStates break replication of a mirror.
var failedMirrorStates = map[clusterlink.MirrorState]bool{clusterlink.MirrorFailed: true, clusterlink.MirrorLinkFailed: true,
	clusterlink.MirrorSourceUnavailable: true, clusterlink.MirrorLinkPaused: true}

// Read refreshes a cluster-link flow. TargetErr is the REST API failing
// (the link's view is what DR has); SourceErr only costs the time figures.
func (r *ClusterLinkReader) Read(ctx context.Context, now time.Time) (Reading, *flowstate.LinkStatus) {
	out := Reading{At: now}
	link, err := r.REST.Link(ctx)
	if err != nil {
		out.TargetErr = err
		return out, nil
	}
	mirrors, err := r.REST.Mirrors(ctx)
	if err != nil {
		out.TargetErr = err
		return out, nil
	}
	st := &flowstate.LinkStatus{LinkState: link.LinkState, LinkError: link.LinkError, Message: link.LinkErrorMessage, Mirrors: mirrors}
	var topics []string
	for _, m := range mirrors {
		if !r.Flow.Topics.Matches(m.SourceTopicName) {
			continue
		}
		if failedMirrorStates[m.MirrorStatus] {
			st.Problems = append(st.Problems, fmt.Sprintf("%s is %s", m.MirrorTopicName, m.MirrorStatus))
		}
		topics = append(topics, m.SourceTopicName)
		source, mirror := model.Intern(m.SourceTopicName), model.Intern(m.MirrorTopicName)
		for _, l := range m.MirrorLags {
			fetched, lag := l.LastSourceFetchOffset, max(l.Lag, 0)
			end := fetched + lag
			pl := model.PartitionLag{Topic: source, RemoteTopic: mirror, Partition: int32(l.Partition), AsOf: model.StampOf(now),
				Method: model.PositionClusterLink, Replicated: model.Known(fetched), SourceEnd: model.Known(end), LagMessages: model.Known(lag)}
			if lag == 0 {
				pl.LagMs = model.Known(0)
			}
			out.Partitions = append(out.Partitions, pl)
		}
	}
	SortPartitions(out.Partitions)
	want := r.lagging(out.Partitions)
	if r.Source != nil {
		// Also the source's reachability: a link can look ACTIVE with its
		// source gone.
		leaders, ids, err := kafka.TopicLayout(ctx, r.Source, topics)
		if err != nil {
			out.SourceErr = fmt.Errorf("source cluster: %w", err)
		} else {
			r.ts.lagMillis(ctx, mirroredOf(leaders, ids), want, out.Partitions, now)
		}
	}
	return out, st
}

// lagging lists the rows that are behind, from the first record not
// fetched, and keeps a watch of every partition read (where lagMillis
// keeps its timestamps), forgetting those no longer read and the
// timestamps of those caught up.
func (r *ClusterLinkReader) lagging(parts []model.PartitionLag) []lagging {
	r.ts.reads++
	var want []lagging
	for i := range parts {
		p := &parts[i]
		tp := model.TP{Topic: p.Topic.String(), Partition: p.Partition}
		w := r.ts.parts.get(tp)
		if w == nil {
			w = r.ts.parts.add(tp)
		}
		w.readIn = r.ts.reads
		if p.LagMessages.V > 0 {
			want = append(want, lagging{row: i, from: p.Replicated.V})
		} else {
			w.ts = nil
		}
	}
	r.ts.parts.forgetUnread(r.ts.reads)
	return want
}
