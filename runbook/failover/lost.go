package failover

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
)

// LostPartition is what the old primary holds of one partition beyond what
// reached DR before the failover.
type LostPartition struct {
	Topic     string
	Partition int32
	Reached   Reached
	// Read: the primary's log start and end were read (Start, End).
	Read       bool
	Start, End int64
	// From is the first offset counted: Reached.From, or the log start
	// once retention passed it. Deleted counts the offsets in between:
	// records never copied that retention deleted on the primary too.
	From    int64
	Deleted int64
	// Records were read in [From, End); Counted: all of them (the page's
	// scan cap did not cut the count short). FirstMs and LastMs are the
	// oldest and newest timestamps among them.
	Records         int64
	Counted         bool
	FirstMs, LastMs int64
	// AsOfMs, when not 0, is when these figures were read: the primary
	// cannot be read now, and this is the last read that reached it.
	AsOfMs int64
}

// TP is the partition's name.
func (p LostPartition) TP() model.TP { return model.TP{Topic: p.Topic, Partition: p.Partition} }

// Known: the cut and the primary's log are known, so a figure can be given.
func (p LostPartition) Known() bool { return p.Reached.Known && p.Read }

// Figure says how many records are lost, never fewer than may be: exact,
// "at most N; at least M" when some of the counted records may be in DR
// after all, "up to N" when nothing bounds how many, and unknown when the
// cut or the primary's log is not known.
func (p LostPartition) Figure() string {
	switch {
	case !p.Reached.Known:
		return "unknown"
	case !p.Read:
		return "unknown (the primary's offsets could not be read)"
	case !p.Counted:
		return fmt.Sprintf("at most %d (offsets %d–%d; not counted to the end: the page's scan cap, or the read failed)", p.End-p.From, p.From, p.End-1)
	case p.Records == 0 || p.Reached.InDRAtMost == 0:
		return fmt.Sprint(p.Records)
	case p.Reached.InDRAtMost > 0:
		return fmt.Sprintf("at most %d; at least %d", p.Records, max(0, p.Records-p.Reached.InDRAtMost))
	}
	return fmt.Sprintf("up to %d, some may already be in DR", p.Records)
}

// LostToDR is the lost-records view of a flow now DR is active.
type LostToDR struct {
	Active model.ActiveSide
	// Recorded: the failover run recorded where the mirror stopped; runs
	// from before the console did, and runs without a stop-mirror step,
	// did not, and then nothing is known.
	Recorded   bool
	Partitions []LostPartition
	// PrimaryErr says why the old primary's records could not be read.
	PrimaryErr string
	AtMs       int64
	// LastKnownMs, when not 0, is when the oldest of the figures shown in
	// place of unreadable partitions (LostPartition.AsOfMs) was read.
	LastKnownMs int64
}

// LostToDR reads, for a flow whose DR side is active, what the old primary
// holds beyond what reached DR before the failover, and counts it (up to
// the page's cap).
func (rb Book) LostToDR(ctx context.Context, flow string) (*LostToDR, error) {
	l, opts, err := rb.lostPositions(ctx, flow)
	if err != nil || opts == nil {
		if l != nil && err == nil {
			rb.fillLost(ctx, flow, l)
		}
		return l, err
	}
	lim := rb.LostLimits.WithDefaults()
	byTP := map[model.TP]*LostPartition{}
	for i := range l.Partitions {
		p := &l.Partitions[i]
		byTP[p.TP()] = p
		p.Counted = p.Known() && p.From >= p.End
	}
	err = kafka.ReadRecords(ctx, opts, l.ranges(), kafka.ReadLimits{MaxRecords: lim.CountRecords, Idle: lim.Idle},
		func(r *kafka.Record) error {
			byTP[model.TP{Topic: r.Topic, Partition: r.Partition}].add(r)
			return nil
		}, func(tp model.TP) { byTP[tp].Counted = true })
	var capped *kafka.CapError
	if err != nil && !errors.As(err, &capped) {
		name, seeds := "the old primary", []string(nil)
		if f := rb.Config.Flow(flow); f != nil && rb.Config.Clusters[f.Source] != nil {
			name, seeds = f.Source, rb.Config.Clusters[f.Source].Bootstrap
		}
		l.PrimaryErr = "reading the old primary's records: " + kafka.Explain(ctx, name, seeds, time.Time{}, err).Error()
	}
	rb.fillLost(ctx, flow, l)
	rb.keepLost(ctx, flow, l)
	return l, nil
}

func (p *LostPartition) add(r *kafka.Record) {
	ms := r.Timestamp.UnixMilli()
	if p.Records == 0 || ms < p.FirstMs {
		p.FirstMs = ms
	}
	if p.Records == 0 || ms > p.LastMs {
		p.LastMs = ms
	}
	p.Records++
}

// ranges are the offsets to read: of every partition whose figure can be
// known.
func (l *LostToDR) ranges() []kafka.Range {
	var out []kafka.Range
	for _, p := range l.Partitions {
		if p.Known() && p.From < p.End {
			out = append(out, kafka.Range{TP: p.TP(), From: p.From, To: p.End})
		}
	}
	return out
}

