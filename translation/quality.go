package translation

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/drconsole/drconsole/model"
)

// QualityOptions say which groups GroupTranslator.Quality computes and
// what it knows of the flow besides the stored offsets.
type QualityOptions struct {
	// Configured are the groups the flow's config names (Group, Critical
	// and Objective set), computed first, in this order.
	Configured []model.GroupQuality
	// Cap is the most groups computed (configured ones first, then those
	// MM2 checkpointed, by name); the rest are counted, never dropped
	// silently. At least 1.
	Cap int
	// Lags are the flow's partitions as the refresh saw them: which
	// topics it mirrors and where the primary's logs start.
	Lags []model.PartitionLag
	// PrimaryDown: the primary does not answer, so the recorded offsets
	// are the last known ones.
	PrimaryDown bool
	// DRStart is a DR partition's log start as last read (at DRStartsAt);
	// nil, or false for a partition, when not known. A group translated
	// below it could not resume where the figure says.
	DRStart    func(model.TP) (int64, bool)
	DRStartsAt time.Time
	Now        time.Time
}

// overNamesShown is how many groups beyond the cap are named.
const overNamesShown = 5

// Quality computes the failover quality of the flow's consumer groups:
// the groups the config names and those MM2 checkpointed (bounded by
// o.Cap), each from the primary's offsets as the console last recorded
// them (or MM2's checkpoint where newer) through the sync index. It reads
// storage only: no cluster is asked, so it costs a refresh no Kafka
// round trip and works the same while the primary is down.
func (g *GroupTranslator) Quality(ctx context.Context, o QualityOptions) *model.FlowGroups {
	out := &model.FlowGroups{At: o.Now, Cap: max(o.Cap, 1)}
	want := slices.Clone(o.Configured)
	for i := range want {
		want[i].Configured = true
	}
	if checkpointed, err := g.Store.CheckpointGroups(ctx, g.Flow); err != nil {
		out.Err = fmt.Sprintf("reading the groups MM2 checkpointed: %v", err)
	} else {
		names := make([]string, 0, len(checkpointed))
		for name := range checkpointed {
			if !slices.ContainsFunc(want, func(q model.GroupQuality) bool { return q.Group == name }) {
				names = append(names, name)
			}
		}
		slices.Sort(names)
		for _, name := range names {
			want = append(want, model.GroupQuality{Group: name})
		}
	}
	if len(want) > out.Cap {
		for _, q := range want[out.Cap:] {
			if len(out.OverNames) < overNamesShown {
				out.OverNames = append(out.OverNames, q.Group)
			}
		}
		out.Over, want = len(want)-out.Cap, want[:out.Cap]
	}
	lags := map[model.TP]*model.PartitionLag{}
	topics := map[string]bool{}
	for i := range o.Lags {
		p := &o.Lags[i]
		lags[model.TP{Topic: p.Topic, Partition: p.Partition}] = p
		topics[p.Topic] = true
	}
	for _, q := range want {
		if err := g.groupQuality(ctx, &q, o, lags, topics); err != nil {
			q.Problem = err.Error()
			if out.Err == "" {
				out.Err = fmt.Sprintf("group %s: %v", q.Group, err)
			}
		}
		out.Groups = append(out.Groups, q)
	}
	model.WorstFirst(out.Groups)
	return out
}

// offsetAt is a group partition's primary offset and where it came from.
type offsetAt struct {
	off  int64
	at   int64 // epoch ms
	from string
}

// groupQuality fills q from storage and the sync index.
func (g *GroupTranslator) groupQuality(ctx context.Context, q *model.GroupQuality, o QualityOptions, lags map[model.TP]*model.PartitionLag, topics map[string]bool) error {
	cps, err := g.Store.GroupCheckpoints(ctx, g.Flow, q.Group)
	if err != nil {
		return err
	}
	recorded, err := g.Store.PrimaryGroupOffsets(ctx, g.Flow, q.Group)
	if err != nil {
		return err
	}
	offsets := map[model.TP]offsetAt{}
	cpAt := map[model.TP]int64{} // by primary partition
	for _, c := range cps {
		q.CheckpointAt = laterMs(q.CheckpointAt, c.RecordMs)
		upstream, ok := g.Policy.UpstreamTopic(g.Alias, c.Topic)
		if !ok {
			continue // not a topic of this flow's source
		}
		tp := model.TP{Topic: upstream, Partition: c.Partition}
		offsets[tp] = offsetAt{off: c.Upstream, at: c.RecordMs, from: model.OffsetFromCheckpoint}
		cpAt[tp] = c.RecordMs
	}
	for _, r := range recorded {
		tp := model.TP{Topic: r.Topic, Partition: r.Partition}
		if cur, ok := offsets[tp]; !ok || r.AtMs >= cur.at {
			offsets[tp] = offsetAt{off: r.Offset, at: r.AtMs, from: model.OffsetFromPrimary}
		}
	}
	if len(offsets) == 0 {
		q.Problem = "no committed offsets recorded from the primary and no MM2 checkpoint for this group: nothing to translate yet (has it consumed a mirrored topic?)"
		return nil
	}
	q.OffsetsStale = o.PrimaryDown
	var sum int64
	known, noSync := true, false
	for tp, at := range offsets {
		p := g.partitionQuality(tp, at, lags, topics, o)
		if ms, ok := cpAt[tp]; ok {
			p.CheckpointAt = time.UnixMilli(ms)
		}
		if q.OffsetsAt.IsZero() || p.OffsetAt.Before(q.OffsetsAt) {
			q.OffsetsAt = p.OffsetAt
		}
		if p.Reread == nil {
			known = false
			q.Untranslated++
		} else {
			q.RereadKnown = addSat(q.RereadKnown, *p.Reread)
			sum = addSat(sum, *p.Reread)
		}
		if p.SyncAt.IsZero() {
			noSync = true
		} else if q.OldestSyncAt.IsZero() || p.SyncAt.Before(q.OldestSyncAt) {
			q.OldestSyncAt = p.SyncAt
		}
		q.Partitions = append(q.Partitions, p)
	}
	if noSync {
		q.OldestSyncAt = time.Time{}
	}
	// With the primary down, the group may have read past the offsets last
	// seen before it went: those records are read again too, and nothing
	// bounds them, so the group's bound is unknown (RereadKnown keeps what
	// the last reading bounds).
	if known && !q.OffsetsStale {
		q.Reread = &sum
	}
	slices.SortFunc(q.Partitions, func(a, b model.GroupPartitionQuality) int {
		return cmp.Or(strings.Compare(a.Source.Topic, b.Source.Topic), cmp.Compare(a.Source.Partition, b.Source.Partition))
	})
	return nil
}

