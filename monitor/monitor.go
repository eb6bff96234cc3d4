package monitor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/translation"
)

// noteReach records in r an attempt to reach a cluster at now.
func noteReach(r *model.Reachability, now time.Time, err error) {
	ok := err == nil
	if !r.Checked || ok != r.OK {
		r.Since = now
	}
	r.Checked, r.OK = true, ok
	if ok {
		r.LastOK, r.Err, r.Kind = now, "", model.ProblemOther
		return
	}
	r.Err, r.Kind = err.Error(), model.ProblemOther
	if ce, isCE := errors.AsType[*kafka.ClusterError](err); isCE {
		r.Err, r.Kind = ce.Raw.Error(), ce.Kind
	}
}

// Monitor ingests MM2 bookkeeping and refreshes lag for every flow.
type Monitor struct {
	cfg   *config.Config
	store *storage.Store
	log   *slog.Logger
	// Now is the clock; replaced in tests.
	Now func() time.Time

	clients map[string]*kafka.Client
	answers map[string]*kafka.Answers // when each cluster last answered
	opts    map[string]kafka.Options
	writer  *sampleWriter

	mu sync.RWMutex
	// flows are the configured flows, then those added by SetWatched; the
	// slice is replaced, never changed in place (flowList's copies).
	flows []*flowMonitor
	ready bool
	// failedOver are the flows whose failover completed (failedover.go).
	failedOver map[string]model.FailedOver
	// bg and bgWG are Run's, for ingesters started after it (SetWatched);
	// nil before Run.
	bg   context.Context
	bgWG *sync.WaitGroup
	// GroupCap is the most consumer groups whose failover quality a
	// refresh computes per flow; 0: GroupsPerFlow. Set before Run.
	GroupCap int
}

type flowMonitor struct {
	flow     *config.Flow
	topics   flowstate.FlowTopics
	state    *MirrorState
	reader   *LagReader
	ingester *Ingester          // MM2 flows
	link     *ClusterLinkReader // Cluster Linking flows
	linkOK   time.Time          // last good answer from the link's REST API
	linkSeen *flowstate.LinkStatus

	tracker        statusTracker
	source, target model.Reachability
	last           []model.PartitionLag // newest known partition values
	// lastStale: last is not the latest refresh's reading but the one
	// before an outage or a late read, or figures saved before a restart.
	// Such a table is an already published snapshot's, shared with its
	// readers: judgeLoss copies it before changing a row.
	lastStale         bool
	readAt            time.Time          // the refresh last's figures come from
	late              *model.LateRefresh // the current run of late refreshes
	perPartitionOff   bool               // the last snapshot's PerPartitionOff was set: logged when it changes
	reading           atomic.Int64       // wall-clock UnixNano when the running refresh began reading; 0 between refreshes (overdue.go)
	waitingTarget     atomic.Bool        // the running refresh waits on the target cluster, else on the source (overdue.go)
	lastPartitionSave time.Time          // the sample writer's (under its drain lock)
	lastSavedUnknown  int                // partitions of unknown lag in that save (same lock)
	snap              *flowstate.FlowSnapshot
	loss              lossJudge
	stop              context.CancelFunc         // ends its ingester; nil while none runs
	watched           bool                       // added by SetWatched, not configured
	drStarts          atomic.Pointer[drStarts]   // DR's log starts, read every GroupOffsetsEvery (groups.go)
	groupInputs       *translation.QualityInputs // the groups' stored offsets as last read (the refresh goroutine's; groups.go)
}

