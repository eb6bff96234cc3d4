package kafka

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/config"
)

// How a partition's replicated position was obtained.
const (
	// PositionConnect: MirrorSourceConnector's committed offset (+1), from
	// the Connect offsets topic. Exact, but only as fresh as the last
	// offset flush.
	PositionConnect = "connect offsets"
	// PositionEstimate: the newest offset sync plus the records the target
	// partition holds past it. A lower bound: each target record after the
	// sync stands for at least one source offset.
	PositionEstimate = "sync + DR end offset"
)

// PartitionLag is one source partition's replication state. Nil numbers are
// unknown and must be shown as unknown, never as 0.
type PartitionLag struct {
	Topic       string // source topic
	RemoteTopic string // its name in the target
	Partition   int32
	SourceStart *int64 // log-start offset in the source
	SourceEnd   *int64 // high watermark in the source
	TargetEnd   *int64 // high watermark of the remote partition
	// Replicated is the next source offset MM2 has yet to copy.
	Replicated *int64
	Method     string
	// LagMessages is SourceEnd - Replicated.
	LagMessages *int64
	// LagMs is the age of the oldest source record not yet replicated; 0
	// when caught up.
	LagMs *int64
	// DataLost: retention deleted source records MM2 never copied. Read
	// sets it when the source log start passed the replicated position;
	// the loss judge (loss.go) then keeps it only for a confirmed loss
	// and marks an undecided gap LossSuspected instead.
	DataLost      bool
	LossSuspected bool
	// AsOf is when the source offsets were read; Stale when that read was
	// not the latest refresh (cluster unreachable).
	AsOf  time.Time
	Stale bool
}

// LagReader computes per-partition lag for one flow. Per refresh it sends
// one Metadata and two ListOffsets requests per source broker (start and
// end), one ListOffsets per target broker, and one Fetch per source broker
// for the timestamps of the first unreplicated records (cached while a
// partition's position does not move).
type LagReader struct {
	Flow   *config.Flow
	Topics FlowTopics
	Source *kgo.Client
	Target *kgo.Client

	tsCache map[TP]tsEntry
}

type tsEntry struct {
	offset int64
	first  FirstRecord
}

// Reading is the result of one refresh.
type Reading struct {
	At         time.Time
	Partitions []PartitionLag
	SourceErr  error // the source cluster could not be read
	TargetErr  error // the target cluster could not be read
}

// Read refreshes lag. Cluster errors are reported in the Reading, not as an
// error, so a partial answer is still used.
func (r *LagReader) Read(ctx context.Context, pos positions, now time.Time) Reading {
	out := Reading{At: now}
	src, tgt := kadm.NewClient(r.Source), kadm.NewClient(r.Target)

	topics, err := r.sourceTopics(ctx, src)
	if err != nil {
		out.SourceErr = err
	}
	var starts, ends kadm.ListedOffsets
	if out.SourceErr == nil {
		names := topics.Names()
		if ends, err = src.ListEndOffsets(ctx, names...); err != nil && !partial(err) {
			out.SourceErr = fmt.Errorf("listing end offsets: %w", err)
		} else if starts, err = src.ListStartOffsets(ctx, names...); err != nil && !partial(err) {
			out.SourceErr = fmt.Errorf("listing start offsets: %w", err)
		}
	}
	if out.SourceErr != nil {
		return out
	}
	var remote []string
	for _, t := range topics.Names() {
		remote = append(remote, r.Topics.Policy.RemoteTopic(r.Flow.SourceAlias, t))
	}
	targetEnds, err := tgt.ListEndOffsets(ctx, remote...)
	if err != nil && !partial(err) {
		out.TargetErr = fmt.Errorf("listing DR end offsets: %w", err)
	}

	want := map[TP]int64{} // partitions needing the timestamp of a record
	for _, td := range topics.Sorted() {
		rt := r.Topics.Policy.RemoteTopic(r.Flow.SourceAlias, td.Topic)
		for _, pd := range td.Partitions.Sorted() {
			pl := PartitionLag{Topic: td.Topic, RemoteTopic: rt, Partition: pd.Partition, AsOf: now}
			pl.SourceStart = listed(starts, td.Topic, pd.Partition)
			pl.SourceEnd = listed(ends, td.Topic, pd.Partition)
			pl.TargetEnd = listed(targetEnds, rt, pd.Partition)
			r.position(&pl, pos)
			if pl.Replicated != nil && pl.SourceEnd != nil {
				lag := max(*pl.SourceEnd-*pl.Replicated, 0)
				pl.LagMessages = &lag
				if pl.SourceStart != nil && *pl.SourceStart > *pl.Replicated {
					pl.DataLost = true
				}
				if lag == 0 {
					zero := int64(0)
					pl.LagMs = &zero
				} else {
					from := *pl.Replicated
					if pl.SourceStart != nil && *pl.SourceStart > from {
						from = *pl.SourceStart // the oldest unreplicated record that still exists
					}
					want[TP{td.Topic, pd.Partition}] = from
				}
			}
			out.Partitions = append(out.Partitions, pl)
		}
	}
	r.lagMillis(ctx, topics, want, out.Partitions, now)
	return out
}

