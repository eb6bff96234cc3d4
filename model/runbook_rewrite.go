package model

// RewritePreview is a rewrite-savepoint step as the plan form shows it
// before the plan exists: what the step would do and write (Lines), and
// the savepoint's splits that need an operator's choice (no translation
// now, and nothing else stops them).
type RewritePreview struct {
	Lines      []string
	NeedChoice []RewriteSplit
}

// RewriteSplit is one split of the savepoint and where it is in DR.
type RewriteSplit struct {
	Key     string // the split's "topic-partition" in the savepoint
	DR      TP     // its partition in DR
	Subtask int
	// Offset is the split's next offset on the primary; Marker names a
	// negative one (a split the reader had not started).
	Offset int64
	Marker string
	// Translation is the sync index's answer (zero for a marker).
	Translation Translation
}
