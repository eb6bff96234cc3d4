package demo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// reverseMirror is a failback's reverse MirrorSourceTask, dr -> primary
// under the flow's identity policy: it copies the data topics' records
// from the offsets Connect was given (the failover's cut) to the same
// partitions on the primary, and writes the offset syncs MM2 would
// (mm2-offset-syncs.dr.internal on the primary, offset-syncs on the
// target like the forward flow). It runs only while its connector runs.
type reverseMirror struct {
	s          *Sandbox
	name       string // the connector's, in its Connect offsets
	syncsTopic string

	mu      sync.Mutex
	next    map[topicPartition]int64 // committed: the next DR offset to copy
	stop    context.CancelFunc       // nil while not running
	done    chan struct{}
	lastErr error
}

func newReverseMirror(s *Sandbox, name string) *reverseMirror {
	return &reverseMirror{s: s, name: name, syncsTopic: policy.OffsetSyncsTopic(TargetAlias), next: map[topicPartition]int64{}}
}

// positions are the committed next offsets.
func (r *reverseMirror) positions() map[topicPartition]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.next)
}

// setPositions replaces the committed offsets (PATCH, or DELETE with nil:
// every partition from its earliest offset). Only while stopped.
func (r *reverseMirror) setPositions(next map[topicPartition]int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.next = maps.Clone(next)
	if r.next == nil {
		r.next = map[topicPartition]int64{}
	}
}

// start runs the task until halt; starting a running one does nothing.
func (r *reverseMirror) start() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stop != nil {
		return
	}
	ctx, cancel := context.WithCancel(r.s.runCtx)
	r.stop, r.done, r.lastErr = cancel, make(chan struct{}), nil
	done := r.done
	r.s.goRun(func() {
		defer close(done)
		if err := r.run(ctx); err != nil && ctx.Err() == nil {
			r.mu.Lock()
			r.lastErr = err
			r.mu.Unlock()
			r.s.log.Warn("demo reverse mirror stopped", "err", err)
		}
	})
}