// NewMonitor connects (lazily: franz-go dials on first use) to every
// cluster and loads each flow's last known state from the store.
func NewMonitor(ctx context.Context, cfg *config.Config, store *storage.Store, log *slog.Logger) (*Monitor, error) {
	m := &Monitor{cfg: cfg, store: store, log: log, Now: time.Now, clients: map[string]*kafka.Client{},
		answers: map[string]*kafka.Answers{}, opts: map[string]kafka.Options{}}
	m.writer = newSampleWriter(m)
	for name, c := range cfg.Clusters {
		opts, err := kafka.ClientOptions(name, c, log)
		if err != nil {
			m.Close()
			return nil, err
		}
		ans := &kafka.Answers{}
		cl, err := kafka.NewClient(opts, ans)
		if err != nil {
			m.Close()
			return nil, fmt.Errorf("cluster %s: %w", name, err)
		}
		m.opts[name], m.clients[name], m.answers[name] = opts, cl, ans
	}
	for _, f := range cfg.Flows {
		fm, err := m.newFlowMonitor(ctx, f)
		if err != nil {
			m.Close()
			return nil, err
		}
		m.flows = append(m.flows, fm)
	}
	return m, nil
}

// newFlowMonitor builds the watch of flow f from what the store holds.
func (m *Monitor) newFlowMonitor(ctx context.Context, f *config.Flow) (*flowMonitor, error) {
	fm := &flowMonitor{flow: f, topics: flowstate.TopicsOf(f), state: NewMirrorState()}
	if err := fm.state.Load(ctx, m.store, f.Name); err != nil {
		return nil, fmt.Errorf("flow %s: loading history: %w", f.Name, err)
	}
	if f.IsClusterLink() {
		var err error
		if fm.link, err = NewClusterLinkReader(f, m.clients[f.Source]); err != nil {
			return nil, err
		}
	} else {
		fm.reader = &LagReader{Flow: f, Topics: fm.topics, Source: m.clients[f.Source], Target: m.clients[f.Target],
			OnAbortedCopied: saveAborted(m.store, f.Name, m.log), Waiting: fm.waitingTarget.Store}
		fm.ingester = &Ingester{Flow: f, Topics: fm.topics, Store: m.store, State: fm.state, Log: m.log,
			SourceOpts: m.opts[f.Source], TargetOpts: m.opts[f.Target]}
	}
	if err := fm.loadLastKnown(ctx, m.store); err != nil {
		return nil, err
	}
	fm.snap = &flowstate.FlowSnapshot{Flow: f, Topics: fm.topics, Status: model.FlowStatusUnknown, Reason: "starting",
		Partitions: fm.last, FiguresStale: fm.lastStale}
	return fm, nil
}

// loadLastKnown restores partition figures saved before a restart, marked
// stale with their own time.
func (fm *flowMonitor) loadLastKnown(ctx context.Context, store *storage.Store) error {
	samples, err := store.LatestPartitionSamples(ctx, fm.flow.Name)
	if err != nil {
		return err
	}
	for _, s := range samples {
		fm.last = append(fm.last, model.PartitionLag{Topic: model.Intern(s.Topic), Partition: s.Partition,
			RemoteTopic: model.Intern(fm.topics.Policy.RemoteTopic(fm.flow.SourceAlias, s.Topic)),
			SourceEnd:   model.FigureOf(s.SourceEnd), Replicated: model.FigureOf(s.Replicated), LagMessages: model.FigureOf(s.LagMessages),
			LagMs: model.FigureOf(s.LagMs), LagMsAtLeast: model.FigureOf(s.LagMsAtLeast),
			AsOf: model.StampOf(time.UnixMilli(s.AtMs)), Method: model.PositionSaved})
	}
	SortPartitions(fm.last)
	fm.lastStale = true // and shared: the first snapshot publishes them
	return nil
}

// Close closes the cluster clients.
func (m *Monitor) Close() {
	for _, cl := range m.clients {
		cl.Close()
	}
}

// Run ingests, refreshes and writes samples until ctx is done; it returns
// once every goroutine it started has (the sample writer after writing
// what it can within SampleDrainTimeout).
func (m *Monitor) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); m.writer.run(ctx) }()
	m.mu.Lock()
	m.bg, m.bgWG = ctx, &wg
	for _, fm := range m.flows {
		m.startIngest(fm)
	}
	m.mu.Unlock()
	wg.Add(1)
	go func() { defer wg.Done(); m.retentionLoop(ctx) }()
	wg.Add(1)
	go func() { defer wg.Done(); m.groupOffsetsLoop(ctx) }()
	wg.Add(1)
	go func() { defer wg.Done(); m.overdueLoop(ctx) }()
	t := time.NewTicker(m.cfg.RefreshInterval.D())
	defer t.Stop()
	for {
		m.Refresh(ctx)
		select {
		case <-ctx.Done():
			m.endIngests() // no wg.Add once Wait runs
			wg.Wait()
			return
		case <-t.C:
		}
	}
}

