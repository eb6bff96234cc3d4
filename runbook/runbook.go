package runbook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/connect"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// AuditFunc writes one audit record under the identity of whoever asked
// for the job (the request's user, address and browser ride on ctx).
type AuditFunc func(ctx context.Context, action audit.Action, subject string, details any) (audit.Written, error)

// Actor is who does something, as the web layer authenticated them.
type Actor struct {
	Name      string
	Role      model.Role
	ClientIP  string
	UserAgent string
}

// Auditor writes the tamper-evident audit log. Record must have durably
// written the entry when it returns nil.
type Auditor interface {
	Record(ctx context.Context, who Actor, action audit.Action, subject string, details any) error
}

// Runbook runs failover plans. Safe for concurrent use: the database is the
// state, and every transition is a conditional update.
type Runbook struct {
	Store  *storage.Store
	Config *config.Config
	// Flows reads the flows' state for the audit records and the input
	// checks; the plan kinds' package sets it (failover.Equip).
	Flows Flows
	// Audit writes refusals and outcomes that change nothing. A change
	// of the console's state (plan, approval, rejection, cancellation,
	// break-glass, a step's start and outcome) is written with its record
	// in one Store transaction (Runbook.recorded).
	Audit Auditor
	Log   *slog.Logger
	Clock func() time.Time
	// Connect and Flink build the REST clients of a URL (tests point
	// them at stand-ins); their changes go through runbook/internal/effect.
	Connect func(url string) *connect.Client
	Flink   func(url string) *flink.RESTClient
	// CrashHook, when set, is called at step boundaries ("started",
	// "effect-done", and "rewrite-written" between a rewrite and its
	// registration); tests use it to kill the run there.
	CrashHook func(point string)
	// StopVerifyWindow is how long heartbeats and syncs must stay quiet to
	// verify a manual MM2 stop; default 10 s.
	StopVerifyWindow time.Duration
	// LostLimits bound the reads of the old primary's records lost to DR
	// (lost.go); zero fields take their defaults.
	LostLimits LostLimits
	// ReverseCatchUp bounds a failback's wait-reverse-caught-up step;
	// default DefaultReverseCatchUp.
	ReverseCatchUp time.Duration
	// SettleWait bounds how long a retried Cluster Linking failback step
	// waits for an earlier attempt's action to show; default 30 s.
	SettleWait time.Duration

	previews previewCache // the run page's step previews (preview_cache.go)
	local    sync.Map     // the plan kinds' own state (Local)
}

// Local is the plan kinds' own state kept with this runbook (their memos
// and locks), under key; made by fresh on first use.
func (rb *Runbook) Local(key any, fresh func() any) any {
	if v, ok := rb.local.Load(key); ok {
		return v
	}
	v, _ := rb.local.LoadOrStore(key, fresh())
	return v
}

// Errors a caller shows to the operator as they are.
var (
	ErrSelfApproval  = errors.New("you requested this failover: a different operator must approve it")
	ErrRole          = errors.New("your role may not do this: operator or admin required")
	ErrNotApproved   = errors.New("this plan is not approved (or its approvals expired, or the plan changed after approval)")
	ErrConfirmation  = errors.New("the typed confirmation does not match")
	ErrOrder         = errors.New("earlier steps are not done yet")
	ErrRuleViolation = errors.New("a safety rule failed")
)

// ErrStopNeedsRunbook refuses stop-with-savepoint outside a runbook. It
// ends the job, and nothing changes a job except through an approved,
// audited runbook (ARCHITECTURE.md): a failback run's savepoint-dr step
// stops the DR job with a savepoint after a second operator approved the
// run. A plain savepoint, which leaves the job running, needs no approval.
var ErrStopNeedsRunbook = errors.New("stop-with-savepoint ends the job, and only an approved runbook changes a job: " +
	"take a plain savepoint here (the job keeps running); a failback run's savepoint-dr step stops the DR job once a second operator approved it")

// AuditRefusedError: the opening audit record could not be written, so
// nothing was asked of Flink.
type AuditRefusedError struct{ Err error }

func (e *AuditRefusedError) Error() string {
	return "the audit record could not be written, so nothing was asked of Flink: " + e.Err.Error()
}

func (e *AuditRefusedError) Unwrap() error { return e.Err }

