package monitor

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/model"
)

// LagReader computes per-partition lag for one flow. Per refresh it sends
// one Metadata and two ListOffsets requests per source broker (start and
// end), one ListOffsets per target broker, and one Fetch per source broker
// for the timestamps of the first unreplicated records (cached while a
// partition's position does not move).
type LagReader struct {
	Flow   *config.Flow
	Topics flowstate.FlowTopics
	Source *kafka.Client
	Target *kafka.Client

	// OnAbortedCopied, when set, is told of each batch of an aborted
	// transaction once MM2 is past it (it is in DR).
	OnAbortedCopied func(tp model.TP, topicID [16]byte, b model.AbortedBatch)
	// Waiting, when set, is told which cluster Read is about to wait on
	// (true: the target), so a hung read is told from a slow one by the
	// side it waits on (overdue.go), not by the other side's answers.
	Waiting func(target bool)

	topicIDs map[string][16]byte // last seen source topic ids
	// topicGone: when a topic with a remembered id was last missing. Its id
	// is kept for forgetGoneTopicAfter, so a topic deleted in one refresh
	// and recreated by the next is still seen as a new log.
	topicGone map[string]time.Time
	parts     watchTable
	reads     int64 // Read calls so far: partitions not seen in the last one are forgotten
	aborted   AbortedLog
}

// forgetGoneTopicAfter is how long the id of a deleted source topic is
// remembered: longer than any delete-and-recreate takes, short enough that
// deleted topics do not pile up.
const forgetGoneTopicAfter = time.Hour

// partWatch is what the reader remembers of a source partition between
// refreshes.
type partWatch struct {
	lastEnd int64 // -1 before the first read
	readIn  int64 // the reader's read that last saw the partition
	// The end history records when the end offset was first seen at each
	// value (only changes kept): the record at offset o existed at the
	// first time the end was past o, a lower bound on its age. Its newest
	// entry is lastEnd, first seen at lastEndAt (when hasEnd); the older
	// ones, oldest first, are in seen, which only a lagging partition needs:
	// a caught-up one holds no array (a million at a million partitions).
	seen      []endSeen
	lastEndAt int64
	// restart is set while the partition's log restarted and MM2's position
	// on the new log is not known yet (or it is still catching up).
	restart *restartMark
	// ts is the first unreplicated record as last fetched, kept while the
	// position holds (lagMillis); nil for a partition caught up. A pointer:
	// only lagging partitions pay for one.
	ts *tsEntry
	// copied is the records DR holds past the newest sync's record,
	// counted in this refresh or kept while its span holds (countCopied).
	copied copiedCount
	held   bool // a partition watched (watchTable's slots between are not)
	hasEnd bool // the end history has a newest entry (lastEnd, lastEndAt)
}

// copiedCount is a count of DR records past a partition's newest sync.
// Kept in the partition's watch, not in maps by partition: at a million
// partitions those maps (and the one of spans built at every refresh)
// were ~100 MB of string-keyed entries and a few million lookups a
// refresh.
type copiedCount struct {
	n     int64
	span  kafka.Span // the span counted whole; zero for a partial count, read again next refresh
	known bool       // no count: no estimate
}

type endSeen struct {
	atMs, end int64
}

// restartMark freezes the positions MM2 had for the old log: only a
// position written after it (a different connect offset record or sync)
// can belong to the new log. Even such a record may carry an old-log
// position (Connect flushes offsets up to a minute late), and an MM2 that
// carries on from its old position never copies the new log's records
// below it, so a position only counts as far as the DR records copied
// since the mark account for it (see corroborated).
type restartMark struct {
	why           model.Name // why and since when, as the pages say it
	connect, sync bool       // whether one existed at the mark
	connectRec    [2]int64   // log offset, record time of the connect offset then
	syncRec       [2]int64   // log offset, record time of the newest sync then
	base          int64      // the log's start at the mark; its end for a truncation (same topic id)
	drEnd         int64      // DR end offset of the remote partition at the mark
	hasDR         bool       // drEnd is known
}

