package model

import (
	"fmt"
	"strings"
	"time"
)

// What the savepoint catalog judges of a savepoint, as the pages show it.

// Verdict says whether a savepoint can still be restored without a gap.
type Verdict string

const (
	VerdictUsable   Verdict = "usable"
	VerdictUnusable Verdict = "unusable"
	VerdictUnknown  Verdict = "unknown"
)

// PartitionUsability is one source partition of a savepoint.
type PartitionUsability struct {
	Source TP    // the primary topic partition, as in the savepoint
	DR     TP    // its name in DR
	Offset int64 // the savepoint's next offset to read on the primary
	// PrimaryLogStart is the primary's log-start offset; nil when unknown
	// (the primary did not answer). PrimaryDeleted: it passed Offset, so
	// records the job has not read yet were deleted by retention.
	PrimaryLogStart *int64
	PrimaryDeleted  bool
	// Translation maps Offset to DR (MM2 offset syncs; for Cluster
	// Linking the offset itself, MethodPreserved).
	Translation Translation
	// DRLogStart is DR's log-start offset; nil when unknown. DRDeleted: it
	// passed the translated offset.
	DRLogStart *int64
	DRDeleted  bool
	// DRLogEnd is DR's log-end offset, checked for Cluster Linking only
	// (nil otherwise or when unknown). DRBehind: the mirror has not yet
	// copied up to the savepoint's offset.
	DRLogEnd *int64
	DRBehind bool
	// Primary and DR are this partition's verdicts for a restore on that
	// side; Problems says why when not usable.
	Primary, DRVerdict Verdict
	Problems           []string
}

// DROffset is the translated DR offset; nil when untranslatable.
func (p *PartitionUsability) DROffset() *int64 {
	if !p.Translation.Translated() {
		return nil
	}
	v := p.Translation.Offset
	return &v
}

// Usability is whether a savepoint's Kafka data still exists, on the
// primary (restore there with the savepoint's own offsets) and in DR
// (restore there with translated offsets).
type Usability struct {
	SavepointID int64
	Flow        string
	At          time.Time
	// Verdict is the overall answer: Unusable when data the job needs is
	// gone on either side or a partition cannot be translated; Unknown when
	// nothing is known to be missing but something could not be checked;
	// Usable when everything was checked and is there.
	Verdict Verdict
	// Primary and DR are the verdicts for a restore on that side.
	Primary, DR Verdict
	Partitions  []PartitionUsability
	// Unusable names the partitions that make it unusable, with why
	// ("events-3: data deleted in DR ..."); Untranslatable the partitions
	// without a DR offset.
	Unusable       []string
	Untranslatable []string
	// PrimaryErr and DRErr say why a side could not be checked.
	PrimaryErr, DRErr string
	// Notes: whatever else the reader should know (offsets not read,
	// partitions left out of the offsets).
	Notes []string
}

// SavepointChoice is a catalog entry offered to a restore, with its
// verdict against the flow (Unknown when it was not judged in time).
type SavepointChoice struct {
	Savepoint Savepoint
	Verdict   Verdict
	Why       string // what keeps it from being usable; "" when usable or unjudged
}

// RestoreStrategy is one way to restore a savepoint in DR, judged for a
// flow.
type RestoreStrategy struct {
	N                    int
	Title, How, TradeOff string
	// Fits says whether it applies to the chosen flow, and why (not).
	Fits        bool
	FitsWhy     string
	Recommended bool
}

// RewriteState says whether a savepoint's KafkaSource splits can be
// rewritten: Err why not ("" when they can), Markers the splits holding a
// start marker instead of an offset (each needs an operator's choice).
type RewriteState struct {
	Err     string
	Markers []string
}

// Why summarises what keeps a savepoint from being usable ("" when it is).
func (u Usability) Why() string {
	var parts []string
	switch u.Verdict {
	case VerdictUsable:
		return ""
	case VerdictUnusable:
		parts = u.Unusable
	default:
		if len(u.Untranslatable) > 0 {
			parts = append(parts, fmt.Sprintf("%d partition(s) without a DR offset yet", len(u.Untranslatable)))
		}
		// The sentence only: the client's own words are on the
		// savepoint's usability check, folded.
		if u.PrimaryErr != "" {
			parts = append(parts, "primary: "+sentence(u.PrimaryErr))
		}
		if u.DRErr != "" {
			parts = append(parts, "DR: "+sentence(u.DRErr))
		}
		parts = append(parts, u.Notes...)
	}
	s := strings.Join(parts, "; ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// sentence is a cluster error's text without the client's own words.
func sentence(err string) string {
	head, _, _ := strings.Cut(err, RawErrSep)
	return head
}