// ErrShuttingDown: the console is stopping and starts no new work.
var ErrShuttingDown = errors.New("the console is shutting down: no new work is started; try again once it is back")

// What the records lost to DR (failover.Book.LostToDR) have nothing to show for, and says instead.
var (
	// ErrPrimaryActive: the flow never failed over, so nothing is lost to DR.
	ErrPrimaryActive = errors.New("the primary is the active side of this flow: no failover has completed, so no record is lost to DR")
	// ErrNotMM2: a Cluster Linking mirror keeps the primary's offsets; the
	// lost records are worked out for MirrorMaker 2 flows.
	ErrNotMM2 = errors.New("records lost to DR are worked out for MirrorMaker 2 flows; a Cluster Linking mirror keeps the primary's offsets")
)

func (rb *Runbook) Now() time.Time {
	if rb.Clock != nil {
		return rb.Clock()
	}
	return time.Now()
}

func MayOperate(a Actor) bool { return a.Role.AtLeast(model.RoleOperator) }

// Run is a stored run with its decoded plan and derived approval state.
type Run struct {
	model.Run
	Plan Plan
	// ValidApprovers approved the current plan hash, are not the requester
	// and have not expired.
	ValidApprovers []string
	Approved       bool
	// Discounted says, per approver, why their approval does not count
	// although it is for the current plan: their account was created by
	// the requester or after the run was requested, it was linked to a
	// provider identity or raised by the provider's groups after the
	// request, or the requester took it over (set its password, raised or
	// re-enabled it).
	Discounted map[string]string
	// NextStep is the first step not done, -1 when all are.
	NextStep int
}

// Get loads a run and evaluates its approvals now.
func (rb *Runbook) Get(ctx context.Context, id int64) (*Run, error) {
	sr, err := rb.Store.FailoverRun(ctx, id)
	if err != nil {
		return nil, err
	}
	r := &Run{Run: *sr, NextStep: -1}
	if err := json.Unmarshal([]byte(sr.PlanJSON), &r.Plan); err != nil {
		return nil, fmt.Errorf("failover run %d: stored plan unreadable: %w", id, err)
	}
	now := rb.Now().UnixMilli()
	for _, a := range sr.Approvals {
		if a.Decision == model.DecisionApprove && a.PlanHash == sr.PlanHash && !samePerson(a.Approver, sr.CreatedBy) && now < a.ExpiresMs &&
			!slices.ContainsFunc(r.ValidApprovers, func(v string) bool { return samePerson(v, a.Approver) }) {
			why, err := rb.sockPuppet(ctx, a.Approver, sr)
			if err != nil {
				return nil, err
			}
			if why != "" {
				if r.Discounted == nil {
					r.Discounted = map[string]string{}
				}
				r.Discounted[a.Approver] = why
				continue
			}
			r.ValidApprovers = append(r.ValidApprovers, a.Approver)
		}
	}
	r.Approved = sr.BreakGlass != "" || len(r.ValidApprovers) >= sr.ApprovalsRequired
	for _, st := range sr.Steps {
		if st.Status != model.StepDone {
			r.NextStep = st.Idx
			break
		}
	}
	return r, nil
}