// maxSeen bounds the end history kept per partition; thinning it only
// weakens the lower bound, never makes it wrong. The entry the bound rests
// on (the first past MM2's position) is the first kept, so it stays exact
// while MM2 stands still; with MM2 stopped and every partition written to,
// a partition holds at most maxSeen older entries, 512 bytes.
const maxSeen = 32

type tsEntry struct {
	offset int64
	first  kafka.FirstRecord // Aborted dropped: added to the AbortedLog when fetched
}

// lagging is a partition of a refresh's table that is behind: its row and
// the offset of its oldest unreplicated record that still exists.
type lagging struct {
	row  int
	from int64
}

// Reading is the result of one refresh.
type Reading struct {
	At         time.Time
	Partitions []model.PartitionLag
	SourceErr  error // the source cluster could not be read
	TargetErr  error // the target cluster could not be read
	// Restarted lists partitions whose source log was found restarted in
	// this refresh: their stored syncs describe the old log.
	Restarted []model.TP
}

// Read refreshes lag. Cluster errors are reported in the Reading, not as an
// error, so a partial answer is still used.
func (r *LagReader) Read(ctx context.Context, src positionSource, now time.Time) Reading {
	out := Reading{At: now}
	r.waiting(false)
	topics, err := r.sourceTopics(ctx)
	if err != nil {
		out.SourceErr = r.explain(ctx, r.Source, r.Flow.Source, err)
	}
	leaders := topics.leaders
	// MM2's positions are taken before the offsets are read, as they were
	// when MM2 had copied at most that far: taken after, a position newer
	// than the end offsets read would make the lag smaller than it was at
	// any moment.
	taken := make([][]partPos, len(topics.names))
	total := 0
	for i, name := range topics.names {
		taken[i] = make([]partPos, len(leaders[name]))
		total += len(taken[i])
		for p := range taken[i] {
			taken[i][p] = takePosition(src, model.TP{Topic: name, Partition: int32(p)})
		}
	}
	var starts, ends kafka.Offsets
	if out.SourceErr == nil {
		if ends, err = kafka.ListOffsets(ctx, r.Source, leaders, kafka.EndOffset); err != nil {
			out.SourceErr = r.explain(ctx, r.Source, r.Flow.Source, fmt.Errorf("listing end offsets: %w", err))
		} else if starts, err = kafka.ListOffsets(ctx, r.Source, leaders, kafka.StartOffset); err != nil {
			out.SourceErr = r.explain(ctx, r.Source, r.Flow.Source, fmt.Errorf("listing start offsets: %w", err))
		}
	}
	if out.SourceErr != nil {
		return out
	}
	var remote []string
	for _, t := range topics.names {
		remote = append(remote, r.Topics.Policy.RemoteTopic(r.Flow.SourceAlias, t))
	}
	// DR's end is its last stable offset: under MM2 with exactly-once
	// support, records of a transaction still open (or left open by a
	// killed task) are not in DR for any reader that matters.
	var targetEnds kafka.Offsets
	r.waiting(true)
	targetLeaders, targetIDs, err := kafka.TopicLayout(ctx, r.Target, remote)
	if err == nil {
		targetEnds, err = kafka.ListOffsets(ctx, r.Target, targetLeaders, kafka.StableEnd)
	}
	if err != nil {
		out.TargetErr = r.explain(ctx, r.Target, r.Flow.Target, fmt.Errorf("listing DR end offsets: %w", err))
	}
	r.countCopied(ctx, topics.names, taken, targetLeaders, targetIDs, targetEnds)

	var want []lagging // partitions needing the timestamp of a record
	if r.topicIDs == nil {
		r.topicIDs, r.topicGone = map[string][16]byte{}, map[string]time.Time{}
	}
	r.reads++
	out.Partitions = make([]model.PartitionLag, 0, total) // one allocation: the snapshot holds it
	for i, name := range topics.names {
		rt := r.Topics.Policy.RemoteTopic(r.Flow.SourceAlias, name)
		// sameLog: the id is known and unchanged, so the log was not
		// recreated (an end that went back is a truncation of it).
		id := topics.ids[name]
		old, known := r.topicIDs[name]
		recreated := known && old != id && id != ([16]byte{})
		sameLog := known && old == id && id != ([16]byte{})
		r.topicIDs[name] = id
		// Each answer's offsets of this topic, found once, not once a row.
		topicStarts, topicEnds, topicTargetEnds := starts.Topic(name), ends.Topic(name), targetEnds.Topic(rt)
		watches := r.parts.topic(name, len(taken[i]))
		asOf, topicName, remoteName := model.StampOf(now), model.Intern(name), model.Intern(rt)
		for j := range taken[i] {
			p := int32(j)
			pl := model.PartitionLag{Topic: topicName, RemoteTopic: remoteName, Partition: p, AsOf: asOf}
			pl.SourceStart = listed(topicStarts, p)
			pl.SourceEnd = listed(topicEnds, p)
			pl.TargetEnd = listed(topicTargetEnds, p)
			tp := model.TP{Topic: name, Partition: p}
			w := &watches[j]
			if r.watch(&pl, w, taken[i][j], recreated, sameLog, now) {
				out.Restarted = append(out.Restarted, tp)
				r.aborted.Forget(tp) // the old log's aborted batches are not the new log's
			}
			if out.TargetErr == nil {
				emptyDRCopy(&pl, targetLeaders)
			}
			if !pl.Replicated.Known && pl.SourceEnd.Known && pl.SourceEnd.V == 0 {
				pl.Replicated, pl.Method = model.Known(0), model.PositionEmptyLog
			}
			if pl.Replicated.Known {
				var copied []model.AbortedBatch
				pl.AbortedInDR, copied = r.aborted.InDR(tp, pl.Replicated.V)
				for _, b := range copied {
					if r.OnAbortedCopied != nil {
						r.OnAbortedCopied(tp, id, b)
					}
				}
			}
			behind := false
			if pl.Replicated.Known && pl.SourceEnd.Known {
				lag := max(pl.SourceEnd.V-pl.Replicated.V, 0)
				pl.LagMessages = model.Known(lag)
				if pl.SourceStart.Known && pl.SourceStart.V > pl.Replicated.V {
					pl.DataLost = true
				}
				if lag == 0 {
					pl.LagMs = model.Known(0)
					w.caughtUp()
				} else {
					from := pl.Replicated.V
					if pl.Method == model.PositionRestartCopied && w.restart != nil {
						// The count says how many records of the new log are
						// missing, not which: MM2 may have skipped the oldest
						// ones. Their age is that of the new log's first record.
						from = min(from, w.restart.base)
					}
					if pl.SourceStart.Known && pl.SourceStart.V > from {
						from = pl.SourceStart.V // the oldest unreplicated record that still exists
					}
					want = append(want, lagging{row: len(out.Partitions), from: from})
					behind = true
				}
			}
			if !behind {
				w.ts = nil // caught up, or its position unknown: no timestamp to keep
			}
			out.Partitions = append(out.Partitions, pl)
		}
	}
	r.parts.forgetUnread(r.reads) // topic gone or no longer mirrored
	for t := range r.topicIDs {
		if _, ok := topics.ids[t]; ok {
			delete(r.topicGone, t)
			continue
		}
		if gone, ok := r.topicGone[t]; !ok {
			r.topicGone[t] = now
		} else if now.Sub(gone) > forgetGoneTopicAfter {
			delete(r.topicIDs, t)
			delete(r.topicGone, t)
		}
	}
	r.waiting(false)
	r.lagMillis(ctx, topics, want, out.Partitions, now)
	return out
}

