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

// LostToDR reads, for a flow whose DR side is active, what the old primary
// holds beyond what reached DR before the failover, and counts it (up to
// the page's cap).
func (rb Book) LostToDR(ctx context.Context, flow string) (*model.LostToDR, error) {
	l, opts, err := rb.lostPositions(ctx, flow)
	if err != nil || opts == nil {
		if l != nil && err == nil {
			rb.fillLost(ctx, flow, l)
		}
		return l, err
	}
	lim := rb.LostLimits.WithDefaults()
	byTP := map[model.TP]*model.LostPartition{}
	for i := range l.Partitions {
		p := &l.Partitions[i]
		byTP[p.TP()] = p
		p.Counted = p.Known() && p.From >= p.End
	}
	err = kafka.ReadRecords(ctx, opts, lostRanges(l), kafka.ReadLimits{MaxRecords: lim.CountRecords, Idle: lim.Idle},
		func(r *kafka.Record) error {
			addRecord(byTP[model.TP{Topic: r.Topic, Partition: r.Partition}], r)
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

// addRecord counts r among the records lost of p.
func addRecord(p *model.LostPartition, r *kafka.Record) {
	ms := r.Timestamp.UnixMilli()
	if p.Records == 0 || ms < p.FirstMs {
		p.FirstMs = ms
	}
	if p.Records == 0 || ms > p.LastMs {
		p.LastMs = ms
	}
	p.Records++
}

// lostRanges are the offsets to read: of every partition whose figure can be
// known.
func lostRanges(l *model.LostToDR) []kafka.Range {
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
func (rb Book) lostPositions(ctx context.Context, flow string) (l *model.LostToDR, opts kafka.Options, err error) {
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
	l = &model.LostToDR{Active: active, AtMs: rb.Now().UnixMilli()}
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
		l.Partitions = append(l.Partitions, model.LostPartition{Topic: c.Topic, Partition: c.Partition, Reached: reachedDR(rb.laterSync(flow, c))})
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
			p.Reached = model.Reached{How: fmt.Sprintf("the cut (offset %d) is past the primary's log end %d: the topic's log is not the one the mirror copied", p.Reached.From, b.End)}
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
