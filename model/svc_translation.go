package model

import "time"

// GroupRow is one partition of a group translation preview.
type GroupRow struct {
	Source TP    // primary topic partition
	DR     TP    // its name in DR
	Offset int64 // the group's next offset to read on the primary
	// Current is the DR group's committed offset now; nil when none.
	Current     *int64
	Translation Translation
	// Checkpoint is MM2's own translation from its latest checkpoint, for
	// comparison; nil when MM2 has none for this partition.
	Checkpoint *int64
}

// GroupPlan is a preview of moving a DR consumer group to the translated
// offsets of its primary counterpart. Nothing changes until failover
// commits it (the runbook's offset commit).
type GroupPlan struct {
	Flow  string
	Group string
	From  string // where the primary's offsets were read (translation.FromPrimary, ...)
	At    time.Time
	Rows  []GroupRow
	// DRState is the DR group's state ("Empty", "Stable", "Dead" for none).
	DRState   string
	DRMembers int
}

// Untranslatable counts rows that cannot be moved.
func (p *GroupPlan) Untranslatable() int {
	n := 0
	for _, r := range p.Rows {
		if !r.Translation.Translated() {
			n++
		}
	}
	return n
}

// Proposed returns the offsets Apply would commit: translated rows only.
func (p *GroupPlan) Proposed() map[TP]int64 {
	out := map[TP]int64{}
	for _, r := range p.Rows {
		if r.Translation.Translated() {
			out[r.DR] = r.Translation.Offset
		}
	}
	return out
}
