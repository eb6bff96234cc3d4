package model

import (
	"context"
	"fmt"
	"io"
	"time"
)

// The records the old primary holds beyond what reached DR before a
// failover, as runbook/failover works them out for the lost-records page
// and its export.

// Reached is what is known, from a failover's cut, of the primary records
// of one partition that reached DR before the failover.
type Reached struct {
	// Known: From is established. Every primary record below From is in
	// DR; none from From on is known to be.
	Known bool
	From  int64
	// InDRAtMost bounds how many records from From on may be in DR all the
	// same: DR's records past the newest sync, whose upstream offsets no
	// sync names. 0: none, From is the exact cut. -1: no bound.
	InDRAtMost int64
	// How says where From comes from, or why it is unknown.
	How string
}

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
func (p LostPartition) TP() TP { return TP{Topic: p.Topic, Partition: p.Partition} }

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
	Active ActiveSide
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

// LostExport is an export of the records lost to DR, checked and on
// record, ready to stream as JSON lines.
type LostExport interface {
	// Filename names the export's file.
	Filename() string
	// WriteTo streams the export to w, its last line saying whether it
	// is whole.
	WriteTo(ctx context.Context, w io.Writer) error
}
