// Package translation moves consumer groups across a mirror: it previews
// where a DR consumer group should resume so that it continues where its
// primary counterpart stopped (GroupTranslator.Plan, PlanOffsets for a
// savepoint's offsets) and what an applied change replaced (UndoOffsets),
// and where each split of a savepoint's Kafka source resumes in DR when
// the savepoint is rewritten (RewriteTargets, with the operators' choices
// for partitions that do not translate).
// It joins three sources: the offset-sync index and translation rule of
// package mm2, MM2's checkpoints and the primary's group offsets as the
// monitor recorded them (storage), and live group reads of package kafka.
// It only reads: committing offsets is an effect, in
// runbook/internal/effect.
package translation
