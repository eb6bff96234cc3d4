package model

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// A consumer group's failover quality, as the monitor computes it once per
// refresh: if DR took over now, how many records would the group read
// again, which of its partitions could not be translated and why, and how
// old the figures it rests on are. Nil numbers are unknown and are shown
// as unknown, never as 0.

// Where a group partition's primary offset came from.
const (
	OffsetFromPrimary    = "primary"    // the primary's committed offset, as the console last read it
	OffsetFromCheckpoint = "checkpoint" // MM2's checkpoint (its upstream offset), newer than any reading
)

// GroupPartitionQuality is one partition of a group's failover quality.
type GroupPartitionQuality struct {
	Source TP // primary topic partition
	DR     TP // its name in DR
	// Offset is the group's next offset to read on the primary; OffsetAt
	// when it was read, OffsetFrom from where (OffsetFromPrimary, ...).
	Offset     int64
	OffsetAt   time.Time
	OffsetFrom string
	// Method is how the offset translated; DROffset where the group would
	// resume in DR (only when translated).
	Method   TranslationMethod
	DROffset int64
	// Reread bounds the records the group would read again in DR on this
	// partition (an upper bound: offsets counted, records may be fewer);
	// nil when it cannot be established (Problem says why).
	Reread *int64
	// Problem says why the partition could not be translated; "" when it
	// was.
	Problem string
	// PastNewestSync: the offset is past the newest offset sync (at
	// upstream NewestSyncUpstream), so the bound grows with each record
	// until MM2 writes the next (Note says so).
	PastNewestSync     bool
	NewestSyncUpstream int64
	// SyncAt is the record time of the newest usable offset sync (the
	// newest at or below Offset); zero when there is none.
	SyncAt time.Time
	// CheckpointAt is the time of MM2's checkpoint of this partition;
	// zero when MM2 has none.
	CheckpointAt time.Time
}

// Note says what else an operator should know of the partition; "" when
// nothing. Made when shown: a sentence per partition kept in every
// snapshot would cost more than the figures.
func (p *GroupPartitionQuality) Note() string {
	if !p.PastNewestSync {
		return ""
	}
	return fmt.Sprintf("offset %d is past the newest offset sync (upstream %d): MM2 writes syncs only every so many records, so this bound grows with each record until it writes the next", p.Offset, p.NewestSyncUpstream)
}

// GroupQuality is one consumer group's failover quality.
type GroupQuality struct {
	Group string
	// Configured: named in the flow's groups: list; Critical and Objective
	// (0: none) come from there.
	Configured bool
	Critical   bool
	Objective  int64
	// Partitions are sorted by topic and partition.
	Partitions []GroupPartitionQuality
	// Reread is the sum of the partitions' bounds; nil when any is
	// unknown or no offsets are known at all. RereadKnown is the sum over
	// the partitions that have one: with Reread nil it bounds those
	// partitions only, and says nothing of the others (an untranslated
	// partition resumes as the group's auto.offset.reset says, which may
	// read it all again).
	Reread      *int64
	RereadKnown int64
	// Untranslated counts the partitions that could not be translated.
	Untranslated int
	// OldestSyncAt is the oldest of the partitions' newest usable syncs
	// (the worst partition's); zero when some partition has none.
	OldestSyncAt time.Time
	// CheckpointAt is MM2's newest checkpoint of the group; zero: none.
	CheckpointAt time.Time
	// OffsetsAt is when the oldest primary offset used was read; zero
	// when none is known.
	OffsetsAt time.Time
	// OffsetsStale: the primary does not answer, so the offsets are the
	// last known ones and commits the group made since add records to
	// reprocess that no figure here counts: Reread is then nil (unknown)
	// and RereadKnown bounds only what the last reading covers.
	OffsetsStale bool
	// Problem says why nothing could be computed for the group (no
	// offsets known for it at all); "" otherwise.
	Problem string
}

// Known reports whether the group's bound is established.
func (g *GroupQuality) Known() bool { return g.Reread != nil }

// OverObjective reports whether the group has an objective and its bound
// exceeds it or cannot be established (fail closed).
func (g *GroupQuality) OverObjective() bool {
	return g.Objective > 0 && (g.Reread == nil || *g.Reread > g.Objective)
}

// FlowGroups are a flow's consumer groups' failover quality as of one
// refresh.
type FlowGroups struct {
	At time.Time
	// Groups are worst first (WorstFirst).
	Groups []GroupQuality
	// Cap is the most groups computed per refresh; Over counts those
	// left out beyond it (configured groups come first), OverNames names
	// the first few.
	Cap       int
	Over      int
	OverNames []string
	// Err says why the figures are incomplete (a storage read failed);
	// "" when they are not. With Err set the worst group is unknown.
	Err string
}

// Worst is the flow's worst group: the first with an unknown bound, else
// the one with the largest. ok is false when there are no groups. A bound
// is nil (unknown) when any group's is, when groups were left out by the
// cap, or when a read failed: never a smaller figure than the truth.
func (f *FlowGroups) Worst() (g *GroupQuality, bound *int64, ok bool) {
	if f == nil || (len(f.Groups) == 0 && f.Over == 0 && f.Err == "") {
		return nil, nil, false
	}
	if len(f.Groups) > 0 {
		g = &f.Groups[0] // WorstFirst: an unknown bound, else the largest
		bound = g.Reread
	}
	if f.Over > 0 || f.Err != "" {
		bound = nil
	}
	return g, bound, true
}

// WorstFirst sorts groups worst first: unknown bounds (more untranslated
// partitions first), then the largest bound, then by name. The first is
// the flow's worst (Worst).
func WorstFirst(gs []GroupQuality) {
	slices.SortStableFunc(gs, func(a, b GroupQuality) int {
		if a.Known() != b.Known() {
			if !a.Known() {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.Untranslated, a.Untranslated); c != 0 {
			return c
		}
		if a.Known() {
			if c := cmp.Compare(*b.Reread, *a.Reread); c != 0 {
				return c
			}
		}
		return strings.Compare(a.Group, b.Group)
	})
}