func (r *LagReader) waiting(target bool) {
	if r.Waiting != nil {
		r.Waiting(target)
	}
}

// explain words a cluster error (kafka.Explain): a cluster that is gone
// reads as unreachable, not as a TLS question.
func (r *LagReader) explain(ctx context.Context, cl *kafka.Client, cluster string, err error) error {
	return kafka.Explained(ctx, cl, cluster, time.Time{}, err)
}

// listed is partition p's offset in a topic's answer, nil when unknown.
func listed(topic kafka.TopicOffsets, p int32) model.Figure {
	o, ok := topic.Get(p)
	return model.Figure{V: o, Known: ok}
}

// mirroredTopics is what a refresh keeps of the source's Metadata: the
// mirrored topics (names sorted), their ids and partition leaders; no
// replicas, ISRs or per-partition structs (tens of MB at 100k partitions).
type mirroredTopics struct {
	names   []string
	ids     map[string][16]byte
	leaders kafka.Leaders // partitions 0..n-1 of each topic
}

// mirroredOf is kafka.TopicLayout's answer as mirroredTopics.
func mirroredOf(leaders kafka.Leaders, ids map[string][16]byte) mirroredTopics {
	return mirroredTopics{names: slices.Sorted(maps.Keys(leaders)), ids: ids, leaders: leaders}
}