// sockPuppet says why approver's account may not approve run, or "" when
// it may: an account the requester created (in the console, or from the
// command line as the same name) or one created after the run was
// requested could be a second identity of the requester. An identity
// without an account (signed in through the reverse proxy) is the
// directory's, not the requester's making.
func (rb *Runbook) sockPuppet(ctx context.Context, approver string, run *model.Run) (string, error) {
	accounts, err := rb.Store.AccountOrigins(ctx, approver)
	if err != nil {
		return "", fmt.Errorf("checking the account of approver %s: %w", approver, err)
	}
	for _, a := range accounts {
		switch {
		case a.Disabled:
			return fmt.Sprintf("the account %s has been disabled since it approved", a.Name), nil
		case !MayOperate(Actor{Role: a.Role}):
			return fmt.Sprintf("the account %s is now a %s", a.Name, a.Role), nil
		case byRequester(a.CreatedBy, run.CreatedBy):
			return fmt.Sprintf("the account %s was created by the requester %s", a.Name, run.CreatedBy), nil
		case a.CreatedMs > run.CreatedMs:
			return fmt.Sprintf("the account %s was created %s, after the run was requested (%s)", a.Name,
				utc(a.CreatedMs), utc(run.CreatedMs)), nil
		// Linking a provider identity to an account, or the provider's
		// groups raising it, gives it a new holder or new power: an event
		// of its own, whenever the account was created.
		case a.LinkedMs >= run.CreatedMs:
			return fmt.Sprintf("the account %s was linked to its identity at the provider %s, after the run was requested (%s)", a.Name,
				utc(a.LinkedMs), utc(run.CreatedMs)), nil
		case a.RaisedMs >= run.CreatedMs:
			return fmt.Sprintf("the account %s was raised to %s by the provider's groups %s, after the run was requested (%s)", a.Name,
				a.Role, utc(a.RaisedMs), utc(run.CreatedMs)), nil
		}
	}
	if len(accounts) == 0 {
		return "", nil
	}
	// Taking over an existing account works as well as creating one: the
	// requester who set its current password can sign in as it, and one
	// who raised or re-enabled it after the request picked the approver.
	changes, err := rb.Store.AccountChanges(ctx, approver)
	if err != nil {
		return "", fmt.Errorf("checking the account of approver %s: %w", approver, err)
	}
	lastPassword := -1
	for i, c := range changes {
		if c.Action == string(audit.UserPassword) {
			lastPassword = i
		}
	}
	if lastPassword >= 0 && byRequester(changes[lastPassword].Actor, run.CreatedBy) {
		return fmt.Sprintf("the password of %s was last set by the requester %s", approver, run.CreatedBy), nil
	}
	for _, c := range changes {
		if c.Action != string(audit.UserPassword) && c.AtMs >= run.CreatedMs && byRequester(c.Actor, run.CreatedBy) {
			return fmt.Sprintf("the requester %s changed the account %s (%s) after the run was requested", run.CreatedBy, approver, c.Action), nil
		}
	}
	return "", nil
}

// utc formats ms for a reason shown on the run page.
func utc(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.DateTime) }

// byRequester reports whether actor (an audit actor or an account's
// creator: a name, or "cli:<name>" from the command line) is the requester.
func byRequester(actor, requester string) bool {
	return samePerson(actor, requester) || samePerson(strings.TrimPrefix(actor, "cli:"), requester)
}

// Create stores a new plan, pending approval.
func (rb *Runbook) Create(ctx context.Context, who Actor, plan Plan, reason string) (int64, error) {
	if !MayOperate(who) {
		return 0, ErrRole
	}
	if strings.TrimSpace(reason) == "" {
		return 0, errors.New("give a reason for the failover")
	}
	if err := plan.kind().Stamp(ctx, rb, &plan); err != nil {
		return 0, err
	}
	if err := plan.Validate(rb.Config); err != nil {
		return 0, err
	}
	if err := rb.Refusals(ctx, plan); err != nil {
		return 0, err
	}
	stampChoices(&plan, who)
	body, _ := json.Marshal(plan)
	hash := plan.Hash()
	details := map[string]any{"plan": plan, "plan_hash": hash, "reason": reason, "evidence": rb.Evidence(plan.Flow)}
	var id int64
	_, err := rb.Recorded(ctx, who, audit.FailoverPlan, plan.Flow, details, func(rec model.AuditEntry) (model.AuditEntry, error) {
		var err error
		id, rec, err = rb.Store.CreateFailoverRun(ctx, model.Run{Flow: plan.Flow, Reason: reason, CreatedBy: who.Name,
			CreatedMs: rb.Now().UnixMilli(), PlanJSON: string(body), PlanHash: hash, ApprovalsRequired: rb.Config.Failover.ApprovalsRequired}, StepKinds(plan), rec)
		return rec, err
	})
	if err != nil {
		return 0, err
	}
	return id, nil
}

func StepKinds(p Plan) []string {
	out := make([]string, len(p.Steps))
	for i, s := range p.Steps {
		out[i] = string(s.Kind)
	}
	return out
}

