package demo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// policy is the demo flow's replication policy: identity names, with
// heartbeats still prefixed (primary.heartbeats).
var policy = mm2.ReplicationPolicy{Identity: true}

const (
	// commitInterval is offset.flush.interval.ms for the demo: Connect
	// offsets and delayed syncs are written this often.
	commitInterval = time.Second
	pollTimeout    = 200 * time.Millisecond // bounds how late a control change or commit is seen
	maxBatch       = 1000                   // records per copy round when unlimited
	connector      = "MirrorSourceConnector"
)

// mirror is an MM2 MirrorSourceTask plus its Connect offset commits: it
// copies the data topics and heartbeats from primary to dr, writes offset
// syncs to dr (offset-syncs.topic.location=target) and Connect offsets to
// mm2-offsets.primary.internal. A mirrorCheckpoints runs next to it.
type mirror struct {
	s   *Sandbox
	src *kgo.Client // primary, assigned partitions, read_uncommitted
	dst *kgo.Client // dr, manual partitioning

	syncsTopic, offsetsTopic string

	// Owned by the run goroutine.
	syncs     *syncWriter
	next      map[topicPartition]int64 // next upstream offset to copy
	committed map[topicPartition]int64 // last upstream offset in Connect offsets
	bucket    bucket

	histMu  sync.Mutex
	history map[topicPartition][]model.OffsetSync // syncs written, for checkpoints

	// posMu guards what the Connect stand-in reads and sets while the run
	// goroutine owns next and committed: a copy of committed, and where
	// the next round starts (an offsets change made while stopped).
	posMu     sync.Mutex
	published map[topicPartition]int64
	seek      map[topicPartition]int64

	checkpoints *mirrorCheckpoints
}

// newMirror creates dr's topics the way MM2's connectors do and the clients
// the mirror uses; nothing runs until run.
func (s *Sandbox) newMirror(ctx context.Context) (*mirror, error) {
	m := &mirror{
		s:            s,
		syncsTopic:   policy.OffsetSyncsTopic(SourceAlias),
		offsetsTopic: mm2.ConnectOffsetsTopic(SourceAlias),
		syncs:        newSyncWriter(),
		next:         make(map[topicPartition]int64),
		committed:    make(map[topicPartition]int64),
		history:      make(map[topicPartition][]model.OffsetSync),
	}
	srcAdmCl, err := s.newClient("mirror-setup", s.PrimaryBootstrap())
	if err != nil {
		return nil, err
	}
	// Mirror what exists upstream: same partition counts under the remote name.
	mirrored := append(slices.Clone(Topics), heartbeatsTopic)
	details, err := kadm.NewClient(srcAdmCl).ListTopics(ctx, mirrored...)
	if err == nil {
		err = details.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("demo mirror: list primary topics: %w", err)
	}
	m.dst, err = s.newClient("mirror-dr", s.DRBootstrap(), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return nil, err
	}
	adm := kadm.NewClient(m.dst)
	assign := make(map[string]map[int32]kgo.Offset)
	for _, t := range mirrored {
		n := int32(len(details[t].Partitions))
		cfg := s.retention()
		if t == heartbeatsTopic {
			cfg = compacted()
		}
		if err := createTopic(ctx, adm, policy.RemoteTopic(SourceAlias, t), n, cfg); err != nil {
			return nil, fmt.Errorf("demo mirror: dr: %w", err)
		}
		assign[t] = make(map[int32]kgo.Offset, n)
		for p := range n {
			assign[t][p] = kgo.NewOffset().AtStart()
			m.next[topicPartition{t, p}] = 0
		}
	}
	internal := []string{m.syncsTopic, policy.CheckpointsTopic(SourceAlias), m.offsetsTopic}
	for _, t := range internal {
		if err := createTopic(ctx, adm, t, 1, compacted()); err != nil {
			return nil, fmt.Errorf("demo mirror: dr: %w", err)
		}
	}
	// MM2 assigns partitions (no group) and reads uncommitted: transaction
	// markers are skipped, leaving gaps in the upstream offsets.
	m.src, err = s.newClient("mirror-primary", s.PrimaryBootstrap(),
		kgo.ConsumePartitions(assign),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()),
	)
	if err != nil {
		return nil, err
	}
	srcAdm := kadm.NewClient(srcAdmCl)
	m.checkpoints = &mirrorCheckpoints{m: m, srcAdm: srcAdm, topic: policy.CheckpointsTopic(SourceAlias),
		last: make(map[checkpointKey]model.Checkpoint)}
	return m, nil
}