// Refresh recomputes every flow once and publishes the snapshots; their
// samples go to the sample writer (Run's), which writes them later: Flush
// waits for them. Flows are refreshed side by side: a flow whose cluster
// does not answer (its reads wait out refresh_read_timeout) does not delay
// the reads of the others.
func (m *Monitor) Refresh(ctx context.Context) {
	var wg sync.WaitGroup
	for _, fm := range m.flowList() {
		wg.Go(func() { m.refreshFlow(ctx, fm) })
	}
	wg.Wait()
	m.mu.Lock()
	m.ready = true
	m.mu.Unlock()
}

// Ready reports whether every flow has been refreshed at least once.
func (m *Monitor) Ready() bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.ready
}

// refreshFlow reads one flow's clusters within the read deadline
// (refresh_read_timeout), judges it, publishes its snapshot and queues its
// samples; the storage reads and writes it makes have deadlines of their
// own.
func (m *Monitor) refreshFlow(ctx context.Context, fm *flowMonitor) {
	now := m.Now()
	pos := fm.state.snapshot()
	// Started before the deadline is set: reads cut off by it took at
	// least the timeout, however late this goroutine is scheduled.
	started := time.Now() // wall clock: Now may be a test's
	rctx, cancel := context.WithTimeout(ctx, m.cfg.ReadTimeout())
	defer cancel()
	fm.reading.Store(started.UnixNano())
	var rd Reading
	broken := ""
	if fm.link != nil {
		rd, broken = m.readClusterLink(rctx, fm, now)
	} else {
		rd = fm.reader.Read(rctx, fm.state, now)
		for _, tp := range rd.Restarted {
			// The stored syncs translate the old log's offsets only.
			fm.state.Syncs.Restart(tp)
			m.log.Warn("source log restarted: new offset history", "flow", fm.flow.Name, "topic", tp.Topic, "partition", tp.Partition)
		}
	}
	took := time.Since(started)
	fm.reading.Store(0)
	late := m.lateSide(ctx, rctx, fm, rd, started)
	switch {
	case late != "": // the late side answered (and the source, if the target ran late)
		noteReach(&fm.source, now, nil)
		if late == "target" {
			noteReach(&fm.target, now, nil)
		}
	case fm.link == nil || rd.TargetErr == nil: // a failed link read never checked the source
		noteReach(&fm.source, now, rd.SourceErr)
	}
	// Up to date only when every cluster the figures rest on answered: with
	// DR unreadable, MM2 cannot copy and the lag only grows, so the last
	// figures are held as lower bounds as they are with the primary gone.
	upToDate := late == "" && rd.TargetErr == nil && (fm.link != nil || rd.SourceErr == nil)
	if late == "" && (fm.link != nil || rd.SourceErr == nil || rd.TargetErr != nil) {
		noteReach(&fm.target, now, rd.TargetErr) // the target was read (a source error skips it)
	}
	switch {
	case upToDate:
		fm.last, fm.readAt, fm.late, fm.lastStale = rd.Partitions, now, nil, false
	default:
		// Keep the last known values, stale; never invent zeros. The
		// snapshots share the table with the one that published it: the
		// flag is the snapshot's, so marking it copies nothing (232 MB
		// at a million partitions, twice live while readers hold the last).
		fm.lastStale = true
	}
	if late != "" {
		err := rd.SourceErr
		if late == "target" {
			err = rd.TargetErr
		}
		l := &model.LateRefresh{Side: late, Timeout: m.cfg.ReadTimeout(), Since: now, FiguresAt: fm.readAt, Err: err.Error()}
		if fm.late != nil {
			l.Since = fm.late.Since
		}
		fm.late = l
		m.log.Warn("refresh late: Kafka reads ran out of time while the cluster answered; showing the last figures, stale",
			"flow", fm.flow.Name, "side", late, "timeout", l.Timeout, "took", took, "err", err)
	} else {
		fm.late = nil
	}
	s := &flowstate.FlowSnapshot{Flow: fm.flow, Topics: fm.topics, At: now, Partitions: fm.last, FiguresAt: fm.readAt, FiguresStale: fm.lastStale,
		Source: fm.source, Target: fm.target, Late: fm.late, ReadTook: took, Ingest: pos.ingest, Link: fm.linkSeen}
	if s.FiguresAt.IsZero() {
		s.FiguresAt = model.OldestAsOf(fm.last) // saved before a restart
	}
	m.notePerPartition(fm, s)
	hb := s.HeartbeatAge
	switch {
	case fm.link != nil && !fm.linkOK.IsZero():
		// No MM2 heartbeats: the link's freshness stands in for them.
		fresh := time.Duration(0)
		hb = &fresh
	case pos.heartbeat != nil:
		s.HeartbeatAt = time.UnixMilli(pos.heartbeat.EmittedMs)
		age := max(now.Sub(s.HeartbeatAt), 0)
		s.HeartbeatAge, hb = &age, &age
	}
	sctx, scancel := context.WithTimeout(ctx, SampleWriteTimeout) // storage, not Kafka
	m.judgeLoss(sctx, fm, s, upToDate && fm.link == nil, now)
	s.Groups = m.groupQuality(sctx, fm, s)
	scancel()
	aggregate(s)
	fm.judgeStatus(s, upToDate, hb, broken, m.cfg.Thresholds, now)
	m.applyFailedOver(s)
	sort.Slice(s.Ingest, func(i, j int) bool { return s.Ingest[i].Topic < s.Ingest[j].Topic })

	// Queued before it is published: a Flush after a reader saw this
	// snapshot writes it.
	job := sampleJob{fm: fm, s: s, now: now}
	if !upToDate {
		// Stale per-partition figures are no new samples: the flow's
		// sample (its held status) is written, the partitions' are not.
		// Its RPO is unknown: the last figures may be smaller than the
		// truth by now, and history (the chart, the RPO report) must not
		// count a minute nobody measured as within.
		t := *s
		t.Partitions, t.UnknownAge = nil, nil
		t.RPOMs, t.RPOAtLeast, t.TotalLagMessages, t.MaxLagMessages = nil, false, nil, nil
		job.s = &t
	}
	m.writer.enqueue(job)

	m.mu.Lock()
	fm.snap = s
	m.mu.Unlock()
}