// halt stops the task and returns once it copies nothing more.
func (r *reverseMirror) halt() {
	r.mu.Lock()
	stop, done := r.stop, r.done
	r.stop, r.done = nil, nil
	r.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

func (r *reverseMirror) run(ctx context.Context) error {
	s := r.s
	dst, err := s.newClient("reverse-primary", s.PrimaryBootstrap(), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer s.closeClient(dst)
	hbTopic := policy.RemoteTopic(TargetAlias, heartbeatsTopic)
	for _, t := range []string{r.syncsTopic, hbTopic} {
		if err := ensureTopic(ctx, kadm.NewClient(dst), t); err != nil {
			return err
		}
	}
	drAdm, err := s.newClient("reverse-dr-setup", s.DRBootstrap())
	if err != nil {
		return err
	}
	details, err := kadm.NewClient(drAdm).ListTopics(ctx, Topics...)
	s.closeClient(drAdm)
	if err == nil {
		err = details.Error()
	}
	if err != nil {
		return fmt.Errorf("list dr topics: %w", err)
	}
	start := r.positions()
	assign := map[string]map[int32]kgo.Offset{}
	for _, t := range Topics {
		assign[t] = map[int32]kgo.Offset{}
		for p := range int32(len(details[t].Partitions)) {
			o := kgo.NewOffset().AtStart()
			if n, ok := start[topicPartition{t, p}]; ok {
				o = kgo.NewOffset().At(n)
			}
			assign[t][p] = o
		}
	}
	src, err := s.newClient("reverse-dr", s.DRBootstrap(), kgo.ConsumePartitions(assign), kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
	if err != nil {
		return err
	}
	defer s.closeClient(src)
	// Connect's offsets topic is the forward flow's, on DR: the Connect
	// cluster's one offset.storage.topic.
	offsets, err := s.newClient("reverse-dr-offsets", s.DRBootstrap(), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer s.closeClient(offsets)
	written := map[topicPartition]int64{}
	syncs := newSyncWriter()
	commit := time.NewTicker(commitInterval)
	defer commit.Stop()
	beat := time.NewTicker(heartbeatPeriod)
	defer beat.Stop()
	for ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, pollTimeout)
		fetches := src.PollRecords(pctx, maxBatch)
		cancel()
		var in []*kgo.Record
		next := r.positions()
		fetches.EachRecord(func(rec *kgo.Record) {
			if n, ok := next[topicPartition{rec.Topic, rec.Partition}]; !ok || rec.Offset >= n {
				in = append(in, rec)
			}
		})
		if len(in) > 0 {
			if err := r.copy(ctx, src, dst, syncs, in); err != nil && ctx.Err() == nil {
				s.log.Warn("demo reverse mirror: copy failed", "err", err)
			}
		}
		select {
		case <-commit.C:
			r.commitOffsets(ctx, offsets, written)
			r.writeSyncs(ctx, dst, syncs.takeAll())
		case <-beat.C:
			r.heartbeat(ctx, dst, hbTopic)
		default:
		}
	}
	return nil
}

// copy writes in to the primary; a partition's position moves past a
// record only once the primary acknowledged it, as Connect commits, and a
// partition whose write failed is read again from there.
func (r *reverseMirror) copy(ctx context.Context, src, dst *kgo.Client, syncs *syncWriter, in []*kgo.Record) error {
	out := make([]*kgo.Record, len(in))
	for i, rec := range in {
		out[i] = &kgo.Record{Topic: rec.Topic, Partition: rec.Partition, Key: rec.Key, Value: rec.Value,
			Headers: rec.Headers, Timestamp: rec.Timestamp}
	}
	var errs []error
	failed := map[topicPartition]bool{}
	results := produceAll(ctx, dst, out)
	r.mu.Lock()
	for i, err := range results {
		tp := topicPartition{in[i].Topic, in[i].Partition}
		if err != nil || failed[tp] {
			if !failed[tp] {
				errs = append(errs, fmt.Errorf("produce %s/%d: %w", tp.topic, tp.partition, err))
			}
			failed[tp] = true
			continue
		}
		syncs.record(tp, in[i].Offset, out[i].Offset)
		r.next[tp] = in[i].Offset + 1
	}
	if len(failed) > 0 {
		rewind(src, r.next, failed)
	}
	r.mu.Unlock()
	r.writeSyncs(ctx, dst, syncs.takeUrgent())
	return errors.Join(errs...)
}

// commitOffsets writes the positions that moved since the last commit
// (the first commit: those the connector was started at) to Connect's
// offsets topic, as MM2's source offsets of cluster dr.
func (r *reverseMirror) commitOffsets(ctx context.Context, cl *kgo.Client, written map[topicPartition]int64) {
	var recs []*kgo.Record
	var tps []topicPartition
	var nexts []int64
	for tp, next := range r.positions() {
		if w, ok := written[tp]; next <= 0 || ok && w == next {
			continue
		}
		o := model.ConnectOffset{Connector: r.name, Cluster: TargetAlias, Topic: tp.topic, Partition: tp.partition, LastOffset: next - 1}
		recs = append(recs, &kgo.Record{Topic: mm2.ConnectOffsetsTopic(SourceAlias), Partition: 0, Key: mm2.EncodeKey(o), Value: mm2.EncodeValue(o)})
		tps, nexts = append(tps, tp), append(nexts, next)
	}
	for i, err := range produceAll(ctx, cl, recs) {
		if err == nil {
			written[tps[i]] = nexts[i]
		} else if ctx.Err() == nil {
			r.s.log.Warn("demo reverse mirror: connect offset not written", "err", err)
		}
	}
}

// heartbeat writes what the reverse source copies of DR's heartbeats
// topic: the primary -> dr heartbeat connector's latest beat, under DR's
// alias on the primary. The sandbox emits it as it emits the primary's
// (traffic.go), whatever the forward connectors' state.
func (r *reverseMirror) heartbeat(ctx context.Context, dst *kgo.Client, topic string) {
	now := time.UnixMilli(time.Now().UnixMilli())
	hb := model.Heartbeat{SourceAlias: SourceAlias, TargetAlias: TargetAlias, EmittedMs: now.UnixMilli()}
	err := dst.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: 0, Key: mm2.EncodeKey(hb), Value: mm2.EncodeValue(hb), Timestamp: now}).FirstErr()
	if err != nil && ctx.Err() == nil {
		r.s.log.Debug("demo reverse mirror: heartbeat not written", "err", err)
	}
}

func (r *reverseMirror) writeSyncs(ctx context.Context, dst *kgo.Client, syncs []model.OffsetSync) {
	if len(syncs) == 0 {
		return
	}
	recs := make([]*kgo.Record, len(syncs))
	for i, s := range syncs {
		recs[i] = &kgo.Record{Topic: r.syncsTopic, Partition: 0, Key: mm2.EncodeKey(s), Value: mm2.EncodeValue(s)}
	}
	for _, err := range produceAll(ctx, dst, recs) {
		if err != nil && ctx.Err() == nil {
			r.s.log.Warn("demo reverse mirror: offset sync not written", "err", err)
		}
	}
}

// ensureTopic creates a compacted one-partition internal topic unless it
// exists (a second failback finds the first one's).
func ensureTopic(ctx context.Context, adm *kadm.Client, topic string) error {
	details, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return err
	}
	if d, ok := details[topic]; ok && d.Err == nil {
		return nil
	}
	return createTopic(ctx, adm, topic, 1, compacted())
}
