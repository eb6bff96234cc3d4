package views

import "github.com/drconsole/drconsole/model"

// What the plan, savepoint and translate pages show of Flink's answers and
// of a rewrite's splits, filled by handlers (handlers/viewmodel_plan.go).

// Jar is a jar uploaded to a Flink target; Entries are the program
// classes Flink found in its manifest (none: a run must name one).
type Jar struct {
	ID, Name string
	Uploaded int64 // epoch ms
	Entries  []string
}

// TargetJobs is what one Flink target's job list answered.
type TargetJobs struct {
	Target, Region string
	Jobs           []FlinkJob
	Err            string // why the target could not be asked; "" when it answered
}

// FlinkJob is one job of a Flink target; Running: Flink says it runs
// (only a running job can take a savepoint).
type FlinkJob struct {
	ID, Name, State string
	Running         bool
}

// TargetRow is one split of a savepoint's Kafka source that a rewrite
// needs an operator's choice for.
type TargetRow struct {
	Key     string // the split's "topic-partition" in the savepoint
	DRKey   string // its partition's name in DR, "topic-partition"
	Subtask int
	// Offset is the split's next offset on the primary; Marker names a
	// negative one (a split the reader had not started).
	Offset      int64
	Marker      string
	Translation model.Translation
}