// notePerPartition says in s whether /metrics exports the flow's
// per-partition lag series, and logs when that changes (the bound on a
// flow's partitions switches them off by default).
func (m *Monitor) notePerPartition(fm *flowMonitor, s *flowstate.FlowSnapshot) {
	n := len(s.Partitions)
	switch mc := m.cfg.Metrics; {
	case mc.PerPartitionFor(n):
	case mc.PerPartition != nil:
		s.PerPartitionOff = "metrics.per_partition is false"
	default:
		s.PerPartitionOff = fmt.Sprintf("%d partitions, above the bound of %d (set metrics.per_partition: true to export them anyway)", n, config.PerPartitionBound)
	}
	if off := s.PerPartitionOff != ""; off == fm.perPartitionOff {
		return
	}
	fm.perPartitionOff = s.PerPartitionOff != ""
	if s.PerPartitionOff == "" {
		m.log.Info("per-partition lag series exported again", "flow", fm.flow.Name, "partitions", n)
		return
	}
	m.log.Warn("per-partition lag series (kafka_mirror_lag_ms, kafka_mirror_lag_messages) not exported: alert rules on them are silent; the flow series (kafka_mirror_rpo_ms) are the source of truth",
		"flow", fm.flow.Name, "why", s.PerPartitionOff)
}

