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
	// Inputs are the stored rows as last read (ReadQualityInputs), for
	// Configured and Cap; nil: Quality reads them.
	Inputs *QualityInputs
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

// QualityInputs are the stored rows Quality rests on: which groups it
// computes, and each one's primary offsets merged from MM2's checkpoints
// and the console's recorded readings. Reading them is most of Quality's
// cost (two queries a group, 20k rows at the cap), and they change only
// when MM2 checkpoints or the primary's offsets are recorded: a caller
// that keeps them passes them back (QualityOptions.Inputs) while the
// store's GroupRowsVersion is still Version.
type QualityInputs struct {
	Version uint64    // the store's GroupRowsVersion, read before the rows
	At      time.Time // when they were read
	Cap     int       // the most groups read (at least 1)
	groups  []groupInputs
	over    int
	names   []string // the first groups over the cap
	err     string
}

// Complete reports whether every read succeeded: inputs with a failed
// read are for one refresh only (its figures say so), never kept.
func (in *QualityInputs) Complete() bool {
	if in.err != "" {
		return false
	}
	for _, g := range in.groups {
		if g.err != nil {
			return false
		}
	}
	return true
}

// groupInputs are one group's stored offsets, merged and sorted by
// partition.
type groupInputs struct {
	want         model.GroupQuality
	offsets      []offsetAt
	checkpointAt time.Time // MM2's newest checkpoint of the group
	err          error
}

// offsetAt is a group partition's primary offset and where it came from.
type offsetAt struct {
	tp           model.TP
	off          int64
	at           int64 // epoch ms
	from         string
	checkpointMs int64 // MM2's checkpoint of the partition; 0: none
}

// ReadQualityInputs reads the stored rows of the groups Quality computes:
// the configured ones first, then those MM2 checkpointed, by name, at
// most limit (at least 1); the rest are counted, never dropped silently.
func (g *GroupTranslator) ReadQualityInputs(ctx context.Context, configured []model.GroupQuality, limit int, now time.Time) *QualityInputs {
	in := &QualityInputs{Version: g.Store.GroupRowsVersion(), At: now, Cap: max(limit, 1)}
	want := slices.Clone(configured)
	for i := range want {
		want[i].Configured = true
	}
	if checkpointed, err := g.Store.CheckpointGroups(ctx, g.Flow); err != nil {
		in.err = fmt.Sprintf("reading the groups MM2 checkpointed: %v", err)
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
	if limit = in.Cap; len(want) > limit {
		for _, q := range want[limit:] {
			if len(in.names) < overNamesShown {
				in.names = append(in.names, q.Group)
			}
		}
		in.over, want = len(want)-limit, want[:limit]
	}
	topics := map[string]string{} // one copy of each topic name
	for _, q := range want {
		gi := groupInputs{want: q}
		gi.offsets, gi.checkpointAt, gi.err = g.groupOffsets(ctx, q.Group, topics)
		in.groups = append(in.groups, gi)
	}
	return in
}

// groupOffsets merges a group's stored checkpoints and recorded primary
// offsets: the newer of the two for each partition.
func (g *GroupTranslator) groupOffsets(ctx context.Context, group string, topics map[string]string) ([]offsetAt, time.Time, error) {
	var checkpointAt time.Time
	cps, err := g.Store.GroupCheckpoints(ctx, g.Flow, group)
	if err != nil {
		return nil, checkpointAt, err
	}
	recorded, err := g.Store.PrimaryGroupOffsets(ctx, g.Flow, group)
	if err != nil {
		return nil, checkpointAt, err
	}
	intern := func(t string) string {
		if u, ok := topics[t]; ok {
			return u
		}
		topics[t] = t
		return t
	}
	byTP := map[model.TP]offsetAt{}
	for _, c := range cps {
		checkpointAt = laterMs(checkpointAt, c.RecordMs)
		upstream, ok := g.Policy.UpstreamTopic(g.Alias, c.Topic)
		if !ok {
			continue // not a topic of this flow's source
		}
		tp := model.TP{Topic: intern(upstream), Partition: c.Partition}
		byTP[tp] = offsetAt{tp: tp, off: c.Upstream, at: c.RecordMs, from: model.OffsetFromCheckpoint, checkpointMs: c.RecordMs}
	}
	for _, r := range recorded {
		tp := model.TP{Topic: intern(r.Topic), Partition: r.Partition}
		if cur, ok := byTP[tp]; !ok || r.AtMs >= cur.at {
			byTP[tp] = offsetAt{tp: tp, off: r.Offset, at: r.AtMs, from: model.OffsetFromPrimary, checkpointMs: cur.checkpointMs}
		}
	}
	out := make([]offsetAt, 0, len(byTP))
	for _, o := range byTP {
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b offsetAt) int {
		return cmp.Or(strings.Compare(a.tp.Topic, b.tp.Topic), cmp.Compare(a.tp.Partition, b.tp.Partition))
	})
	return out, checkpointAt, nil
}