// Update replaces a pending run's plan. Approvals given so far were for
// the old plan's hash: they no longer count.
func (rb *Runbook) Update(ctx context.Context, who Actor, id int64, plan Plan, reason string) error {
	if !MayOperate(who) {
		return ErrRole
	}
	r, err := rb.Get(ctx, id)
	if err != nil {
		return err
	}
	plan.Flow = r.Flow
	if err := plan.kind().Stamp(ctx, rb, &plan); err != nil {
		return err
	}
	if err := plan.Validate(rb.Config); err != nil {
		return err
	}
	if err := rb.Refusals(ctx, plan); err != nil {
		return err
	}
	stampChoices(&plan, who)
	body, _ := json.Marshal(plan)
	hash := plan.Hash()
	_, err = rb.Recorded(ctx, who, audit.FailoverPlanChanged, RunSubject(id), map[string]any{"plan": plan, "old_hash": r.PlanHash, "plan_hash": hash, "reason": reason},
		func(rec model.AuditEntry) (model.AuditEntry, error) {
			return rb.Store.ReplaceFailoverPlan(ctx, id, string(body), hash, reason, StepKinds(plan), rb.Now().UnixMilli(), rec)
		})
	return err
}

func RunSubject(id int64) string { return fmt.Sprintf("failover-run:%d", id) }

// Approve records an approval of the run's current plan. planHash is the
// hash the approver saw: if the plan changed since, the approval is refused.
func (rb *Runbook) Approve(ctx context.Context, who Actor, id int64, planHash, comment string) error {
	if !MayOperate(who) {
		return ErrRole
	}
	r, err := rb.Get(ctx, id)
	if err != nil {
		return err
	}
	approvable := []model.RunStatus{model.RunPending, model.RunApproved, model.RunRunning}
	switch {
	case !slices.Contains(approvable, r.Status):
		return fmt.Errorf("run %d is %s: nothing to approve", id, r.Status)
	case samePerson(who.Name, r.CreatedBy):
		return rb.refused(ctx, who, id, audit.FailoverSelfApprovalRefused, map[string]any{"plan_hash": r.PlanHash}, ErrSelfApproval)
	case planHash != r.PlanHash:
		return fmt.Errorf("the plan changed since you looked at it (hash %.12s, now %.12s): review it again", planHash, r.PlanHash)
	}
	now := rb.Now()
	ttl := rb.Config.Failover.ApprovalTTL.D()
	// The approval and its record are one transaction, made only while the
	// run is still approvable with this plan. Whether approvals now suffice
	// depends on who the approvers are (Get, sockPuppet), so the move to
	// approved follows as its own conditional step: it is derived from
	// recorded approvals and needs no record of its own.
	if _, err := rb.Recorded(ctx, who, audit.FailoverApprove, RunSubject(id), map[string]any{"plan_hash": planHash, "comment": comment,
		"expires": now.Add(ttl).UTC(), "evidence": rb.Evidence(r.Flow), "inputs": rb.planInputs(ctx, r)}, func(rec model.AuditEntry) (model.AuditEntry, error) {
		return rb.Store.ApproveFailoverRun(ctx, id, approvable, model.Approval{Approver: who.Name, Decision: model.DecisionApprove, Reason: comment,
			PlanHash: planHash, AtMs: now.UnixMilli(), ExpiresMs: now.Add(ttl).UnixMilli()}, rec)
	}); err != nil {
		return err
	}
	if r, err = rb.Get(ctx, id); err == nil && r.Approved && r.Status == model.RunPending {
		err = rb.Store.SetFailoverStatus(ctx, id, []model.RunStatus{model.RunPending}, model.RunApproved, now.UnixMilli())
		if errors.Is(err, storage.ErrConflict) {
			err = nil // someone else's approval got there first
		}
	}
	return err
}

// Reject ends a run; a reason is required.
func (rb *Runbook) Reject(ctx context.Context, who Actor, id int64, reason string) error {
	if !MayOperate(who) {
		return ErrRole
	}
	if strings.TrimSpace(reason) == "" {
		return errors.New("a rejection needs a reason")
	}
	r, err := rb.Get(ctx, id)
	if err != nil {
		return err
	}
	now := rb.Now().UnixMilli()
	_, err = rb.Recorded(ctx, who, audit.FailoverReject, RunSubject(id), map[string]any{"plan_hash": r.PlanHash, "reason": reason},
		func(rec model.AuditEntry) (model.AuditEntry, error) {
			return rb.Store.RejectFailoverRun(ctx, id, []model.RunStatus{model.RunPending, model.RunApproved}, model.Approval{Approver: who.Name, Decision: model.DecisionReject, Reason: reason,
				PlanHash: r.PlanHash, AtMs: now, ExpiresMs: now}, rec)
		})
	return err
}