// lateSide names the side ("source" or "target") whose reads failed
// because the read deadline passed although that cluster answered
// requests meanwhile, or a probe on a new connection right after: the
// refresh is late, the cluster reachable. "" when
// the refresh was not late: a cluster that did not answer at all (down,
// unreachable, refusing connections) is unreachable, as is one whose
// reads failed before the deadline. Cluster Linking flows read REST, not
// Kafka: never late.
func (m *Monitor) lateSide(ctx, rctx context.Context, fm *flowMonitor, rd Reading, started time.Time) string {
	if fm.link != nil || ctx.Err() != nil || !errors.Is(rctx.Err(), context.DeadlineExceeded) {
		return ""
	}
	side, cluster := "source", fm.flow.Source
	switch {
	case rd.SourceErr != nil:
	case rd.TargetErr != nil:
		side, cluster = "target", fm.flow.Target
	default:
		return ""
	}
	if m.answers[cluster].Since(started) {
		return side
	}
	// Nothing came back meanwhile (the reads may have needed no other
	// request): ask on a connection of its own.
	pctx, cancel := context.WithTimeout(ctx, min(m.cfg.ReadTimeout(), ProbeTimeout))
	defer cancel()
	if err := kafka.Probe(pctx, m.opts[cluster]); err != nil {
		return ""
	}
	return side
}

// ProbeTimeout bounds the probe of a cluster whose reads ran out of time
// without an answer meanwhile (at most refresh_read_timeout).
const ProbeTimeout = 3 * time.Second

// judgeStatus sets s's status: judged on its figures when they are up to
// date (both clusters read), else held (status.go: never OK) with its
// figures marked lower bounds (boundBy), whichever side did not answer.
// The one place a refresh decides a flow's status.
func (fm *flowMonitor) judgeStatus(s *flowstate.FlowSnapshot, upToDate bool, hb *time.Duration, broken string, th config.Thresholds, now time.Time) {
	if upToDate {
		s.Status, s.Reason = fm.tracker.update(now, s.RPO(), hb, broken, th)
	} else {
		why := staleReason(s, now)
		boundBy(s, why)
		s.Status, s.Reason = fm.tracker.hold(now, hb, broken, th, why)
	}
	s.StatusSince = fm.tracker.since
}

// boundBy marks s's figures as lower bounds, why saying so: they rest on
// the read at FiguresAt and records acked since are not in them.
func boundBy(s *flowstate.FlowSnapshot, why string) {
	s.Bound = why
	if s.RPOMs != nil || len(s.Partitions) > 0 {
		s.RPOAtLeast = true
	}
}

// staleReason says why a snapshot's figures are stale and from when: the
// time of the read they rest on, never an age (the text outlives the
// refresh that wrote it; pages and /metrics compute the age from
// FiguresAt when they show it).
func staleReason(s *flowstate.FlowSnapshot, now time.Time) string {
	why := "figures stale"
	switch {
	case s.Late != nil:
		why = fmt.Sprintf("%s: Kafka reads of the %s did not finish within %s", s.Late.Text(now), s.Late.Side, s.Late.Timeout)
	case s.Link == nil && s.Source.Checked && !s.Source.OK:
		why = "source cluster unreachable"
	case s.Target.Checked && !s.Target.OK:
		why = "target unreachable"
	}
	if !s.FiguresAt.IsZero() {
		why += "; figures are lower bounds from the read at " + s.FiguresAt.UTC().Format("15:04:05 UTC")
	}
	return why
}

