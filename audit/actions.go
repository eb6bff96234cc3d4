package audit

import "github.com/drconsole/drconsole/storage"

// Action is what a record says was done. Its values are in the hash chain
// and in operators' filters, so a constant's value never changes.
type Action string

// The runbook's records of a run's life.
const (
	FailoverPlan                Action = "failover.plan"                  // a plan requested (the run is created in its transaction)
	FailoverPlanChanged         Action = "failover.plan-changed"          // a run refused at approval: its plan differs from what was requested
	FailoverApprove             Action = "failover.approve"               // an approval of a run
	FailoverReject              Action = "failover.reject"                // a rejection of a run
	FailoverSelfApprovalRefused Action = "failover.self-approval-refused" // a requester tried to approve their own run
	FailoverCancel              Action = "failover.cancel"                // a run cancelled
	FailoverBreakGlass          Action = "failover.BREAK-GLASS"           // a run forced on without its approvals
	FailoverStepStart           Action = "failover.step-start"            // a step claimed, before its effect
	FailoverStepStartRefused    Action = "failover.step-start-refused"    // a step's start refused by a safety rule
	FailoverStepRefused         Action = "failover.step-refused"          // a step refused while running
	FailoverStepDone            Action = "failover.step-done"             // a step finished, with its result
	FailoverStepFailed          Action = "failover.step-failed"           // a step failed
	FailoverCompleted           Action = "failover.completed"             // every step of a run done
	FailoverRollback            Action = "failover.rollback"              // a run's reversible changes about to be undone
	FailoverRollbackDone        Action = "failover.rollback-done"         // a rollback finished, with what it undid
	FailoverRollbackFailed      Action = "failover.rollback-failed"       // a rollback failed, with what it undid
)

// The records of drills and failbacks beyond a run's steps.
const (
	DrillStart          Action = "drill.start"              // a drill's clock started
	DrillCleanupStart   Action = "drill.cleanup-start"      // a drill's cleanup claimed
	DrillCleanupDone    Action = "drill.cleanup-done"       // a drill's cleanup finished
	DrillCleanupFailed  Action = "drill.cleanup-failed"     // a drill's cleanup failed
	DrillEvidence       Action = "drill.evidence-export"    // a drill's evidence pack downloaded
	DrillEvidenceVerify Action = "drill.evidence-verify"    // an evidence pack checked on the drills page, with what was found
	FailbackGroupBefore Action = "failback.group-before"    // a group's primary offsets before a failback moves them
	FailbackLostExport  Action = "failback.lost-export"     // the old primary's lost records exported
	LossAcknowledge     Action = "loss.acknowledge"         // a data-loss incident acknowledged
	SettingsChanged     Action = "settings.changed"         // the config file's settings differ from the last recorded
	BackupRestore       Action = "backup.restore"           // the database restored from a backup
	SavepointTrigger    Action = "savepoint.trigger"        // a plain savepoint asked of Flink
	SavepointDone       Action = "savepoint.done"           // a savepoint completed
	SavepointFailed     Action = "savepoint.failed"         // a savepoint failed
	SavepointRegStart   Action = "savepoint.register-start" // a savepoint path about to be read for registration
	SavepointRegister   Action = "savepoint.register"       // a savepoint registered in the catalog
)

// The records of accounts and sign-in.
const (
	UserCreate       Action = "user.create"                  // an account created
	UserRole         Action = "user.role"                    // an account's role changed
	UserPassword     Action = "user.password"                // an account's password set
	UserDisable      Action = "user.disable"                 // an account disabled
	UserEnable       Action = "user.enable"                  // an account enabled
	UserSignOutAll   Action = "user.signout_all"             // every session of an account ended
	SSOIdentity      Action = "sso.identity"                 // a provider identity bound to an account
	Login            Action = "login"                        // a sign-in
	Logout           Action = "logout"                       // a sign-out
	LoginFailed      Action = "login.failed"                 // a failed sign-in
	AccountsBaseline Action = storage.ActionAccountsBaseline // every account's state at once, written by storage
)

// The records of API tokens (identity/tokens.go).
const (
	TokenCreate Action = "token.create" // an API token created (never the token itself)
	TokenRevoke Action = "token.revoke" // an API token revoked
	TokenDenied Action = "token.denied" // a request with an API token refused (unknown, expired, revoked, disabled, scope)
)

// The records of the chain's own checks.
const (
	ChainVerify Action = "audit.verify" // the chain verified from the audit page, with what was found
)
