package monitor

import (
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// Ingester copies a flow's MM2 bookkeeping (offset syncs, checkpoints,
// replicated heartbeats, Connect positions) into SQLite, continuously.
//
// Each internal topic partition is consumed from the position stored with
// the last batch, and every batch is stored together with its new position
// in one transaction: after a crash or restart nothing is lost and nothing
// is stored twice. The history then survives the cluster it came from.
//
// Positions and records are stored with the incarnation of the topic they
// were read from (its topic id): a recreated or relocated topic restarts at
// offset 0 and must neither resume from the old topic's position nor have
// its records mistaken for ones already stored.
type Ingester struct {
	Flow       *config.Flow
	Topics     flowstate.FlowTopics
	Store      *storage.Store
	State      *MirrorState
	Log        *slog.Logger
	SourceOpts kafka.Options // how to reach the source cluster
	TargetOpts kafka.Options // how to reach the target cluster
	// Recheck is how often the topic layout is re-read (new partitions,
	// topics created after start-up); default 30s.
	Recheck time.Duration
	// MissingRecheck is how often it is re-read while one of the topics
	// does not exist yet (MM2 creates them lazily), so its records are read
	// as soon as it does; default 1s (one Metadata request).
	MissingRecheck time.Duration
}

// Run ingests until ctx is done.
func (in *Ingester) Run(ctx context.Context) {
	onSource, onTarget := []string{}, []string{in.Topics.Checkpoints, in.Topics.Heartbeats}
	if in.Topics.OffsetSyncsOnTarget {
		onTarget = append(onTarget, in.Topics.OffsetSyncs)
	} else {
		onSource = append(onSource, in.Topics.OffsetSyncs)
	}
	switch {
	case in.Topics.ConnectOffsets == "":
	case in.Topics.ConnectOffsetsOnSource:
		onSource = append(onSource, in.Topics.ConnectOffsets)
	default:
		onTarget = append(onTarget, in.Topics.ConnectOffsets)
	}
	done := make(chan struct{})
	if len(onSource) > 0 {
		go func() { defer func() { done <- struct{}{} }(); in.loop(ctx, "source", in.SourceOpts, onSource) }()
	} else {
		go func() { done <- struct{}{} }()
	}
	in.loop(ctx, "target", in.TargetOpts, onTarget)
	<-done
}

// loop consumes topics from one cluster, rebuilding the consumer when the
// layout changes or something fails, with a capped backoff.
func (in *Ingester) loop(ctx context.Context, cluster string, opts kafka.Options, topics []string) {
	backoff := time.Second
	for ctx.Err() == nil {
		err := in.consume(ctx, cluster, opts, topics)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			in.Log.Warn("ingestion paused", "flow", in.Flow.Name, "cluster", cluster, "err", err, "retry_in", backoff)
		} else {
			backoff = time.Second
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		if err != nil && backoff < 30*time.Second {
			backoff *= 2
		}
	}
}

// topicLayout is an existing topic's partitions and identity, and the
// partitions' leaders (-1: none known).
type topicLayout struct {
	ID      [16]byte
	Leaders []int32
}

// layout lists the existing partitions and topic ids of topics; a topic
// not created yet is left out (MM2 creates its topics lazily).
func layout(ctx context.Context, cl *kafka.Client, topics []string) (map[string]topicLayout, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	leaders, ids, err := kafka.TopicLayout(ctx, cl, topics)
	if err != nil {
		return nil, err
	}
	out := make(map[string]topicLayout, len(leaders))
	for t, ls := range leaders {
		out[t] = topicLayout{ID: ids[t], Leaders: ls}
	}
	return out, nil
}

func (in *Ingester) consume(ctx context.Context, cluster string, opts kafka.Options, topics []string) error {
	adm, err := kafka.NewClient(opts, nil)
	if err != nil {
		return err
	}
	defer adm.Close()
	parts, err := layout(ctx, adm, topics)
	if err != nil {
		return fmt.Errorf("listing %v: %w", topics, err)
	}
	recheck := in.Recheck
	if recheck == 0 {
		recheck = 30 * time.Second
	}
	if len(parts) < len(topics) {
		recheck = min(recheck, cmp.Or(in.MissingRecheck, time.Second))
	}
	if len(parts) == 0 {
		select { // nothing to read yet; look again later
		case <-ctx.Done():
		case <-time.After(recheck):
		}
		return nil
	}
	incs, err := in.incarnations(ctx, adm, cluster, parts)
	if err != nil {
		return err
	}
	from := map[string]map[int32]int64{}
	for topic, l := range parts {
		from[topic] = map[int32]int64{}
		for p := range l.Leaders {
			next, ok, err := in.Store.PositionIn(ctx, in.Flow.Name, topic, incs[topic], int32(p))
			if err != nil {
				return err
			}
			if !ok {
				next = kafka.FromStart
			}
			from[topic][int32(p)] = next
		}
	}
	tail, err := kafka.NewTail(opts, from)
	if err != nil {
		return err
	}
	defer tail.Close()
	deadline := time.Now().Add(recheck)
	for ctx.Err() == nil {
		pollCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		batches, err := tail.Poll(pollCtx, 50_000)
		cancel()
		if err != nil {
			return err
		}
		var storeErr error
		for _, b := range batches {
			// The broker answers by topic id: records of a topic recreated
			// since the layout was read belong to a new incarnation.
			if b.TopicID != ([16]byte{}) && b.TopicID != parts[b.Topic].ID && parts[b.Topic].ID != ([16]byte{}) {
				storeErr = errTopicRecreated
				break
			}
			if len(b.Records) > 0 {
				if storeErr = in.store(ctx, b.Topic, b.Partition, incs[b.Topic], b.Records); storeErr != nil {
					break
				}
			}
		}
		if errors.Is(storeErr, errTopicRecreated) {
			return nil // rebuild with the new incarnation
		}
		if storeErr != nil {
			return storeErr
		}
		if time.Now().After(deadline) {
			now, err := layout(ctx, adm, topics)
			if err == nil && !sameLayout(now, parts) {
				return nil // rebuild with the new partitions
			}
			deadline = time.Now().Add(recheck)
		}
	}
	return nil
}

var errTopicRecreated = errors.New("an internal topic was recreated")

func sameLayout(a, b map[string]topicLayout) bool {
	if len(a) != len(b) {
		return false
	}
	for t, l := range a {
		if l.ID != b[t].ID || len(l.Leaders) != len(b[t].Leaders) {
			return false
		}
	}
	return true
}

// incarnations resolves the incarnation of every topic in parts, recording
// a new one (and saying so) when a topic id was not seen before.
func (in *Ingester) incarnations(ctx context.Context, cl *kafka.Client, cluster string, parts map[string]topicLayout) (map[string]int64, error) {
	leaders := make(kafka.Leaders, len(parts))
	for t, l := range parts {
		leaders[t] = l.Leaders
	}
	var ends map[string]map[int32]int64
	if listed, err := kafka.ListOffsets(ctx, cl, leaders, kafka.EndOffset); err == nil {
		ends = map[string]map[int32]int64{}
		for t, ls := range leaders {
			for p := range ls {
				if o, ok := listed.Get(t, int32(p)); ok {
					if ends[t] == nil {
						ends[t] = map[int32]int64{}
					}
					ends[t][int32(p)] = o
				}
			}
		}
	}
	out := map[string]int64{}
	for t, l := range parts {
		id := ""
		if l.ID != ([16]byte{}) {
			id = hex.EncodeToString(l.ID[:])
		}
		inc, created, err := in.Store.ResolveIncarnation(ctx, in.Flow.Name, cluster, t, id, ends[t])
		if err != nil {
			return nil, err
		}
		if created && inc.Incarnation > 0 {
			level := slog.LevelWarn // a recreated or relocated topic: worth an operator's look
			if inc.Note == model.IncarnationFirstSeen {
				level = slog.LevelInfo
			}
			in.Log.Log(ctx, level, "new incarnation of an MM2 internal topic: reading it from its start", "flow", in.Flow.Name,
				"cluster", cluster, "topic", t, "topic_id", id, "incarnation", inc.Incarnation, "why", inc.Note)
		}
		out[t] = inc.Incarnation
	}
	return out, nil
}

// store decodes records of one internal topic partition and stores them
// with the position after the last one.
func (in *Ingester) store(ctx context.Context, topic string, partition int32, incarnation int64, recs []*kafka.Record) error {
	b := storage.Batch{Flow: in.Flow.Name, Topic: topic, Partition: partition, Incarnation: incarnation, NextOffset: recs[len(recs)-1].Offset + 1}
	var decodeErrs int64
	var lastErr string
	bad := func(r *kafka.Record, err error) {
		decodeErrs++
		lastErr = fmt.Sprintf("offset %d: %v", r.Offset, err)
	}
	heartbeats := map[[2]string]*model.Heartbeat{}
	connect := map[model.TP]model.ConnectOffset{}
	// Sized once: grown by append, a start-up's batches left about as much
	// garbage again as they held (600 MB at a million partitions).
	switch topic {
	case in.Topics.OffsetSyncs:
		b.Syncs = make([]model.OffsetSync, 0, len(recs))
	case in.Topics.Checkpoints:
		b.Checkpoints = make([]model.Checkpoint, 0, len(recs))
	}
	for _, r := range recs {
		if r.Value == nil {
			continue // a tombstone in a compacted topic: MM2 writes none
		}
		switch topic {
		case in.Topics.OffsetSyncs:
			s, err := mm2.DecodeOffsetSync(r.Key, r.Value)
			if err != nil {
				bad(r, err)
				continue
			}
			b.Syncs = append(b.Syncs, model.OffsetSync{Topic: s.Topic, Partition: s.Partition, Upstream: s.Upstream,
				Downstream: s.Downstream, LogOffset: r.Offset, RecordMs: r.Timestamp.UnixMilli(), Incarnation: incarnation})
		case in.Topics.Checkpoints:
			c, err := mm2.DecodeCheckpoint(r.Key, r.Value)
			if err != nil {
				bad(r, err)
				continue
			}
			b.Checkpoints = append(b.Checkpoints, model.Checkpoint{Group: c.Group, Topic: c.Topic, Partition: c.Partition,
				Upstream: c.Upstream, Downstream: c.Downstream, Metadata: c.Metadata, LogOffset: r.Offset, RecordMs: r.Timestamp.UnixMilli()})
		case in.Topics.Heartbeats:
			h, err := mm2.DecodeHeartbeat(r.Key, r.Value)
			if err != nil {
				bad(r, err)
				continue
			}
			k := [2]string{h.SourceAlias, h.TargetAlias}
			cur := heartbeats[k]
			if cur == nil {
				cur = &model.Heartbeat{SourceAlias: h.SourceAlias, TargetAlias: h.TargetAlias}
				heartbeats[k] = cur
			}
			cur.Count++
			cur.LogOffset = r.Offset
			cur.EmittedMs = max(cur.EmittedMs, h.EmittedMs)
		case in.Topics.ConnectOffsets:
			o, err := mm2.DecodeConnectOffset(r.Key, r.Value)
			if errors.Is(err, mm2.ErrNotSourceOffset) {
				continue
			}
			if err != nil {
				bad(r, err)
				continue
			}
			if o.Cluster != in.Flow.SourceAlias {
				continue // another flow sharing the Connect cluster
			}
			connect[model.TP{Topic: o.Topic, Partition: o.Partition}] = model.ConnectOffset{Topic: o.Topic, Partition: o.Partition,
				LastOffset: o.LastOffset, LogOffset: r.Offset, RecordMs: r.Timestamp.UnixMilli(), Incarnation: incarnation}
		}
	}
	for _, h := range heartbeats {
		b.Heartbeats = append(b.Heartbeats, *h)
	}
	for _, c := range connect {
		b.ConnectOffsets = append(b.ConnectOffsets, c)
	}
	if err := in.Store.Apply(ctx, b); err != nil {
		return err
	}
	in.State.apply(b)
	in.State.noteIngest(topic, int64(len(recs)), decodeErrs, lastErr, recs[len(recs)-1].Timestamp)
	if decodeErrs > 0 {
		in.Log.Warn("undecodable MM2 records skipped", "flow", in.Flow.Name, "topic", topic, "count", decodeErrs, "last", lastErr)
	}
	return nil
}
