package model

// DrillCleanup is where a drill's cleanup stands: the drill job cancelled
// and its temporary consumer groups deleted.
type DrillCleanup string

// The cleanup statuses (storage checks them too).
const (
	CleanupPending DrillCleanup = "pending" // not tried yet (the drill runs, or its process died)
	CleanupRunning DrillCleanup = "running" // being done (found at start-up: interrupted)
	CleanupDone    DrillCleanup = "done"    // nothing of the drill is left in DR
	CleanupFailed  DrillCleanup = "failed"  // tried and failed: retried at CleanupNextMs
)

// DrillOutcome is how a drill's steps ended.
type DrillOutcome string

// The outcomes.
const (
	DrillInProgress DrillOutcome = ""
	DrillMeasured   DrillOutcome = "measured" // every step done: the figures are in
	DrillFailed     DrillOutcome = "failed"   // a step failed, or the process died mid-drill
)

// Drill is a DR drill's record: a copy of the Flink job restored in DR
// with temporary consumer groups, timed, then cleaned up. Nil figures are
// unknown, never zero.
type Drill struct {
	RunID       int64
	Flow        string
	StartedMs   int64
	FlinkTarget string
	JobID       string
	Groups      []string
	// SubmittedMs, RunningMs and FirstRecordMs are when the job was
	// submitted, first RUNNING and first counted a record processed.
	SubmittedMs   *int64
	RunningMs     *int64
	FirstRecordMs *int64
	// RPOMs is the flow's RPO when the first record was processed
	// (RPOAtLeast: a lower bound); nil: unknown.
	RPOMs      *int64
	RPOAtLeast bool
	// Reread holds each translating step's re-read bound, by step index;
	// RereadExpected is how many steps owe one.
	Reread         map[string]int64
	RereadExpected int
	// RulesFailed are the safety rules a real failover would have failed
	// (name: evidence); the drill did not stop for them.
	RulesFailed     []string
	Outcome         DrillOutcome
	Error           string
	Cleanup         DrillCleanup
	CleanupAttempts int
	CleanupError    string
	CleanupNextMs   int64
	CleanupDoneMs   *int64
}

// RTOMs is the achieved RTO: from the drill's start to the first record
// processed; nil while (or when) no record was seen.
func (d Drill) RTOMs() *int64 { return since(d.StartedMs, d.FirstRecordMs) }

// ToRunningMs is the time from the drill's start to the job RUNNING.
func (d Drill) ToRunningMs() *int64 { return since(d.StartedMs, d.RunningMs) }

func since(from int64, to *int64) *int64 {
	if to == nil {
		return nil
	}
	v := *to - from
	return &v
}

// RereadMax bounds the records the drill job read twice, summed over its
// translating steps; nil when a step's bound is not on record.
func (d Drill) RereadMax() *int64 {
	if len(d.Reread) < d.RereadExpected {
		return nil
	}
	var n int64
	for _, v := range d.Reread {
		n += v
	}
	return &n
}

// Succeeded: every step done, a first record seen, and the cleanup
// finished. A drill whose cleanup has not finished is never a success.
func (d Drill) Succeeded() bool {
	return d.Outcome == DrillMeasured && d.FirstRecordMs != nil && d.Cleanup == CleanupDone
}