// partitionQuality translates one partition's offset and says what it
// would reread, or why it cannot be translated.
func (g *GroupTranslator) partitionQuality(tp model.TP, at offsetAt, lags map[model.TP]*model.PartitionLag, topics map[string]bool, o QualityOptions) model.GroupPartitionQuality {
	p := model.GroupPartitionQuality{Source: tp, Offset: at.off, OffsetAt: time.UnixMilli(at.at), OffsetFrom: at.from}
	var tr model.Translation
	p.DR, tr = g.Translate(tp, at.off, false)
	p.Method = tr.Method
	if at.off >= 0 && at.off < math.MaxInt64 {
		if s, ok := g.Index.SyncBelow(tp, at.off+1); ok {
			p.SyncAt = time.UnixMilli(s.RecordMs)
		}
	}
	lag := lags[tp]
	switch tr.Method {
	case model.MethodExact, model.MethodConservative:
		p.DROffset = tr.Offset
		n := tr.RereadMax // 0 when exact
		p.Reread = &n
		if newest, ok := g.Index.Newest(tp); ok && newest.Upstream < at.off {
			p.Note = fmt.Sprintf("offset %d is past the newest offset sync (upstream %d): MM2 writes syncs only every so many records, so this bound grows with each record until it writes the next", at.off, newest.Upstream)
		}
		if o.DRStart == nil {
			break
		}
		if start, ok := o.DRStart(p.DR); ok && tr.Offset < start {
			p.Reread = nil
			p.Problem = fmt.Sprintf("deleted in DR: it would resume at DR offset %d, below DR's log start %d (read at %s): retention or a truncation in DR deleted those records, so it would resume as its auto.offset.reset says, reading the partition again from DR's start or skipping to its end",
				tr.Offset, start, o.DRStartsAt.UTC().Format(time.RFC3339))
		}
	case model.MethodUnknown:
		if len(topics) > 0 && !topics[tp.Topic] {
			p.Problem = fmt.Sprintf("topic not mirrored: %s is not among the topics this flow replicates", tp.Topic)
		} else {
			p.Problem = "no offset sync for this partition: MM2 has written none yet (or the source log restarted since its last one)"
		}
	case model.MethodTooOld:
		if lag != nil && lag.SourceStart != nil && at.off < *lag.SourceStart {
			p.Problem = fmt.Sprintf("truncated: offset %d is below the primary's log start %d (records deleted by retention or a truncation), and no offset sync is at or below it", at.off, *lag.SourceStart)
		} else {
			oldest := ""
			if h, _ := g.Index.History(tp, math.MaxInt32); len(h) > 0 {
				oldest = fmt.Sprintf(" (the oldest kept is at upstream %d)", h[0].Upstream)
			}
			p.Problem = fmt.Sprintf("no offset sync at or below offset %d%s: the group is further behind than the sync history reaches (thinned, compacted, or written before MM2 started)", at.off, oldest)
		}
	case model.MethodOutOfRange:
		p.Problem = fmt.Sprintf("offset %d translates past the largest offset Kafka allows (a sync at the top of the range): refused", at.off)
	default:
		p.Problem = fmt.Sprintf("not translated (%s)", tr.Method)
	}
	return p
}

func laterMs(t time.Time, ms int64) time.Time {
	if u := time.UnixMilli(ms); t.IsZero() || u.After(t) {
		return u
	}
	return t
}

// addSat adds non-negative b to a without wrapping past math.MaxInt64.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