// run is the task loop: copy what the rate allows, commit every second.
func (m *mirror) run(ctx context.Context) {
	commit := time.NewTicker(commitInterval)
	defer commit.Stop()
	for ctx.Err() == nil {
		rate, _ := m.s.ctl.mirror()
		n, wait := m.bucket.available(rate, time.Now())
		if n == 0 {
			m.wait(ctx, min(wait, pollTimeout))
			continue
		}
		if n < 0 || n > maxBatch {
			n = maxBatch
		}
		ran := m.s.ctl.round(func() {
			m.applySeek()
			select {
			case <-commit.C:
				if err := m.commit(ctx); err != nil && ctx.Err() == nil {
					m.s.log.Warn("demo mirror: commit failed", "err", err)
				}
			default:
			}
			copied, err := m.copyOnce(ctx, n)
			m.bucket.spend(copied)
			if err != nil && ctx.Err() == nil {
				m.s.log.Warn("demo mirror: copy failed", "err", err)
			}
		})
		if !ran {
			// Paused like a stopped task: no copy, no commit, no syncs.
			m.wait(ctx, pollTimeout)
		}
	}
}

// wait sleeps d, returning early when a control changes or on Close.
func (m *mirror) wait(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-m.s.ctl.changed:
	case <-t.C:
	}
}

// copyOnce polls up to n records from the primary, writes them to the same
// partitions in dr, and records the resulting syncs. While the primary is
// down the poll just comes back empty and the client keeps retrying from
// its own position.
func (m *mirror) copyOnce(ctx context.Context, n int) (int, error) {
	pctx, cancel := context.WithTimeout(ctx, pollTimeout)
	fetches := m.src.PollRecords(pctx, n)
	cancel()
	var errs []error
	fetches.EachError(func(t string, p int32, err error) {
		if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			errs = append(errs, fmt.Errorf("fetch %s/%d: %w", t, p, err))
		}
	})
	var in []*kgo.Record
	fetches.EachRecord(func(r *kgo.Record) {
		// Our own position is the truth: never copy a record twice.
		if r.Offset >= m.next[topicPartition{r.Topic, r.Partition}] {
			in = append(in, r)
		}
	})
	if len(in) == 0 {
		return 0, errors.Join(errs...)
	}
	out := make([]*kgo.Record, len(in))
	for i, r := range in {
		out[i] = &kgo.Record{
			Topic:     policy.RemoteTopic(SourceAlias, r.Topic),
			Partition: r.Partition,
			Key:       r.Key,
			Value:     r.Value,
			Headers:   r.Headers,
			Timestamp: r.Timestamp,
		}
	}
	failed := make(map[topicPartition]bool)
	copied := 0
	for i, err := range produceAll(ctx, m.dst, out) {
		tp := topicPartition{in[i].Topic, in[i].Partition}
		if err != nil || failed[tp] {
			// Stop this partition at its first failure and re-read from there.
			if !failed[tp] {
				errs = append(errs, fmt.Errorf("produce %s/%d: %w", tp.topic, tp.partition, err))
			}
			failed[tp] = true
			continue
		}
		// kgo sets Offset on the produced record from the produce response.
		m.syncs.record(tp, in[i].Offset, out[i].Offset)
		if m.s.opts.trace != nil {
			m.s.opts.trace(tp.topic, tp.partition, in[i].Offset, out[i].Offset)
		}
		m.next[tp] = in[i].Offset + 1
		copied++
		if tp.topic != heartbeatsTopic {
			m.s.mirrored.Add(1)
		}
	}
	if len(failed) > 0 {
		m.rewind(failed)
	}
	if err := m.writeSyncs(ctx, m.syncs.takeUrgent()); err != nil {
		errs = append(errs, err)
	}
	return copied, errors.Join(errs...)
}

// rewind sets the consumer back to the next uncopied offset of partitions
// whose produce failed, so nothing is skipped.
func (m *mirror) rewind(failed map[topicPartition]bool) { rewind(m.src, m.next, failed) }

// rewind sets consumer cl back to next of each failed partition.
func rewind(cl *kgo.Client, next map[topicPartition]int64, failed map[topicPartition]bool) {
	set := make(map[string]map[int32]kgo.EpochOffset)
	for tp := range failed {
		if set[tp.topic] == nil {
			set[tp.topic] = make(map[int32]kgo.EpochOffset)
		}
		set[tp.topic][tp.partition] = kgo.EpochOffset{Epoch: -1, Offset: next[tp]}
	}
	cl.SetOffsets(set)
}