// MirroredTopics lists the topics on flow's source cluster (read through
// source) that the flow mirrors: what the monitor watches of it.
func MirroredTopics(ctx context.Context, flow *config.Flow, source *kafka.Client) ([]string, error) {
	t, err := (&LagReader{Flow: flow, Topics: flowstate.TopicsOf(flow), Source: source}).sourceTopics(ctx)
	return t.names, err
}

// sourceTopics lists the source topics the flow mirrors, with a Metadata
// request of its own: kadm's ListTopics answers from kgo's cache for up to
// MetadataMinAge, which can still hold a recreated topic's old id and so
// hide the recreation. One request per refresh; the offset and fetch
// requests after it go to the leaders it names.
func (r *LagReader) sourceTopics(ctx context.Context) (mirroredTopics, error) {
	out := mirroredTopics{ids: map[string][16]byte{}, leaders: kafka.Leaders{}}
	meta, err := kafka.Layout(ctx, r.Source, nil) // all topics
	if err != nil {
		return out, fmt.Errorf("listing source topics: %w", err)
	}
	for _, t := range meta {
		if t.Name == "" || t.Err != 0 || t.Internal {
			continue
		}
		name := t.Name
		// What MM2 never copies is not at risk: the flow's own topics on
		// the source (a reverse flow's Connect positions), internal topics
		// and cycles (a failback's reverse flow puts <dr>.heartbeats on the
		// primary). Heartbeats are copied but are not data: their age is
		// the flow's heartbeat, not its lag.
		p := r.Topics.Policy
		if r.Topics.OwnOnSource(name) || p.IsInternalTopic(name) || p.IsHeartbeatsTopic(name) || p.IsCycle(r.Flow.TargetAlias, name) || !r.Flow.Topics.Matches(name) {
			continue
		}
		out.names = append(out.names, name)
		out.ids[name] = t.ID
		out.leaders[name] = t.Leaders
	}
	slices.Sort(out.names)
	return out, nil
}

// position fills Replicated and Method: the larger of the two lower bounds
// we have. Connect positions lag by up to offset.flush.interval.ms (60 s by
// default), which alone would report a healthy mirror as a minute behind.
func (r *LagReader) position(pl *model.PartitionLag, pos partPos, mark *restartMark, copied copiedCount) {
	c, hasC, s, hasS := mark.usable(pos)
	if hasC {
		v := c.lastOffset + 1
		pl.Replicated, pl.Method = model.Known(v), model.PositionConnect
	}
	if hasS && pl.TargetEnd.Known && pl.TargetEnd.V >= s.downstream {
		// The sync's own record, when below DR's end, then one source
		// offset per committed record past it (never per DR offset: a
		// transaction marker takes one too).
		v, ok := s.upstream+(pl.TargetEnd.V-s.downstream), true
		if pl.TargetEnd.V > s.downstream+1 {
			v, ok = s.upstream+1+copied.n, copied.known
		}
		if !ok {
			return // DR's records past the sync could not be counted: no estimate
		}
		if pl.SourceEnd.Known && v > pl.SourceEnd.V {
			v = pl.SourceEnd.V // duplicates in the target cannot put it ahead of the source
		}
		if !pl.Replicated.Known || v > pl.Replicated.V {
			pl.Replicated, pl.Method = model.Known(v), model.PositionEstimate
		}
	}
}