// readClusterLink refreshes a Cluster Linking flow and says why replication
// is broken, if it is: a mirror in a failed state, the link down, or no
// answer from the link's REST API for longer than the heartbeat timeout.
func (m *Monitor) readClusterLink(ctx context.Context, fm *flowMonitor, now time.Time) (Reading, string) {
	rd, st := fm.link.Read(ctx, now)
	if rd.TargetErr == nil {
		fm.linkOK, fm.linkSeen = now, st
		return rd, st.Unhealthy()
	}
	timeout := m.cfg.Thresholds.HeartbeatTimeout.D()
	switch {
	case fm.linkOK.IsZero():
		return rd, "no answer yet from the cluster link REST API: " + rd.TargetErr.Error()
	case now.Sub(fm.linkOK) > timeout:
		return rd, fmt.Sprintf("no answer from the cluster link REST API for %s (timeout %s)", now.Sub(fm.linkOK).Round(time.Second), timeout)
	}
	return rd, fm.linkSeen.Unhealthy()
}

// aggregate computes the flow and topic figures from the partitions.
func aggregate(s *flowstate.FlowSnapshot) {
	var rpo, maxMsgs *int64
	var total int64
	haveTotal := false
	byTopic := map[string]*model.TopicLag{}
	var t *model.TopicLag
	for i := range s.Partitions {
		p := &s.Partitions[i]
		// A refresh's rows come topic by topic: the map is asked once per
		// topic, not once per partition (a million lookups a refresh).
		if t == nil || t.Topic != p.Topic.String() {
			if t = byTopic[p.Topic.String()]; t == nil {
				t = &model.TopicLag{Topic: p.Topic.String(), RemoteTopic: p.RemoteTopic.String()}
				byTopic[p.Topic.String()] = t
			}
		}
		t.Partitions++
		t.Stale = s.FiguresStale
		s.AbortedInDR += p.AbortedInDR
		if p.DataLost {
			t.DataLost++
			s.DataLost++
		}
		if !p.LagMessages.Known || !p.LagMs.Known {
			t.Unknown++
			s.Unknown++
			t.MaxLagAtLeast, s.RPOAtLeast = true, true
			s.UnknownAge = append(s.UnknownAge, model.TP{Topic: p.Topic.String(), Partition: p.Partition})
		}
		if p.LagMessages.Known {
			t.LagMessages += p.LagMessages.V
			maxMsgs = maxPtr(maxMsgs, p.LagMessages.V)
			total, haveTotal = total+p.LagMessages.V, true
		}
		switch {
		case p.LagMs.Known:
			t.MaxLagMs = maxPtr(t.MaxLagMs, p.LagMs.V)
			rpo = maxPtr(rpo, p.LagMs.V)
		case p.LagMsAtLeast.Known:
			t.MaxLagMs = maxPtr(t.MaxLagMs, p.LagMsAtLeast.V)
			rpo = maxPtr(rpo, p.LagMsAtLeast.V)
		}
	}
	for _, t := range byTopic {
		s.TopicLags = append(s.TopicLags, *t)
	}
	sort.Slice(s.TopicLags, func(i, j int) bool { return s.TopicLags[i].Topic < s.TopicLags[j].Topic })
	s.RPOMs, s.MaxLagMessages = rpo, maxMsgs
	if haveTotal {
		s.TotalLagMessages = &total
	}
}

func maxPtr(cur *int64, v int64) *int64 {
	if cur == nil || v > *cur {
		return &v
	}
	return cur
}