// Cancel ends a run that has not completed.
func (rb *Runbook) Cancel(ctx context.Context, who Actor, id int64, reason string) error {
	if !MayOperate(who) {
		return ErrRole
	}
	_, err := rb.Recorded(ctx, who, audit.FailoverCancel, RunSubject(id), map[string]any{"reason": reason}, func(rec model.AuditEntry) (model.AuditEntry, error) {
		return rb.Store.CancelFailoverRun(ctx, id, []model.RunStatus{model.RunPending, model.RunApproved, model.RunRunning, model.RunFailed}, rb.Now().UnixMilli(), rec)
	})
	return err
}

// BreakGlass approves a run with the requester alone, when the
// configuration allows it. It is loud on purpose.
func (rb *Runbook) BreakGlass(ctx context.Context, who Actor, id int64, reason string) error {
	if !MayOperate(who) {
		return ErrRole
	}
	if !rb.Config.Failover.BreakGlass {
		return errors.New("break-glass is disabled in the configuration (failover.break_glass)")
	}
	if len(strings.TrimSpace(reason)) < 10 {
		return errors.New("break-glass needs a real reason (at least 10 characters)")
	}
	r, err := rb.Get(ctx, id)
	if err != nil {
		return err
	}
	if _, err := rb.Recorded(ctx, who, audit.FailoverBreakGlass, RunSubject(id), map[string]any{"plan_hash": r.PlanHash, "reason": reason,
		"evidence": rb.Evidence(r.Flow)}, func(rec model.AuditEntry) (model.AuditEntry, error) {
		return rb.Store.SetBreakGlass(ctx, id, reason, rb.Now().UnixMilli(), rec)
	}); err != nil {
		return err
	}
	rb.Log.Warn("BREAK-GLASS: failover approved by a single operator", "run", id, "operator", who.Name, "reason", reason)
	return nil
}

// Runs lists runs, newest first.
func (rb *Runbook) Runs(ctx context.Context) ([]model.Run, error) {
	return rb.Store.FailoverRuns(ctx, 100)
}

// Pending lists every run waiting for its approvals, newest first.
func (rb *Runbook) Pending(ctx context.Context) ([]model.Run, error) {
	return rb.Store.PendingFailoverRuns(ctx)
}

// samePerson compares identities without regard to letter case: a proxy
// or directory may hand over "Erin@Example.com" for the erin@example.com
// who wrote the plan, and four eyes must not be two spellings of one.
func samePerson(a, b string) bool { return strings.EqualFold(a, b) }

// stampChoices records who made the plan's per-partition choices: the
// operator who submits the plan (each version of it) owns every choice in it.
func stampChoices(p *Plan, who Actor) {
	p.Steps = slices.Clone(p.Steps) // the caller's plan stays as it was
	for i := range p.Steps {
		if len(p.Steps[i].Choices) == 0 {
			continue
		}
		stamped := make(map[string]model.Choice, len(p.Steps[i].Choices))
		for k, c := range p.Steps[i].Choices {
			c.By = who.Name
			stamped[k] = c
		}
		p.Steps[i].Choices = stamped
	}
}

// AwaitingDecision lists the runs that wait for who's decision: pending
// approval, requested by someone else (self-approval is refused) and not
// yet approved by who for their current plan. Viewers decide nothing.
// Read only: it changes nothing and writes no record.
func (rb *Runbook) AwaitingDecision(ctx context.Context, who Actor) ([]model.Run, error) {
	if !MayOperate(who) || who.Name == "" {
		return nil, nil
	}
	runs, err := rb.Pending(ctx)
	if err != nil {
		return nil, err
	}
	var out []model.Run
	for _, r := range runs {
		if samePerson(r.CreatedBy, who.Name) {
			continue
		}
		full, err := rb.Get(ctx, r.ID)
		if err != nil {
			return nil, err
		}
		if full.Status != model.RunPending || full.Approved ||
			slices.ContainsFunc(full.ValidApprovers, func(v string) bool { return samePerson(v, who.Name) }) {
			continue
		}
		if _, discounted := full.Discounted[who.Name]; discounted {
			continue // their approval is on record and cannot count: nothing to decide
		}
		out = append(out, full.Run)
	}
	return out, nil
}