// countCopied counts, for every partition whose newest sync has DR
// offsets past its record, the records a read_committed reader sees
// there (kafka.CountCommitted), reusing the count while the span holds.
// Partitions seen for the first time are watched from here on.
func (r *LagReader) countCopied(ctx context.Context, names []string, taken [][]partPos, leaders kafka.Leaders, ids map[string][16]byte, ends kafka.Offsets) {
	need := map[model.TP]kafka.Span{} // by remote partition
	for i, name := range names {
		rt := r.Topics.Policy.RemoteTopic(r.Flow.SourceAlias, name)
		topicEnds := ends.Topic(rt) // found once a topic, not once a partition
		watches := r.parts.topic(name, len(taken[i]))
		for j, pos := range taken[i] {
			w := &watches[j]
			end, ok := topicEnds.Get(int32(j))
			if !pos.hasSync || !ok || end <= pos.sync.downstream+1 {
				w.copied = copiedCount{} // no span to count
				continue
			}
			w.hold()
			// Kept: a whole count of the same span. A partial count or
			// another span's is read again (or, unanswered, no estimate).
			sp := kafka.Span{From: pos.sync.downstream + 1, To: end}
			if !w.copied.known || w.copied.span != sp {
				w.copied = copiedCount{}
				need[model.TP{Topic: rt, Partition: int32(j)}] = sp
			}
		}
	}
	if len(need) == 0 {
		return
	}
	source := map[string]string{} // remote topic -> source topic
	for _, name := range names {
		source[r.Topics.Policy.RemoteTopic(r.Flow.SourceAlias, name)] = name
	}
	for rtp, c := range kafka.CountCommitted(ctx, r.Target, leaders, ids, need) {
		w := r.parts.get(model.TP{Topic: source[rtp.Topic], Partition: rtp.Partition})
		if w == nil {
			continue // not asked for (CountCommitted answers only what it was asked)
		}
		w.copied = copiedCount{n: c.N, known: true}
		if c.Whole {
			w.copied.span = need[rtp] // kept while the span holds
		}
	}
}

// positionSource answers MM2's newest positions of a partition (the
// monitor's MirrorState, read per partition rather than copied whole).
type positionSource interface {
	newestSync(model.TP) (model.OffsetSync, bool)
	connectOffset(model.TP) (model.ConnectOffset, bool)
}

// partPos is MM2's positions of one partition as a refresh took them:
// only the fields the refresh reads, no names (the partition is its index
// in the refresh's table) and no pointers, so the table a refresh holds
// through its Kafka reads is 64 bytes a partition the collector need not
// scan (it was 160 with the whole model records: 16 MiB at 100k).
type partPos struct {
	sync       syncPos
	connect    connectPos
	hasSync    bool
	hasConnect bool
}

// syncPos is what the refresh reads of a partition's newest offset sync.
type syncPos struct {
	upstream, downstream int64
	logOffset, recordMs  int64 // where it was read: a restart mark tells old from new by them
}

// connectPos is what the refresh reads of a partition's Connect offset.
type connectPos struct {
	lastOffset          int64
	logOffset, recordMs int64
}

func takePosition(src positionSource, tp model.TP) partPos {
	var p partPos
	if s, ok := src.newestSync(tp); ok {
		p.sync, p.hasSync = syncPos{s.Upstream, s.Downstream, s.LogOffset, s.RecordMs}, true
	}
	if c, ok := src.connectOffset(tp); ok {
		p.connect, p.hasConnect = connectPos{c.LastOffset, c.LogOffset, c.RecordMs}, true
	}
	return p
}

// usable returns MM2's connect offset and newest sync of a partition,
// leaving out those that were already there when the log restarted (m may
// be nil).
func (m *restartMark) usable(pos partPos) (c connectPos, hasC bool, s syncPos, hasS bool) {
	c, hasC = pos.connect, pos.hasConnect
	s, hasS = pos.sync, pos.hasSync
	if m != nil {
		hasC = hasC && !(m.connect && m.connectRec == [2]int64{c.logOffset, c.recordMs})
		hasS = hasS && !(m.sync && m.syncRec == [2]int64{s.logOffset, s.recordMs})
	}
	return c, hasC, s, hasS
}

