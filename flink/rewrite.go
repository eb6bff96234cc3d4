package flink

// The savepoint rewriter (issue 14): a new savepoint whose KafkaSource
// state points at the DR cluster. This file is its contract (the types its
// callers build against) and entry points; rewrite_plan.go decides which
// bytes change, rewrite_dest.go writes and checks the result.

import (
	"context"
	"errors"
	"fmt"
)

// SplitTarget is where one KafkaSource split resumes after a rewrite.
type SplitTarget struct {
	// Topic is the split's topic in DR: the source topic's remote name
	// under the flow's replication policy (the same name under identity).
	Topic string
	// Offset is the next offset to read in DR (>= 0), or OffsetEarliest /
	// OffsetLatest when the operator chose that for a partition without a
	// translation. Never OffsetCommitted: the restored job's group may not
	// exist in DR.
	Offset int64
	// Why records how Offset was reached ("translated", "earliest (chosen
	// by alice)", "timestamp 2026-12-01T07:00:00Z (chosen)", ...); it is
	// carried into the result for the audit record and the preview.
	Why string
}

// RewriteRequest asks for a rewritten copy of a savepoint.
type RewriteRequest struct {
	// Source is the savepoint directory (a local path, file: URI or a
	// remote URI served by Files); it is never modified.
	Source string
	// Dest is the new savepoint directory; it must not exist.
	Dest string
	// SourceUID selects the KafkaSource operator as FindSourceOperator
	// does (uid, operator id, or "" when there is exactly one).
	SourceUID string
	// Targets holds one entry per split of the source's reader state,
	// keyed by its primary "topic-partition" (PartitionOffset.Key). A
	// split without an entry stops the rewrite: nothing is written.
	Targets map[string]SplitTarget
	// Files serves remote Source/Dest URIs (S3); nil: local only. A
	// remote Dest needs Files to be WritableFiles too.
	Files Files
	// Roots are further directories state handles may be read from, as
	// for ReadSavepoint.
	Roots []string
	// OnWrite, when set, is called after each file of the new savepoint
	// is written, with its path relative to Dest (`_metadata` comes
	// last); an error stops the rewrite, which then removes what it
	// wrote. For progress reports and for tests that stop it midway.
	OnWrite func(name string) error
}

// RewrittenSplit is one split before and after.
type RewrittenSplit struct {
	From PartitionOffset // its Subtask and Stopping are carried over
	To   SplitTarget
}

// RewriteResult says what the rewrite wrote.
type RewriteResult struct {
	// Path is the new savepoint directory, holding its `_metadata`.
	Path   string
	Splits []RewrittenSplit
	// RenamedTopics maps each primary topic to its DR name where they
	// differ (reader and enumerator state alike).
	RenamedTopics map[string]string
	// CopiedFiles/CopiedBytes count the state files copied next to the
	// new `_metadata` (relative handles of every operator).
	CopiedFiles int
	CopiedBytes int64
	// RemovedLeftovers are the hidden build directories of earlier,
	// killed or crashed rewrites to the same local Dest, removed before
	// this one was built.
	RemovedLeftovers []string `json:",omitempty"`
}

// ErrRewriteRefused wraps every reason a savepoint cannot be rewritten
// faithfully; nothing is left at Dest when it is returned.
var ErrRewriteRefused = errors.New("flink: savepoint cannot be rewritten")

// Rewrite writes a copy of req.Source at req.Dest with the KafkaSource
// reader splits (and the enumerator's view of them) moved to their
// targets, every other byte of state carried over, then reads the result
// back and checks it holds exactly the targets before returning.
//
// The new `_metadata` is the source's with only these byte spans replaced:
// the source operator's coordinator state, each of its subtasks' managed
// operator state handle, and absolute file handles inside the source
// directory (made relative). Relative state files are copied under the
// same names; a file-backed reader state is written to a new file.
// A local Dest is built in a hidden sibling directory and renamed into
// place; a remote one (req.Files, with WritableFiles) gets its `_metadata`
// last. On any error, or when ctx ends, what was written is removed.
func Rewrite(ctx context.Context, req RewriteRequest) (*RewriteResult, error) {
	if req.Source == "" || req.Dest == "" {
		return nil, refused("a rewrite needs a source and a destination")
	}
	sp, plan, err := prepareRewrite(ctx, req)
	if err != nil {
		return nil, err
	}
	dest, err := openRewriteDest(ctx, req, sp)
	if err != nil {
		return nil, err
	}
	res, err := writeRewrite(ctx, req, sp, plan, dest)
	if err != nil {
		dest.abort()
		return nil, err
	}
	return res, nil
}

// CheckRewrite runs the checks of Rewrite that write nothing: it reads the
// source, checks the targets against its splits and plans the new
// `_metadata`, and returns what Rewrite would write: Path empty,
// CopiedFiles/CopiedBytes the state files it would copy and their
// declared sizes. For a preview: nil does not promise the write succeeds
// (Dest, storage errors and the read-back check come with Rewrite).
func CheckRewrite(ctx context.Context, req RewriteRequest) (*RewriteResult, error) {
	_, plan, err := prepareRewrite(ctx, req)
	if err != nil {
		return nil, err
	}
	for _, f := range plan.files {
		if f.data == nil {
			plan.result.CopiedFiles++
			plan.result.CopiedBytes += max(f.size, 0)
		}
	}
	return plan.result, nil
}

// prepareRewrite reads the source and plans the rewrite.
func prepareRewrite(ctx context.Context, req RewriteRequest) (*Savepoint, *rewritePlan, error) {
	sp, err := openRewriteSource(req)
	if err != nil {
		return nil, nil, err
	}
	plan, err := planRewrite(ctx, sp, req.SourceUID, req.Targets)
	if err != nil {
		return nil, nil, err
	}
	return sp, plan, nil
}

// refused is a RewriteRefused error with its reason.
func refused(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRewriteRefused, fmt.Sprintf(format, args...))
}
