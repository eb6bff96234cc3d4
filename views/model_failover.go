package views

import (
	"time"

	"github.com/drconsole/drconsole/model"
)

// The runbook's data as its pages show it. Handlers fill these from the
// runbook's own types (handlers/viewmodel_failover.go), so the pages do
// not import the runbook, nor the clients it reaches.

// ActiveSide is which side of a flow is active, and the run that made it so.
type ActiveSide struct {
	Flow string
	Side model.Side
	// Run is the completed run that moved the flow to Side, SinceMs when
	// it completed; zero while the flow never failed over.
	Run     int64
	SinceMs int64
}

// Run is a stored run with what its page shows of its plan and its
// approval state now.
type Run struct {
	model.Run
	Plan           RunPlan
	ValidApprovers []string
	Approved       bool
	// Discounted says, per approver, why their approval does not count.
	Discounted map[string]string
	// NextStep is the first step not done, -1 when all are.
	NextStep int
	// LostAtCut is what the failover lost at the cut; "" when not known.
	LostAtCut string
	// ReverseActive: a failback whose reverse connectors exist now.
	ReverseActive bool
	// Results are the done steps' results as labelled figures, by step
	// index (the raw JSON stays in Steps[i].Result).
	Results map[int][]Figure
	// Verdict is a switchover's verdict once its last step is done: RPO
	// 0, verified, or what was not.
	Verdict string
	// Rollback says what rolling the run back would undo ("" when
	// nothing can be).
	Rollback string
}

// Figure is one labelled value of a step's result, shown as recorded:
// a "≥" or an "unknown" in it is part of the value.
type Figure struct {
	Label string
	Value string
}

// Finished is what a run page shows once its run has completed: how long
// it took, which side is active now, what to do next (what the cut lost
// is the run's LostAtCut, shown above it).
type Finished struct {
	// Took is from the request to completion; Steps from the first step's
	// start to the last one's end.
	Took, Steps time.Duration
	Active      *ActiveSide
	// ActiveErr says why the active side is not known.
	ActiveErr string
}

// WaitingRuns are the runs waiting for the signed-in user's decision.
type WaitingRuns struct {
	Runs []model.Run
	// Err: the runs could not be read; the count is unknown.
	Err string
}

// RunPlan is what the run page needs of a run's plan.
type RunPlan struct {
	Drill      bool
	Failback   bool
	Switchover bool
	FailbackOf int64
	// RestsOn[i]: step i rests on inputs a second operator must re-check.
	RestsOn []bool
}

// RestsOnInputs reports whether step i rests on such inputs.
func (p RunPlan) RestsOnInputs(i int) bool { return i >= 0 && i < len(p.RestsOn) && p.RestsOn[i] }

// RuleResult is a safety rule evaluated now, with its evidence.
type RuleResult struct {
	Name        string
	OK          bool
	Overridable bool
	Evidence    string
}

// StepPreview says what a step will change, computed now.
type StepPreview struct {
	Idx          int
	Title        string
	Irreversible bool
	Lines        []string
	Rules        []RuleResult
	Err          string // the preview itself failed
}

// CachedPreview is a step's preview as the run page shows it.
type CachedPreview struct {
	StepPreview
	// Computed is false when there is no preview of this step for the
	// current plan (Changed then says why, when the plan was replaced).
	Computed bool
	At       time.Time
	// Changed describes each input that differs now from the preview's.
	Changed []string
}

// RewritePreview is what a rewrite step would write, as lines.
type RewritePreview struct {
	Lines []string
}

// LostToDR is the lost-records view of a flow now DR is active.
type LostToDR struct {
	Active ActiveSide
	// Recorded: the failover run recorded where the mirror stopped.
	Recorded   bool
	Partitions []LostPartition
	PrimaryErr string
	AtMs       int64
	// Total is the records lost in all; TotalAge how old the last-known
	// figures among them are ("" when none is).
	Total    string
	TotalAge string
}

// LostPartition is what the old primary holds of one partition beyond
// what reached DR before the failover.
type LostPartition struct {
	Topic     string
	Partition int32
	// Known: the cut and the primary's log are known; Figure is the count
	// in words, How where the cut comes from.
	Known           bool
	Figure          string
	How             string
	From, End       int64
	Deleted         int64
	Records         int64
	Counted         bool
	FirstMs, LastMs int64
	AsOfMs          int64
}

// SavepointTrigger is a savepoint taken through this console, in progress
// or recently finished (the worker's record of it).
type SavepointTrigger struct {
	ID                     int64
	Target, JobID, JobName string
	Actor                  string
	Started                time.Time
	Waited                 time.Duration
	Done                   bool
	Err                    string
	ResultID               int64
	ResultPath             string
	Finished               time.Time
}