// watch fills the position of pl, detecting a restarted source log first:
// a new topic id, an end offset that went backwards, or a position of MM2
// past the end (only possible for a log MM2 read before). It reports
// whether the restart was detected in this refresh.
func (r *LagReader) watch(pl *model.PartitionLag, w *partWatch, pos partPos, recreated, sameLog bool, now time.Time) bool {
	w.hold()
	w.readIn = r.reads
	why := ""
	switch {
	case recreated:
		why = "topic recreated (new topic id)"
	case pl.SourceEnd.Known && pl.SourceEnd.V < w.lastEnd:
		why = fmt.Sprintf("end offset went back from %d to %d", w.lastEnd, pl.SourceEnd.V)
	}
	if why == "" && pl.SourceEnd.Known {
		// MM2 cannot have copied past the end of the log it reads.
		c, hasC, s, hasS := w.restart.usable(pos)
		switch {
		case hasC && c.lastOffset+1 > pl.SourceEnd.V:
			why = fmt.Sprintf("MM2's position %d is past the source end %d", c.lastOffset+1, pl.SourceEnd.V)
		case hasS && s.upstream > pl.SourceEnd.V:
			why = fmt.Sprintf("MM2's newest offset sync (%d) is past the source end %d", s.upstream, pl.SourceEnd.V)
		}
	}
	fresh := why != ""
	if fresh {
		m := &restartMark{why: model.Intern(why + " at " + now.UTC().Format(time.RFC3339))}
		switch {
		case sameLog && pl.SourceEnd.Known:
			m.base = pl.SourceEnd.V // truncated: what is below the new end was the same log
		case pl.SourceStart.Known:
			m.base = pl.SourceStart.V
		}
		if c := pos.connect; pos.hasConnect {
			m.connect, m.connectRec = true, [2]int64{c.logOffset, c.recordMs}
		}
		if s := pos.sync; pos.hasSync {
			m.sync, m.syncRec = true, [2]int64{s.logOffset, s.recordMs}
		}
		w.restart, w.seen, w.hasEnd = m, nil, false
		w.ts = nil // a timestamp read from the old log
	}
	if pl.SourceEnd.Known {
		w.seenEnd(pl.SourceEnd.V, now.UnixMilli())
	}
	r.position(pl, pos, w.restart, w.copied)
	if m := w.restart; m != nil {
		if !m.hasDR && pl.TargetEnd.Known {
			m.drEnd, m.hasDR = pl.TargetEnd.V, true // DR unreadable at the mark: count from now (fewer)
		}
		c, hasC, _, hasS := m.usable(pos)
		if pl.Replicated.Known {
			if ok := m.corroborated(pl); pl.Replicated.V > ok {
				pl.Replicated, pl.Method = model.Known(ok), model.PositionRestartCopied
			} else if !fresh && hasC && c.lastOffset+1 <= ok && (hasS || !m.sync) {
				w.restart = nil // MM2's positions are the new log's and account for what it copied
				return fresh
			}
		}
		pl.Restarted = m.why
		if !pl.Replicated.Known && pl.SourceStart.Known {
			// Nothing of the new log is known to be copied.
			v := pl.SourceStart.V
			pl.Replicated, pl.Method = model.Known(v), model.PositionRestarted
		}
	}
	return fresh
}

// emptyDRCopy applies the one position rule MM2's bookkeeping cannot
// override: a DR partition that never held a record (end offset 0) or does
// not exist, read from an answering DR, holds nothing of the source log.
// A mirror that has just started on a topic, or whose DR copy was just
// created, has copied nothing there until DR holds records; a Connect
// position or offset sync saying otherwise is an old one (the topic
// mirrored before, its DR copy since deleted) or MM2 starting past the
// records it skipped. So the lag is the whole log, never 0: exactly when
// the log still starts at 0, and unknown when retention removed its start
// (records deleted before anything copied them count behind too, and how
// many MM2 never copied anywhere is not known). A position at or below the
// log start already counts everything retained and stays.
func emptyDRCopy(pl *model.PartitionLag, targetLeaders kafka.Leaders) {
	ls, exists := targetLeaders[pl.RemoteTopic.String()]
	switch {
	case !pl.SourceStart.Known || !pl.SourceEnd.Known || pl.SourceEnd.V == 0: // an empty log: model.PositionEmptyLog
		return
	case exists && int(pl.Partition) < len(ls) && (!pl.TargetEnd.Known || pl.TargetEnd.V > 0):
		return // DR holds records, or its end is unknown
	case pl.Replicated.Known && pl.Replicated.V <= pl.SourceStart.V:
		return
	case pl.SourceStart.V > 0:
		pl.Replicated, pl.Method = model.Figure{}, model.PositionUnknown
		return
	}
	pl.Replicated, pl.Method = model.Known(0), model.PositionEmptyDRCopy
}