// partial reports a kadm error that still came with usable per-shard data.
func partial(err error) bool {
	var se *kadm.ShardErrors
	return errors.As(err, &se) && !se.AllFailed
}

func listed(l kadm.ListedOffsets, topic string, p int32) *int64 {
	o, ok := l.Lookup(topic, p)
	if !ok || o.Err != nil {
		return nil
	}
	v := o.Offset
	return &v
}

// sourceTopics lists the source topics the flow mirrors.
func (r *LagReader) sourceTopics(ctx context.Context, adm *kadm.Client) (kadm.TopicDetails, error) {
	all, err := adm.ListTopics(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing source topics: %w", err)
	}
	out := kadm.TopicDetails{}
	for name, td := range all {
		if td.Err != nil || IsInternalTopic(name) || name == "heartbeats" || !r.Flow.Topics.Matches(name) {
			continue
		}
		out[name] = td
	}
	return out, nil
}

// position fills Replicated and Method: the larger of the two lower bounds
// we have. Connect positions lag by up to offset.flush.interval.ms (60 s by
// default), which alone would report a healthy mirror as a minute behind.
func (r *LagReader) position(pl *PartitionLag, pos positions) {
	tp := TP{pl.Topic, pl.Partition}
	if c, ok := pos.connect[tp]; ok {
		v := c.LastOffset + 1
		pl.Replicated, pl.Method = &v, PositionConnect
	}
	if s, ok := pos.latestSync[tp]; ok && pl.TargetEnd != nil && *pl.TargetEnd >= s.Downstream {
		v := s.Upstream + (*pl.TargetEnd - s.Downstream)
		if pl.SourceEnd != nil && v > *pl.SourceEnd {
			v = *pl.SourceEnd // duplicates in the target cannot put it ahead of the source
		}
		if pl.Replicated == nil || v > *pl.Replicated {
			pl.Replicated, pl.Method = &v, PositionEstimate
		}
	}
}

// lagMillis fills LagMs for lagging partitions from the timestamp of the
// first unreplicated record, fetched once per position.
func (r *LagReader) lagMillis(ctx context.Context, topics kadm.TopicDetails, want map[TP]int64, parts []PartitionLag, now time.Time) {
	if r.tsCache == nil {
		r.tsCache = map[TP]tsEntry{}
	}
	ends := map[TP]int64{}
	for _, p := range parts {
		if p.SourceEnd != nil {
			ends[TP{p.Topic, p.Partition}] = *p.SourceEnd
		}
	}
	need := map[TP]int64{}
	for tp, off := range want {
		// A timestamp stays true while the position holds; "only markers
		// left" only while the end does too.
		if e, ok := r.tsCache[tp]; !ok || e.offset != off || (e.first.OnlyMarkers && e.first.HWM != ends[tp]) {
			need[tp] = off
		}
	}
	if len(need) > 0 {
		for tp, fr := range FetchTimestamps(ctx, r.Source, topics, need) {
			r.tsCache[tp] = tsEntry{need[tp], fr}
		}
	}
	for tp := range r.tsCache {
		if _, ok := want[tp]; !ok {
			delete(r.tsCache, tp) // caught up: forget
		}
	}
	for i := range parts {
		p := &parts[i]
		off, ok := want[TP{p.Topic, p.Partition}]
		if !ok {
			continue
		}
		e, ok := r.tsCache[TP{p.Topic, p.Partition}]
		switch {
		case !ok || e.offset != off:
		case e.first.Found:
			age := max(now.UnixMilli()-e.first.Ms, 0)
			p.LagMs = &age
		case e.first.OnlyMarkers && p.SourceEnd != nil && e.first.HWM == *p.SourceEnd && !p.DataLost:
			// Transaction markers are never copied: caught up.
			end, zero := *p.SourceEnd, int64(0)
			p.Replicated, p.LagMessages, p.LagMs = &end, &zero, &zero
			p.Method += " + markers"
		}
	}
}

// SortPartitions orders partitions by topic, then partition.
func SortPartitions(ps []PartitionLag) {
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].Topic != ps[j].Topic {
			return ps[i].Topic < ps[j].Topic
		}
		return ps[i].Partition < ps[j].Partition
	})
}