// commit is Connect's offset commit followed by task.commit(): the last
// copied upstream offset of every partition that advanced, then the delayed
// syncs.
func (m *mirror) commit(ctx context.Context) error {
	var recs []*kgo.Record
	var advanced []topicPartition
	for tp, next := range m.next {
		last := next - 1
		if c, ok := m.committed[tp]; next == 0 || ok && c >= last {
			continue
		}
		o := model.ConnectOffset{Connector: connector, Cluster: SourceAlias, Topic: tp.topic, Partition: tp.partition, LastOffset: last}
		recs = append(recs, &kgo.Record{Topic: m.offsetsTopic, Partition: 0, Key: mm2.EncodeKey(o), Value: mm2.EncodeValue(o)})
		advanced = append(advanced, tp)
	}
	var errs []error
	for i, err := range produceAll(ctx, m.dst, recs) {
		if err != nil {
			errs = append(errs, fmt.Errorf("write connect offset of %s/%d: %w", advanced[i].topic, advanced[i].partition, err))
			continue // retried on the next commit
		}
		m.committed[advanced[i]] = m.next[advanced[i]] - 1
	}
	m.posMu.Lock()
	m.published = maps.Clone(m.committed)
	m.posMu.Unlock()
	return errors.Join(append(errs, m.writeSyncs(ctx, m.syncs.takeAll()))...)
}

// writeSyncs writes syncs, in order, to partition 0 of the offset-syncs
// topic and adds them to the history checkpoints translate against.
func (m *mirror) writeSyncs(ctx context.Context, syncs []model.OffsetSync) error {
	if len(syncs) == 0 {
		return nil
	}
	recs := make([]*kgo.Record, len(syncs))
	for i, s := range syncs {
		recs[i] = &kgo.Record{Topic: m.syncsTopic, Partition: 0, Key: mm2.EncodeKey(s), Value: mm2.EncodeValue(s)}
	}
	errs := produceAll(ctx, m.dst, recs)
	m.histMu.Lock()
	defer m.histMu.Unlock()
	for i, err := range errs {
		if err != nil {
			continue // a lost sync only makes translation less precise, never wrong
		}
		tp := topicPartition{syncs[i].Topic, syncs[i].Partition}
		h := append(m.history[tp], syncs[i])
		if len(h) > syncHistoryMax {
			h = slices.Delete(h, 0, len(h)-syncHistoryMax)
		}
		m.history[tp] = h
		m.s.syncs.Add(1)
	}
	return errors.Join(errs...)
}

// syncHistory returns a copy of the syncs written for tp.
func (m *mirror) syncHistory(tp topicPartition) []model.OffsetSync {
	m.histMu.Lock()
	defer m.histMu.Unlock()
	return slices.Clone(m.history[tp])
}

// committedOffsets is what the source has committed to Connect offsets:
// per partition, the last upstream offset copied, or the one before where
// an offsets change not yet applied starts it.
func (m *mirror) committedOffsets() map[topicPartition]int64 {
	m.posMu.Lock()
	defer m.posMu.Unlock()
	out := maps.Clone(m.published)
	if out == nil {
		out = map[topicPartition]int64{}
	}
	for tp, next := range m.seek {
		out[tp] = next - 1
	}
	return out
}

// startAt makes the next round copy each partition of next from that
// offset (Connect's PATCH /connectors/{name}/offsets on a stopped source):
// records below it are never copied, records from it on are, once the
// mirror runs.
func (m *mirror) startAt(next map[topicPartition]int64) {
	m.posMu.Lock()
	defer m.posMu.Unlock()
	if m.seek == nil {
		m.seek = map[topicPartition]int64{}
	}
	maps.Copy(m.seek, next)
}

// applySeek moves the source to the offsets startAt set, on the run
// goroutine, and counts them as committed (Connect stores what it is told).
func (m *mirror) applySeek() {
	m.posMu.Lock()
	seek := m.seek
	m.seek = nil
	m.posMu.Unlock()
	if len(seek) == 0 {
		return
	}
	set := make(map[string]map[int32]kgo.EpochOffset)
	for tp, next := range seek {
		if set[tp.topic] == nil {
			set[tp.topic] = make(map[int32]kgo.EpochOffset)
		}
		set[tp.topic][tp.partition] = kgo.EpochOffset{Epoch: -1, Offset: next}
		m.next[tp] = next
		m.committed[tp] = next - 1
	}
	m.src.SetOffsets(set)
	m.posMu.Lock()
	m.published = maps.Clone(m.committed)
	m.posMu.Unlock()
}