// corroborated is the highest position on the new log the DR side vouches
// for: its base plus one offset per DR record written since the mark. MM2
// copies a record once, at an offset at or after the base, so a position
// above this skipped records (they are behind, never copied) or is the old
// log's. Transaction markers only lower it; duplicates in DR could raise
// it, as they could a sync estimate, but never past the source end. A
// newer sync cannot vouch for more: the records below it fit in the same
// count.
func (m *restartMark) corroborated(pl *model.PartitionLag) int64 {
	if !m.hasDR || !pl.TargetEnd.Known {
		return m.base
	}
	v := m.base + max(pl.TargetEnd.V-m.drEnd, 0)
	if pl.SourceEnd.Known {
		v = min(v, pl.SourceEnd.V)
	}
	return v
}

// seenEnd adds the end read at atMs to the end history when it changed.
func (w *partWatch) seenEnd(end, atMs int64) {
	if w.hasEnd && w.lastEnd == end {
		return
	}
	if w.hasEnd {
		n := len(w.seen)
		if n == cap(w.seen) { // grow to the bound, never past it (append would double)
			w.seen = append(make([]endSeen, 0, min(max(2*n, 2), maxSeen)), w.seen...)
		}
		w.seen = append(w.seen, endSeen{w.lastEndAt, w.lastEnd})
	}
	w.lastEnd, w.lastEndAt, w.hasEnd = end, atMs, true
	if n := len(w.seen) + 1; n > maxSeen { // keep the first, the newest and every other one
		kept := w.seen[:0]
		for i, e := range w.seen {
			if i%2 == 0 {
				kept = append(kept, e)
			}
		}
		w.seen = kept
	}
}

// firstSeen returns when the record at offset o was first known to exist:
// the first time the end offset was seen past it; ok false when never.
func (w *partWatch) firstSeen(o int64) (int64, bool) {
	i := sort.Search(len(w.seen), func(i int) bool { return w.seen[i].end > o })
	if i < len(w.seen) {
		// Older entries can no longer be needed: positions only move forward.
		w.seen = w.seen[i:]
		return w.seen[0].atMs, true
	}
	if !w.hasEnd || w.lastEnd <= o {
		return 0, false
	}
	w.seen = w.seen[:0]
	return w.lastEndAt, true
}

// caughtUp drops the end history a caught-up partition no longer needs:
// its next unreplicated record lies past every end seen so far, so only
// the newest entry is kept (the next refresh compares with it). A busy
// partition MM2 keeps up with changes its end at every refresh and would
// else fill the history to its bound at every partition written to (the
// soak's churn grew it 10.5 MiB in 70 minutes at 100k).
func (w *partWatch) caughtUp() {
	if cap(w.seen) > 4 { // let the grown array go
		w.seen = nil
	} else {
		w.seen = w.seen[:0]
	}
}