// lostPositions works out each partition's cut and reads the primary's log
// bounds. opts, the primary's client options, is nil when there is nothing
// to read (the primary is active, the cut is unknown, the primary is not
// reachable: l says which).
func (rb Book) lostPositions(ctx context.Context, flow string) (l *LostToDR, opts kafka.Options, err error) {
	f := rb.Config.Flow(flow)
	if f == nil {
		return nil, nil, fmt.Errorf("no flow %q", flow)
	}
	if f.IsClusterLink() {
		return nil, nil, runbook.ErrNotMM2
	}
	active, err := ActiveSideOf(ctx, rb.Store, flow)
	if err != nil {
		return nil, nil, err
	}
	if active.Side != model.SideDR {
		return nil, nil, runbook.ErrPrimaryActive
	}
	l = &LostToDR{Active: active, AtMs: rb.Now().UnixMilli()}
	cut, err := rb.Store.FailoverCut(ctx, active.Run)
	if err != nil || len(cut) == 0 {
		return l, nil, err
	}
	l.Recorded = true
	var topics []string
	for _, c := range cut {
		if len(topics) == 0 || topics[len(topics)-1] != c.Topic { // cut is sorted by topic
			topics = append(topics, c.Topic)
		}
		l.Partitions = append(l.Partitions, LostPartition{Topic: c.Topic, Partition: c.Partition, Reached: reachedDR(rb.laterSync(flow, c))})
	}
	opts, err = kafka.ClientOptions(f.Source, rb.Config.Clusters[f.Source], rb.Log)
	if err != nil {
		return nil, nil, err
	}
	cl, err := kafka.NewClient(opts, nil)
	if err != nil {
		return nil, nil, err
	}
	defer cl.Close()
	rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	bounds, berr := kafka.ListBounds(rctx, cl, topics...)
	if berr != nil {
		l.PrimaryErr = "the old primary could not be read: " + kafka.Explained(ctx, cl, f.Source, time.Time{}, berr).Error()
	}
	for i := range l.Partitions {
		p := &l.Partitions[i]
		b, ok := bounds[p.TP()]
		if !ok {
			continue
		}
		p.Read, p.Start, p.End = true, b.Start, b.End
		if p.Reached.Known && p.Reached.From > b.End {
			// MM2 copied offsets the primary's log does not hold: it is
			// not the log the mirror read (the topic was recreated).
			p.Reached = Reached{How: fmt.Sprintf("the cut (offset %d) is past the primary's log end %d: the topic's log is not the one the mirror copied", p.Reached.From, b.End)}
		}
		p.From = max(p.Reached.From, b.Start)
		p.Deleted = p.From - p.Reached.From
	}
	if len(bounds) == 0 {
		return l, nil, nil
	}
	return l, opts, nil
}

// laterSync improves c with a sync below DR's end at the cut that the
// console ingested after the cut was recorded: MM2 writes its delayed
// syncs as it stops, and they may arrive after the step read the index.
// Any sync below that end names a record that was in DR then.
func (rb Book) laterSync(flow string, c model.CutPosition) model.CutPosition {
	end := c.CommittedEnd()
	if rb.Monitor == nil || end == nil {
		return c
	}
	s, ok := rb.syncBelow(flow, model.TP{Topic: c.Topic, Partition: c.Partition}, *end)
	if ok && (c.SyncDown == nil || s.Downstream > *c.SyncDown) {
		c.SyncUp, c.SyncDown = &s.Upstream, &s.Downstream
	}
	return c
}

// LostTotals sum a flow's lost records over the partitions whose figure is
// known; Unknown counts the others, which may hold any number. Deleted
// counts the offsets retention deleted on the primary before they were
// copied: lost too, and part of AtMost (offsets, so perhaps transaction
// markers: AtLeast, in records, leaves them out). LastKnownMs, when not 0,
// is the oldest read the figures of unreadable partitions come from.
type LostTotals struct {
	AtMost, AtLeast int64
	Deleted         int64
	Unknown         int
	LastKnownMs     int64
}

// Totals adds the partitions' figures up, each bound from its side: a
// partition counted only up to the cap adds its offset span to AtMost and
// nothing to AtLeast; the offsets retention deleted add to AtMost, so the
// total is never less than what the rows show.
func (l *LostToDR) Totals() LostTotals {
	t := LostTotals{LastKnownMs: l.LastKnownMs}
	for _, p := range l.Partitions {
		if !p.Known() {
			t.Unknown++
			continue
		}
		t.Deleted += p.Deleted
		t.AtMost += p.Deleted
		switch k := p.Reached.InDRAtMost; {
		case !p.Counted:
			t.AtMost += p.End - p.From
		case k >= 0:
			t.AtMost += p.Records
			t.AtLeast += max(0, p.Records-k)
		default:
			t.AtMost += p.Records
		}
	}
	return t
}

// Text is the totals in words, never smaller than the truth.
func (t LostTotals) Text() string {
	s := fmt.Sprintf("at most %d; at least %d", t.AtMost, t.AtLeast)
	if t.AtMost == t.AtLeast {
		s = fmt.Sprint(t.AtMost)
	}
	if t.Deleted > 0 {
		s += fmt.Sprintf(" (the most counts %d offsets retention deleted on the primary before they were copied)", t.Deleted)
	}
	if t.Unknown > 0 {
		s += fmt.Sprintf(", and %d partition(s) unknown, which may hold any number", t.Unknown)
	}
	return s
}

// AgeText says, when some figures are the last known ones, how old they
// are ("" when every figure was read now).
func (t LostTotals) AgeText(now time.Time) string {
	if t.LastKnownMs == 0 {
		return ""
	}
	at := time.UnixMilli(t.LastKnownMs)
	return fmt.Sprintf("the primary cannot be read now: these are the last known figures, read at %s (%s ago); records it took since are not counted",
		at.UTC().Format(time.RFC3339), max(now.Sub(at), 0).Round(time.Second))
}