// Quality computes the failover quality of the flow's consumer groups:
// the groups the config names and those MM2 checkpointed (bounded by
// o.Cap), each from the primary's offsets as the console last recorded
// them (or MM2's checkpoint where newer) through the sync index. It reads
// storage only (not at all with o.Inputs): no cluster is asked, so it
// costs a refresh no Kafka round trip and works the same while the
// primary is down.
func (g *GroupTranslator) Quality(ctx context.Context, o QualityOptions) *model.FlowGroups {
	in := o.Inputs
	if in == nil {
		in = g.ReadQualityInputs(ctx, o.Configured, o.Cap, o.Now)
	}
	out := &model.FlowGroups{At: o.Now, Cap: in.Cap, Over: in.over, OverNames: in.names, Err: in.err}
	lags := sortedLagsOf(o.Lags)
	out.Groups = make([]model.GroupQuality, 0, len(in.groups))
	for _, gi := range in.groups {
		q := gi.want
		if gi.err != nil {
			q.Problem = gi.err.Error()
			if out.Err == "" {
				out.Err = fmt.Sprintf("group %s: %v", q.Group, gi.err)
			}
		} else {
			g.groupQuality(&q, gi, o, lags)
		}
		out.Groups = append(out.Groups, q)
	}
	model.WorstFirst(out.Groups)
	return out
}

// groupQuality fills q from the group's stored offsets and the sync index.
func (g *GroupTranslator) groupQuality(q *model.GroupQuality, gi groupInputs, o QualityOptions, lags sortedLags) {
	q.CheckpointAt = gi.checkpointAt
	if len(gi.offsets) == 0 {
		q.Problem = "no committed offsets recorded from the primary and no MM2 checkpoint for this group: nothing to translate yet (has it consumed a mirrored topic?)"
		return
	}
	q.OffsetsStale = o.PrimaryDown
	var sum int64
	known, noSync := true, false
	q.Partitions = make([]model.GroupPartitionQuality, 0, len(gi.offsets))
	for _, at := range gi.offsets { // sorted by partition
		p := g.partitionQuality(at, lags, o)
		if at.checkpointMs != 0 {
			p.CheckpointAt = time.UnixMilli(at.checkpointMs)
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
}

// partitionQuality translates one partition's offset and says what it
// would reread, or why it cannot be translated.
func (g *GroupTranslator) partitionQuality(at offsetAt, lags sortedLags, o QualityOptions) model.GroupPartitionQuality {
	tp := at.tp
	p := model.GroupPartitionQuality{Source: tp, Offset: at.off, OffsetAt: time.UnixMilli(at.at), OffsetFrom: at.from}
	var tr model.Translation
	p.DR, tr = g.Translate(tp, at.off, false)
	p.Method = tr.Method
	if at.off >= 0 && at.off < math.MaxInt64 {
		if s, ok := g.Index.SyncBelow(tp, at.off+1); ok {
			p.SyncAt = time.UnixMilli(s.RecordMs)
		}
	}
	lag := lags.find(tp)
	switch tr.Method {
	case model.MethodExact, model.MethodConservative:
		p.DROffset = tr.Offset
		n := tr.RereadMax // 0 when exact
		p.Reread = &n
		// Past the newest sync when the sync it came from is the newest.
		if newest, ok := g.Index.Newest(tp); ok && newest.Upstream < at.off {
			p.PastNewestSync, p.NewestSyncUpstream = true, newest.Upstream
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
		if len(lags) > 0 && !lags.hasTopic(tp.Topic) {
			p.Problem = fmt.Sprintf("topic not mirrored: %s is not among the topics this flow replicates", tp.Topic)
		} else {
			p.Problem = "no offset sync for this partition: MM2 has written none yet (or the source log restarted since its last one)"
		}
	case model.MethodTooOld:
		if lag != nil && lag.SourceStart.Known && at.off < lag.SourceStart.V {
			p.Problem = fmt.Sprintf("truncated: offset %d is below the primary's log start %d (records deleted by retention or a truncation), and no offset sync is at or below it", at.off, lag.SourceStart.V)
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

// sortedLags is a refresh's partitions sorted by topic, then partition,
// searched by halving: the groups look up a few thousand partitions a
// refresh, and a map of every partition built for them was a million
// entries a refresh at a million partitions.
type sortedLags []model.PartitionLag

func byTopicPartition(a, b model.PartitionLag) int {
	return cmp.Or(strings.Compare(a.Topic.String(), b.Topic.String()), cmp.Compare(a.Partition, b.Partition))
}

// sortedLagsOf is ps itself when sorted, as a refresh builds its table,
// else a sorted copy.
func sortedLagsOf(ps []model.PartitionLag) sortedLags {
	if !slices.IsSortedFunc(ps, byTopicPartition) {
		ps = slices.SortedFunc(slices.Values(ps), byTopicPartition)
	}
	return ps
}

// find is tp's row, nil when the refresh has none.
func (l sortedLags) find(tp model.TP) *model.PartitionLag {
	i, ok := slices.BinarySearchFunc(l, tp, func(p model.PartitionLag, tp model.TP) int {
		return cmp.Or(strings.Compare(p.Topic.String(), tp.Topic), cmp.Compare(p.Partition, tp.Partition))
	})
	if !ok {
		return nil
	}
	return &l[i]
}

// hasTopic says whether the refresh has a row of topic.
func (l sortedLags) hasTopic(topic string) bool {
	i, _ := slices.BinarySearchFunc(l, topic, func(p model.PartitionLag, t string) int { return strings.Compare(p.Topic.String(), t) })
	return i < len(l) && l[i].Topic.String() == topic
}