// lagMillis fills LagMs for lagging partitions from the timestamp of the
// first unreplicated record, fetched once per position. It visits only
// the lagging rows: at a million partitions, maps by partition built and
// searched for every row were most of its cost.
func (r *LagReader) lagMillis(ctx context.Context, topics mirroredTopics, want []lagging, parts []model.PartitionLag, now time.Time) {
	need := map[model.TP]int64{}
	for _, l := range want {
		p := &parts[l.row]
		tp := model.TP{Topic: p.Topic.String(), Partition: p.Partition}
		// A timestamp stays true while the position holds; "only markers
		// left" only while the end does too (a lagging row has an end).
		var e *tsEntry
		if w := r.parts.get(tp); w != nil {
			e = w.ts
		}
		if e == nil || e.offset != l.from || ((e.first.OnlyMarkers || e.first.RescanOnGrowth) && e.first.HWM != p.SourceEnd.V) {
			need[tp] = l.from
		}
	}
	if len(need) > 0 {
		for tp, fr := range kafka.FetchTimestamps(ctx, r.Source, topics.leaders, topics.ids, need) {
			r.aborted.Add(tp, fr.Aborted)
			fr.Aborted = nil
			if w := r.parts.get(tp); w != nil {
				w.ts = &tsEntry{need[tp], fr}
			}
		}
	}
	for _, l := range want {
		p := &parts[l.row]
		w := r.parts.get(model.TP{Topic: p.Topic.String(), Partition: p.Partition})
		if w == nil {
			continue // every lagging row is watched (Read, ClusterLinkReader.lagging); unwatched, its age stays unknown
		}
		switch e := w.ts; {
		case e == nil || e.offset != l.from:
		case e.first.Found:
			age := max(now.UnixMilli()-e.first.Ms, 0)
			p.LagMs = model.Known(age)
		case e.first.OnlyMarkers && e.first.HWM == p.SourceEnd.V && !p.DataLost:
			// Transaction markers are never copied: caught up.
			p.Replicated, p.LagMessages, p.LagMs = p.SourceEnd, model.Known(0), model.Known(0)
			p.Method = p.Method.WithMarkers()
		}
		if !p.LagMs.Known {
			// Unreadable now: the record has existed at least since the end
			// was first seen past it, so it is at least that old.
			if at, ok := w.firstSeen(l.from); ok {
				v := max(now.UnixMilli()-at, 0)
				p.LagMsAtLeast = model.Known(v)
			}
		}
	}
}

// SortPartitions orders partitions by topic, then partition.
func SortPartitions(ps []model.PartitionLag) {
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].Topic != ps[j].Topic {
			return ps[i].Topic.Less(ps[j].Topic)
		}
		return ps[i].Partition < ps[j].Partition
	})
}

// watchTable is the reader's partWatch of every source partition it saw:
// per topic a slice by partition number (Kafka numbers them from 0; the
// reader's come from metadata), so a partition costs its partWatch and no
// map entry or separate allocation (was a map of pointers: ~40 bytes a
// partition more and one object each for the collector).
type watchTable struct {
	topics map[string][]partWatch
}

// get returns tp's watch, nil when none. The pointer is valid until the
// next add of a partition of tp's topic.
func (t *watchTable) get(tp model.TP) *partWatch {
	ps := t.topics[tp.Topic]
	if tp.Partition < 0 || int(tp.Partition) >= len(ps) || !ps[tp.Partition].held {
		return nil
	}
	return &ps[tp.Partition]
}

// topic is topic's watches, partitions 0..n-1 at least, for a caller that
// visits every partition of a topic: one map lookup, not one a partition.
// A watch not held yet is started with hold. The slice is valid until the
// next topic or add of the same topic.
func (t *watchTable) topic(name string, n int) []partWatch {
	if t.topics == nil {
		t.topics = map[string][]partWatch{}
	}
	ps := t.topics[name]
	if n > len(ps) {
		ps = append(ps, make([]partWatch, n-len(ps))...)
		t.topics[name] = ps
	}
	return ps
}

// hold starts watching w's partition if it is not watched yet.
func (w *partWatch) hold() {
	if !w.held {
		*w = partWatch{lastEnd: -1, held: true}
	}
}

// add starts watching tp (not watched yet) and returns its watch.
func (t *watchTable) add(tp model.TP) *partWatch {
	ps := t.topic(tp.Topic, int(tp.Partition)+1)
	ps[tp.Partition] = partWatch{lastEnd: -1, held: true}
	return &ps[tp.Partition]
}

// forgetUnread forgets the partitions the reader's read number read did
// not see (topic gone or no longer mirrored), and topics with none left.
func (t *watchTable) forgetUnread(read int64) {
	for topic, ps := range t.topics {
		kept := false
		for i := range ps {
			if ps[i].held && ps[i].readIn != read {
				ps[i] = partWatch{}
			}
			kept = kept || ps[i].held
		}
		if !kept {
			delete(t.topics, topic)
		}
	}
}
