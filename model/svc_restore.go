package model

import (
	"fmt"
	"slices"
	"strings"
)

// renamedTopics lists "source → DR" for the savepoint's topics whose
// names differ in DR; "" when none do or usability is not known.
func renamedTopics(u *Usability) string {
	if u == nil {
		return ""
	}
	var out []string
	for _, pu := range u.Partitions {
		if pu.DR.Topic != pu.Source.Topic {
			if r := pu.Source.Topic + " → " + pu.DR.Topic; !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return strings.Join(out, ", ")
}

// RestoreFor is the restore a savepoint is judged for: the chosen flow
// ("" when none is configured), whether it is a Cluster Linking flow, and
// the savepoint's usability against it (nil when unknown).
type RestoreFor struct {
	Flow        string
	ClusterLink bool
	Usability   *Usability
	// Rewrite is what reading the savepoint's Kafka source for a rewrite
	// found; nil when not read (the rewrite is then not recommended).
	Rewrite *RewriteState
	// Chosen are the partitions ("topic-partition") an operator has made
	// a choice for (earliest, latest, timestamp): they need no translation.
	Chosen []string
}

// rewriteFits says whether the rewrite applies (every partition
// translatable or chosen, the source state readable), and why (not).
func rewriteFits(p RestoreFor) (bool, string) {
	u := p.Usability
	switch {
	case p.Rewrite == nil:
		return false, "Not judged: the savepoint's Kafka source state was not read."
	case p.Rewrite.Err != "":
		return false, "Not this savepoint: " + p.Rewrite.Err
	case u == nil || len(u.Partitions) == 0:
		return false, "Not judged: the savepoint's offsets are not known against this flow."
	}
	var open []string
	for _, key := range append(slices.Clone(u.Untranslatable), p.Rewrite.Markers...) {
		if !slices.Contains(p.Chosen, key) && !slices.Contains(open, key) {
			open = append(open, key)
		}
	}
	if len(open) > 0 {
		return false, fmt.Sprintf("Not yet: %d partition(s) have no DR offset (%s): choose earliest, latest or a timestamp for each in the plan, then it applies.",
			len(open), strings.Join(open, ", "))
	}
	return true, ""
}

// RestoreStrategies are README "Savepoints"' restores, judged for the
// chosen flow; the second value is the recommended one among the first
// two, for the Kubernetes form (1 or 2).
func RestoreStrategies(p RestoreFor) ([]RestoreStrategy, int) {
	s := []RestoreStrategy{
		{N: 1, Title: "The same savepoint, unchanged",
			How:      "Restore this savepoint as it is, with the job pointed at DR Kafka (same topic names).",
			TradeOff: "Exact: no record skipped or read twice. Needs an offset-preserving mirror (Cluster Linking) caught up past the savepoint's offsets."},
		{N: 2, Title: "Translated offsets, new source uid",
			How: "Translate the savepoint's offsets to DR, commit them to the job's DR consumer group, and restore this savepoint " +
				"with a new uid on the Kafka source and allowNonRestoredState, the source starting from the group's committed offsets.",
			TradeOff: "No skipped data; up to the stated re-read count processed twice; the other operators' state is no longer exactly aligned with the source position."},
		{N: 3, Title: "Timestamp start",
			How:      "Start the source at a timestamp (OffsetsInitializer.timestamp) in DR, from this savepoint with a new source uid or from empty state.",
			TradeOff: "Simplest, needs no offset syncs; at-least-once around the boundary, and the timestamp is the producer's, not event time."},
		{N: 4, Title: "Rewritten savepoint, same source uid",
			How: "Write a copy of this savepoint whose KafkaSource state (every split, and the enumerator) holds the DR offsets and the DR topic names " +
				"(runbook step rewrite-savepoint), then restore that copy with the same source uid and without allowNonRestoredState.",
			TradeOff: "Keeps all state aligned, the source's own included, and needs no consumer-group offsets; up to the stated re-read count processed twice " +
				"on translated partitions. Partitions without a translation start where an operator chooses (earliest re-reads, latest skips, timestamp is at-least-once)."},
	}
	rec := 2
	rewriteOK, rewriteWhy := rewriteFits(p)
	switch {
	case p.Flow == "":
		for i := range s {
			s[i].FitsWhy = "no flow configured"
		}
	case p.ClusterLink && renamedTopics(p.Usability) != "":
		// KafkaSource state is keyed by topic name: the savepoint's
		// partitions do not exist under the mirror's names.
		s[0].FitsWhy = "Not as it is: the link renames topics (" + renamedTopics(p.Usability) + "), and the source's state names the old ones."
		s[3].Fits, s[3].FitsWhy = rewriteOK, rewriteWhy
		if rewriteOK {
			s[3].Recommended, s[3].FitsWhy = true, "The link keeps offsets and renames topics: the rewrite renames them in the source's state ("+
				renamedTopics(p.Usability)+"), offsets unchanged: the exact restore."
		}
		s[1].Fits, s[1].Recommended, s[1].FitsWhy = true, !rewriteOK,
			"Cluster Linking keeps offsets, so no translation: commit the savepoint's offsets under the mirror's topic names to the job's DR group "+
				"(by hand, e.g. kafka-consumer-groups.sh --reset-offsets --from-file: the runbook translates groups only for MirrorMaker 2 flows), "+
				"then restore with a new source uid."
		s[2].Fits, s[2].FitsWhy = true, "Fallback when the mirror is not caught up past the savepoint."
	case p.ClusterLink:
		rec = 1
		s[0].Fits, s[0].Recommended, s[0].FitsWhy = true, true, "Cluster Linking preserves offsets and these topic names: this is the exact restore."
		s[1].FitsWhy = "Not needed: the offsets are the same in DR."
		s[2].Fits, s[2].FitsWhy = true, "Fallback when the mirror is not caught up past the savepoint."
		s[3].FitsWhy = "Not needed: the same offsets and topic names in DR."
	default:
		s[0].FitsWhy = "Not for MirrorMaker 2: DR offsets differ from the primary's, the job would start at the wrong records."
		s[1].Fits, s[1].Recommended, s[1].FitsWhy = true, true, "MirrorMaker 2: the offsets must be translated."
		s[2].Fits, s[2].FitsWhy = true, "Fallback when partitions cannot be translated (no usable offset syncs)."
		if u := p.Usability; u != nil && len(u.Partitions) > 0 {
			var reread int64
			for _, pu := range u.Partitions {
				if pu.Translation.Translated() {
					reread += pu.Translation.RereadMax
				}
			}
			s[1].FitsWhy += fmt.Sprintf(" Now: %d of %d partition(s) translate, at most %d record(s) re-read.",
				len(u.Partitions)-len(u.Untranslatable), len(u.Partitions), reread)
			if len(u.Untranslatable) == len(u.Partitions) {
				s[1].Recommended = false
				s[2].Recommended = true
				s[2].FitsWhy = "No partition translates now: the timestamp start is what is left."
			}
		}
		s[3].Fits, s[3].FitsWhy = rewriteOK, rewriteWhy
		if rewriteOK {
			// The rewrite keeps the source's own state: preferred over a
			// new uid, and over a timestamp once every partition is chosen.
			s[1].Recommended, s[2].Recommended, s[3].Recommended = false, false, true
			s[3].FitsWhy = fmt.Sprintf("MirrorMaker 2: every partition translates or has an operator's choice (%d chosen); the job keeps its source uid and state.",
				len(p.Chosen))
			s[1].FitsWhy += " An alternative: it drops the source's own state and depends on the group's committed offsets."
		}
	}
	return s, rec
}
