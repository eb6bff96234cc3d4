package model

// RunStatus is where a failover run stands.
type RunStatus string

// The statuses of a run (storage checks them too: a CHECK constraint).
const (
	RunPending   RunStatus = "pending"   // waiting for its approvals
	RunApproved  RunStatus = "approved"  // approved, no step started
	RunRejected  RunStatus = "rejected"  // an operator rejected it: final
	RunRunning   RunStatus = "running"   // a step has started
	RunCompleted RunStatus = "completed" // every step done: final
	RunFailed    RunStatus = "failed"    // a step failed; it may be retried
	RunCancelled RunStatus = "cancelled" // ended before completing: final
)

// StepStatus is where one step of a run stands.
type StepStatus string

// The statuses of a step.
const (
	StepPending StepStatus = "pending"
	StepRunning StepStatus = "running"
	StepDone    StepStatus = "done"
	StepFailed  StepStatus = "failed"
)

// Decision is what an approver decided about a plan.
type Decision string

// The decisions.
const (
	DecisionApprove Decision = "approve"
	DecisionReject  Decision = "reject"
)

// Run is a failover run: its plan, approvals and steps.
type Run struct {
	ID                int64
	Flow              string
	Reason            string
	CreatedBy         string
	CreatedMs         int64
	UpdatedMs         int64
	Status            RunStatus
	PlanJSON          string
	PlanHash          string
	ApprovalsRequired int
	BreakGlass        string
	Approvals         []Approval
	Steps             []Step
}

// Approval is an approval or rejection of a run's plan.
type Approval struct {
	ID        int64
	Approver  string
	Decision  Decision
	Reason    string
	PlanHash  string
	AtMs      int64
	ExpiresMs int64
}

// Step is a step's execution record.
type Step struct {
	Idx        int
	Kind       string
	Status     StepStatus
	Attempts   int
	StartedMs  int64
	FinishedMs int64
	StartedBy  string
	Result     string
	Error      string
	// Runner is the console process running it ('' once released).
	Runner string
}

// FailedOverSpan is a time a flow was failed over: from the completion of
// failover run Run to that of the failback run UntilRun (UntilMs 0 and
// UntilRun 0 while DR is still active).
type FailedOverSpan struct {
	Run      int64
	FromMs   int64
	UntilMs  int64
	UntilRun int64
}