// save writes the flow sample every refresh and partition samples once a
// minute (10k partitions every 5 s would be 2k rows/s for little gain):
// storage keeps a row per topic and one per partition that is not caught up.
// A refresh that knows more partitions' lag than the last save is saved
// at once, so the figures kept for the next start are not left at
// "unknown" for a minute (the first refresh often precedes the first
// ingested position). Extra saves happen only while that count falls.
// The sample writer calls it (writer.go) and retries it when it fails, so
// every write must be safe to repeat after a partial one.
func (m *Monitor) save(ctx context.Context, fm *flowMonitor, s *flowstate.FlowSnapshot, now time.Time) error {
	var hb *int64
	if s.HeartbeatAge != nil {
		v := s.HeartbeatAge.Milliseconds()
		hb = &v
	}
	err := m.store.AddFlowSample(ctx, fm.flow.Name, storage.FlowSample{AtMs: now.UnixMilli(), RPOMs: s.RPOMs,
		RPOAtLeast: s.RPOAtLeast, LagMessages: s.TotalLagMessages, MaxLagMessages: s.MaxLagMessages, HeartbeatAgeMs: hb,
		Status: string(s.Status)})
	if err != nil {
		return fmt.Errorf("saving lag sample: %w", err)
	}
	due := now.Sub(fm.lastPartitionSave) >= flowstate.PartitionSampleEvery || s.Unknown < fm.lastSavedUnknown
	if s.Source.OK && len(s.Partitions) > 0 && due {
		samples := make([]storage.PartitionSample, 0, len(s.Partitions))
		// One array backs every known figure (five a partition at most, so
		// it never grows and the pointers stay valid): at a million
		// partitions a pointer allocated per figure was five million
		// objects a saved minute.
		vals := make([]int64, 0, 5*len(s.Partitions))
		ptr := func(f model.Figure) *int64 {
			if !f.Known {
				return nil
			}
			vals = append(vals, f.V)
			return &vals[len(vals)-1]
		}
		for _, p := range s.Partitions {
			samples = append(samples, storage.PartitionSample{Topic: p.Topic.String(), Partition: p.Partition, AtMs: now.UnixMilli(),
				SourceEnd: ptr(p.SourceEnd), Replicated: ptr(p.Replicated), LagMessages: ptr(p.LagMessages), LagMs: ptr(p.LagMs),
				LagMsAtLeast: ptr(p.LagMsAtLeast)})
		}
		if err := m.store.AddPartitionMinute(ctx, fm.flow.Name, now.UnixMilli(), samples); err != nil {
			return fmt.Errorf("saving partition lag samples: %w", err)
		}
		fm.lastPartitionSave, fm.lastSavedUnknown = now, s.Unknown
	}
	return nil
}

// GroupOffsetsEvery is how often the primary's consumer group offsets are
// recorded for MM2 flows.
const GroupOffsetsEvery = 30 * time.Second

// groupOffsetsLoop records the primary's group offsets while it answers.
func (m *Monitor) groupOffsetsLoop(ctx context.Context) {
	t := time.NewTicker(GroupOffsetsEvery)
	defer t.Stop()
	for {
		for _, fm := range m.flowList() {
			// Read reachability from the published snapshot: fm.source
			// belongs to the refresh goroutine.
			snap := m.Snapshot(fm.flow.Name)
			if fm.link != nil || snap == nil {
				continue
			}
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			if snap.Source.OK {
				if _, err := RecordPrimaryGroups(rctx, m.store, fm.flow.Name, m.clients[fm.flow.Source], fm.flow.Topics.Matches, m.Now()); err != nil && ctx.Err() == nil {
					m.log.Warn("recording primary group offsets", "flow", fm.flow.Name, "err", err)
				}
			}
			if snap.Target.OK {
				if err := m.readDRStarts(rctx, fm, snap); err != nil && ctx.Err() == nil {
					m.log.Warn("reading DR's log starts for the groups' figures", "flow", fm.flow.Name, "err", err)
				}
			}
			cancel()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// retentionLoop thins old syncs and prunes old lag samples every hour.
func (m *Monitor) retentionLoop(ctx context.Context) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		m.ApplyRetention(ctx)
	}
}

// ApplyRetention enforces the retention settings once.
func (m *Monitor) ApplyRetention(ctx context.Context) {
	now := m.Now()
	r := m.cfg.Retention
	for _, fm := range m.flowList() {
		// The bound's deletions leave SQLite with the time rule's, in the
		// same pass: disk stays bounded and a restart loads this index.
		doomed := fm.state.Syncs.ThinBounded(now.Add(-r.SyncsFull.D()).UnixMilli(), r.SyncsThinInterval.D().Milliseconds(), r.SyncsPerPartition, fm.loss.keepFrom())
		if err := m.store.DeleteSyncs(ctx, fm.flow.Name, doomed); err != nil {
			m.log.Error("thinning offset syncs", "flow", fm.flow.Name, "err", err)
			continue
		}
		fm.state.Syncs.Remove(doomed)
		if len(doomed) > 0 {
			m.log.Info("thinned offset syncs", "flow", fm.flow.Name, "deleted", len(doomed), "kept", fm.state.Syncs.Len())
		}
	}
	n, err := m.store.PruneLagSamples(ctx, now.Add(-r.LagHistory.D()).UnixMilli(), now.Add(-r.RPOHistory.D()).UnixMilli())
	if err != nil {
		m.log.Error("pruning lag history", "err", err, "deleted", n)
	} else if n > 0 {
		m.log.Info("pruned lag history", "deleted", n)
	}
}

// Snapshots returns every flow's snapshot: the configured flows in config
// order, then the watched ones (Watch) in the order they were added.
func (m *Monitor) Snapshots() []*flowstate.FlowSnapshot {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]*flowstate.FlowSnapshot, len(m.flows))
	for i, fm := range m.flows {
		out[i] = fm.snap
	}
	return out
}

// Thresholds are the lag thresholds that turn a flow's RPO into a status
// (the charts draw them).
func (m *Monitor) Thresholds() config.Thresholds { return m.cfg.Thresholds }

// DownSince is when flow's source (or target) cluster stopped answering,
// as the last refresh saw it; zero when it answers or flow is unknown.
func (m *Monitor) DownSince(flow string, target bool) time.Time {
	s := m.Snapshot(flow)
	switch {
	case s == nil:
		return time.Time{}
	case target:
		return s.Target.DownSince()
	}
	return s.Source.DownSince()
}

// Snapshot returns a flow's snapshot, or nil for an unknown flow.
func (m *Monitor) Snapshot(flow string) *flowstate.FlowSnapshot {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if fm := m.findLocked(flow); fm != nil {
		return fm.snap
	}
	return nil
}

// Clients are the console's clients of flow's primary (source) and DR
// (target) clusters, for reads through package kafka and the effects'
// writes; nil for an unknown flow. The primary's may be unreachable.
func (m *Monitor) Clients(flow string) (primary, dr *kafka.Client) {
	if fm := m.find(flow); fm != nil {
		return m.clients[fm.flow.Source], m.clients[fm.flow.Target]
	}
	return nil, nil
}

// Translator returns a group translator for flow over its live sync
// index and clusters; nil for an unknown flow.
func (m *Monitor) Translator(flow string) *translation.GroupTranslator {
	if fm := m.find(flow); fm != nil {
		return translation.NewGroupTranslator(translation.GroupTranslator{Flow: flow, Alias: fm.flow.SourceAlias, Policy: fm.topics.Policy, Index: fm.state.Syncs,
			Store: m.store}, m.clients[fm.flow.Source], m.clients[fm.flow.Target])
	}
	return nil
}

// Activity returns the emission time of the newest replicated heartbeat and
// how many syncs are held: both stop changing when MM2 stops.
func (m *Monitor) Activity(flow string) (heartbeatMs int64, syncs int) {
	if fm := m.find(flow); fm != nil {
		p := fm.state.snapshot()
		if p.heartbeat != nil {
			heartbeatMs = p.heartbeat.EmittedMs
		}
		return heartbeatMs, fm.state.Syncs.Len()
	}
	return 0, 0
}

// SyncSourceOf is flow's newest offset sync of source partition tp whose
// downstream offset is at or below downstream (mm2.SyncIndex.SourceOf).
func (m *Monitor) SyncSourceOf(flow string, tp model.TP, downstream int64) (model.OffsetSync, bool) {
	if fm := m.find(flow); fm != nil {
		return fm.state.Syncs.SourceOf(tp, downstream)
	}
	return model.OffsetSync{}, false
}

// SyncHistory returns the newest limit syncs of a partition (oldest first)
// and how many are stored in all; nil for an unknown flow.
func (m *Monitor) SyncHistory(flow string, tp model.TP, limit int) ([]model.OffsetSync, int) {
	if fm := m.find(flow); fm != nil {
		return fm.state.Syncs.History(tp, limit)
	}
	return nil, 0
}
