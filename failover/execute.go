package failover

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/failover/internal/effect"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/translation"
)

// Execution is a step that passed its checks and is marked running; Run
// performs its effect and records the outcome. Splitting the two lets the
// web layer answer at once and show progress while the effect runs.
type Execution struct {
	Runbook *Runbook
	Run     *Run
	Idx     int
	Step    Step
	Who     Actor
	runner  string
	Rules   []RuleResult
	// Started is the step's start record, written with the claim: the
	// effect's proof that it is on record.
	Started audit.Written
	// Progress, when set, hears what a long step is waiting for (the
	// Worker shows it on the run page).
	Progress func(string)
}

// runner identifies this console process in the steps it claims. A step
// found running under another runner was interrupted (that process died)
// and may be resumed; one running under this runner is a live duplicate.
var runner atomic.Pointer[string]

func init() { newRunner() }

// newRunner gives the process a new identity; tests call it to stand for
// a restart.
func newRunner() {
	id := rand.Text()
	runner.Store(&id)
}

func runnerID() string { return *runner.Load() }

// Begin checks that step idx of run id may run now and claims it: one
// conditional update in SQLite, with its audit record, so of concurrent
// requests exactly one starts the step and the others get an error
// wrapping storage.ErrConflict (and a refusal on record). Irreversible
// steps need confirmation to equal the flow's name. override, when not
// empty, is the operator's reason to proceed despite overridable safety
// rules (lag, heartbeats).
func (rb *Runbook) Begin(ctx context.Context, who Actor, id int64, idx int, confirmation, override string) (*Execution, error) {
	return rb.BeginWith(ctx, who, id, idx, StepArgs{Confirmation: confirmation, Override: override})
}

// BeginWith is Begin with every argument an operator types, among them
// the second operator's override of what the step rests on (inputs.go).
func (rb *Runbook) BeginWith(ctx context.Context, who Actor, id int64, idx int, args StepArgs) (*Execution, error) {
	confirmation, override := args.Confirmation, args.Override
	if !mayOperate(who) {
		return nil, ErrRole
	}
	r, err := rb.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if idx >= 0 && idx < len(r.Steps) {
		switch st := r.Steps[idx]; {
		case st.Status == model.StepDone:
			return nil, rb.refused(ctx, who, id, audit.FailoverStepStartRefused, map[string]any{"step": idx + 1, "status": st.Status},
				fmt.Errorf("step %d is done already: it never runs twice: %w", idx+1, storage.ErrConflict))
		case st.Status == model.StepRunning && st.Runner == runnerID():
			return nil, rb.refused(ctx, who, id, audit.FailoverStepStartRefused, map[string]any{"step": idx + 1, "status": st.Status, "started_by": st.StartedBy},
				fmt.Errorf("step %d is running already (started by %s): it never runs twice at once: %w", idx+1, st.StartedBy, storage.ErrConflict))
		}
	}
	switch {
	case idx < 0 || idx >= len(r.Plan.Steps):
		return nil, fmt.Errorf("run %d has no step %d", id, idx+1)
	case r.Status != model.RunApproved && r.Status != model.RunRunning:
		return nil, fmt.Errorf("run %d is %s: %w", id, r.Status, ErrNotApproved)
	case !r.Approved:
		return nil, ErrNotApproved
	case idx != r.NextStep:
		return nil, ErrOrder
	}
	step := r.Plan.Steps[idx]
	if step.Irreversible() && strings.TrimSpace(confirmation) != r.Flow {
		return nil, fmt.Errorf("%w: type the flow name %q to run this step", ErrConfirmation, r.Flow)
	}
	e := &Execution{Runbook: rb, Run: r, Idx: idx, Step: step, Who: who, runner: runnerID()}
	e.Rules = r.Plan.kind().Rules(ctx, rb, r, idx, override)
	inputs := rb.inputRules(ctx, r, idx)
	changed := rb.changedSinceApproval(ctx, r, idx, inputs)
	if err := applyInputsOverride(inputs, r, who, args.InputsOverride); err != nil {
		return nil, rb.refused(ctx, who, id, audit.FailoverStepRefused, map[string]any{"step": idx + 1, "kind": step.Kind,
			"inputs_override": args.InputsOverride}, err)
	}
	e.Rules = append(e.Rules, inputs...)
	if len(e.Rules) > 0 {
		if failed := Failed(e.Rules); len(failed) > 0 {
			msg := strings.Join(failed, "; ")
			if len(changed) > 0 {
				msg += "; changed since approval: " + strings.Join(changed, "; ")
			}
			return nil, rb.refused(ctx, who, id, audit.FailoverStepRefused, map[string]any{"step": idx + 1, "kind": step.Kind,
				"rules": e.Rules, "changed_since_approval": changed, "evidence": rb.evidence(r.Flow)}, fmt.Errorf("%w: %s", ErrRuleViolation, msg))
		}
	}
	// The claim and its record are one transaction (storage.auditedTx);
	// the Written it yields is what the step's effect demands.
	e.Started, err = rb.recorded(ctx, who, audit.FailoverStepStart, RunSubject(id), map[string]any{"step": idx + 1, "kind": step.Kind,
		"title": r.Plan.StepTitle(idx, rb.Config.Flow(r.Flow)), "params": step, "plan_hash": r.PlanHash, "approvers": r.ValidApprovers,
		"break_glass": r.BreakGlass, "rules": e.Rules, "override": override, "inputs_override": args.InputsOverride,
		"changed_since_approval": changed, "evidence": rb.evidence(r.Flow)},
		func(rec model.AuditEntry) (model.AuditEntry, error) {
			return rb.Store.StartFailoverStep(ctx, storage.StepStart{RunID: id, Idx: idx, Runner: e.runner, Actor: who.Name, AtMs: rb.Now().UnixMilli(), Record: rec})
		})
	if errors.Is(err, storage.ErrConflict) {
		return nil, rb.refused(ctx, who, id, audit.FailoverStepStartRefused, map[string]any{"step": idx + 1, "kind": step.Kind}, err)
	}
	if err != nil {
		return nil, err
	}
	rb.crash("started")
	return e, nil
}

// refused puts a refusal on record and returns why, joined with the audit
// failure if the record could not be written (the caller is refused either
// way: nothing happens).
func (rb *Runbook) refused(ctx context.Context, who Actor, id int64, action audit.Action, details any, why error) error {
	if err := rb.Audit.Record(ctx, who, action, RunSubject(id), details); err != nil {
		return errors.Join(why, fmt.Errorf("the refusal could not be written to the audit log: %w", err))
	}
	return why
}

func (rb *Runbook) crash(point string) {
	if rb.CrashHook != nil {
		rb.CrashHook(point)
	}
}

// Perform performs the step's effect and records its result. It is safe to call
// again for a step found "running" after a crash: every effect is
// idempotent. The outcome, its audit record and (after the last step) the
// run's completion are one transaction; when that cannot be written the
// step is released, still running, so executing it again resumes it.
func (e *Execution) Perform(ctx context.Context) error {
	rb := e.Runbook
	defer e.Run.Plan.kind().Running(ctx, rb)()
	result, err := e.Run.Plan.kind().Do(ctx, e.Started, e)
	rb.crash("effect-done")
	body, _ := json.Marshal(result)
	// Record with a fresh context: the outcome must be written even when
	// the request that started the step is gone.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	details := map[string]any{"step": e.Idx + 1, "kind": e.Step.Kind, "result": result, "evidence": rb.evidence(e.Run.Flow)}
	action := audit.FailoverStepDone
	if err != nil {
		action, details["error"] = audit.FailoverStepFailed, err.Error()
	}
	o := storage.StepOutcome{RunID: e.Run.ID, Idx: e.Idx, Runner: e.runner, Result: string(body), Failure: err, AtMs: rb.Now().UnixMilli()}
	var ferr error
	o.Record, ferr = auditEntry(e.Who, action, RunSubject(e.Run.ID), details)
	if err == nil && e.Idx == len(e.Run.Plan.Steps)-1 {
		c, cerr := auditEntry(e.Who, audit.FailoverCompleted, RunSubject(e.Run.ID), map[string]any{"steps": len(e.Run.Plan.Steps)})
		o.Completed, ferr = &c, errors.Join(ferr, cerr)
	}
	if ferr == nil {
		ferr = rb.Store.FinishFailoverStep(wctx, o)
	}
	if ferr != nil {
		if rerr := rb.Store.ReleaseFailoverStep(wctx, e.Run.ID, e.Idx, e.runner); rerr != nil {
			ferr = errors.Join(ferr, rerr)
		}
		return errors.Join(err, fmt.Errorf("the outcome of step %d is not recorded, so the step stays running (interrupted): execute it again to resume it: %w", e.Idx+1, ferr))
	}
	if o.Completed != nil && e.Run.Plan.kind().SwitchesSides() {
		rb.markFailedOver(wctx) // DR (or, after a failback, the primary) is active from now
	}
	return err
}

// mirrorStop is how stop-mirror saw the mirror stop: its connectors'
// states through Connect, or a dedicated MM2's quiet window. Its fields
// are in the order the maps it replaced were written.
type mirrorStop struct {
	ConnectURL      string          `json:"connect_url,omitempty"`
	Connectors      connectorStates `json:"connectors,omitempty"`
	LastHeartbeatMs *int64          `json:"last_heartbeat_ms,omitempty"`
	Syncs           *int            `json:"syncs,omitempty"`
	Verified        string          `json:"verified,omitempty"`
}

// connectorStates are connectors' states by name; a failed stop records
// them as its result.
type connectorStates map[string]string

// stopMirror stops the flow's MM2 connectors through Kafka Connect and
// waits until they and their tasks are down; for dedicated MM2 it verifies
// that the operator's manual stop took: no new heartbeat and no new offset
// sync for a whole window.
func (rb *Runbook) stopMirror(ctx context.Context, w audit.Written, flowName string) (*mirrorStop, connectorStates, error) {
	flow := rb.Config.Flow(flowName)
	if flow.ConnectURL != "" {
		api := rb.Connect(flow.ConnectURL)
		for _, name := range flow.Connectors {
			if err := effect.StopConnector(ctx, w, api, name); err != nil {
				return nil, nil, err
			}
		}
		wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		states := connectorStates{}
		for {
			stopped := true
			for _, name := range flow.Connectors {
				s, err := api.Status(wctx, name)
				if err != nil {
					return nil, states, err
				}
				states[name] = string(s.Connector.State)
				stopped = stopped && s.Stopped()
			}
			if stopped {
				return &mirrorStop{ConnectURL: flow.ConnectURL, Connectors: states}, nil, nil
			}
			select {
			case <-wctx.Done():
				return nil, states, fmt.Errorf("connectors not stopped within 2 minutes: %v", states)
			case <-time.After(500 * time.Millisecond):
			}
		}
	}
	window := rb.StopVerifyWindow
	if window == 0 {
		window = 10 * time.Second
	}
	deadline := time.Now().Add(2*time.Minute + window)
	hb, syncs := rb.Monitor.Activity(flowName)
	quietSince := time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
		h, s := rb.Monitor.Activity(flowName)
		if h != hb || s != syncs {
			hb, syncs, quietSince = h, s, time.Now()
		}
		if time.Since(quietSince) >= window {
			return &mirrorStop{Verified: "no new heartbeat or offset sync for " + window.String(), LastHeartbeatMs: &hb, Syncs: &syncs}, nil, nil
		}
		if time.Now().After(deadline) {
			return nil, nil, errors.New("MirrorMaker 2 is still writing heartbeats or offset syncs: it is not stopped")
		}
	}
}

func (rb *Runbook) translateGroup(ctx context.Context, w audit.Written, r *Run, idx int, s Step, who Actor) (any, error) {
	_, dr := rb.Monitor.Clients(r.Flow)
	reason := fmt.Sprintf("failover run %d step %d", r.ID, idx+1)
	group := s.Group // the DR group: in a drill, its temporary one
	group = r.Plan.kind().DRGroup(r.ID, group)
	// Resumed after a crash or a failed commit: an earlier attempt's change
	// is finished, not made again (a new translation could differ, and
	// would record the already translated offsets as the ones to undo to).
	earlier, err := rb.Store.GroupChanges(ctx, r.Flow, group)
	if err != nil {
		return nil, err
	}
	for _, c := range earlier { // newest first
		if c.Reason != reason {
			continue
		}
		if c.Status == "applied" {
			return groupResumed{ChangeID: c.ID, Changes: c.Changes, Note: "applied by an earlier attempt"}, nil
		}
		// Interrupted, or failed (perhaps after Kafka took the commit):
		// the same offsets again, with the previous ones it recorded.
		c, err := effect.FinishInterruptedChange(ctx, w, rb.Store, dr, c)
		return groupResumed{ChangeID: c.ID, Changes: c.Changes, Note: "an earlier attempt's change, committed again"}, err
	}
	plan, err := rb.groupPlan(ctx, r.Flow, s)
	if err != nil {
		return nil, err
	}
	var untranslatable []string
	var reread int64
	for _, row := range plan.Rows {
		if !row.Translation.Translated() {
			untranslatable = append(untranslatable, fmt.Sprintf("%s (%s)", mm2.TPKey(row.Source), row.Translation.Method))
		}
		reread += row.Translation.RereadMax
	}
	if len(untranslatable) > 0 && !s.AllowPartial {
		return groupUntranslatable{Untranslatable: untranslatable}, fmt.Errorf("%d partition(s) cannot be translated: %s", len(untranslatable), strings.Join(untranslatable, ", "))
	}
	change, err := effect.ApplyOffsets(ctx, w, rb.Store, dr, r.Flow, group, plan.Proposed(), who.Name, reason)
	return groupTranslated{From: plan.From, Group: group, ChangeID: change.ID, Changes: change.Changes, Untranslatable: untranslatable, RereadMax: reread}, err
}

// translate-group's results: the change it committed (groupTranslated),
// or an earlier attempt's it found (groupResumed), or the partitions it
// could not translate (groupUntranslatable). Their fields are in the
// order the maps they replaced were written, so the stored bytes are the
// same; V is the shape's version (absent: the first).
type (
	groupTranslated struct {
		ChangeID       int64                  `json:"change_id"`
		Changes        []storage.OffsetChange `json:"changes"`
		From           string                 `json:"from"`
		Group          string                 `json:"group"`
		RereadMax      int64                  `json:"reread_max"`
		Untranslatable []string               `json:"untranslatable"`
		V              int                    `json:"v,omitempty"`
	}
	groupResumed struct {
		ChangeID int64                  `json:"change_id"`
		Changes  []storage.OffsetChange `json:"changes"`
		Note     string                 `json:"note"`
		V        int                    `json:"v,omitempty"`
	}
	groupUntranslatable struct {
		Untranslatable []string `json:"untranslatable"`
		V              int      `json:"v,omitempty"`
	}
)

// groupPlan previews a translate-group step: the group's own primary
// offsets, or the offsets read from the savepoint it names (which must be
// in the savepoint catalog, read).
func (rb *Runbook) groupPlan(ctx context.Context, flow string, s Step) (*translation.GroupPlan, error) {
	tr := rb.Monitor.Translator(flow)
	if s.FromSavepoint == "" {
		return tr.Plan(ctx, s.Group)
	}
	sp, err := rb.Store.SavepointByPath(ctx, catalog.CanonicalPath(s.FromSavepoint))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("savepoint %s is not in the savepoint catalog: register it (Savepoints page) so its offsets are read", s.FromSavepoint)
	}
	if err != nil {
		return nil, err
	}
	offs, err := sp.Offsets()
	if err != nil {
		return nil, err
	}
	if offs == nil {
		return nil, fmt.Errorf("the offsets of savepoint %s could not be read: %s", sp.Path, sp.ReadError)
	}
	offsets := map[model.TP]int64{}
	for key, off := range offs {
		tp, err := mm2.ParseTPKey(key)
		if err != nil {
			return nil, fmt.Errorf("savepoint %s: %w", sp.Path, err)
		}
		offsets[tp] = off
	}
	return tr.PlanOffsets(ctx, s.Group, offsets, translation.FromSavepoint(sp.Path))
}

// restoreJobID derives the restored job's id from the run and step, so a
// step resumed after a crash finds the job it already started.
func restoreJobID(r *Run, idx int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "drconsole-restore/%d/%d/%s", r.ID, idx, r.PlanHash))
	return hex.EncodeToString(sum[:16])
}

// RewrittenReady lets a restore from the run's rewritten savepoint go on
// only once its rewrite succeeded, whichever way the job is restored
// (checked again here: Begin's rule may be minutes old).
func (rb *Runbook) RewrittenReady(ctx context.Context, r *Run, s Step) error {
	if j := RewriteOf(r.Plan, s.SavepointPath); j >= 0 {
		if ok, why := rb.rewriteDone(ctx, r, j); !ok || s.AllowNonRestoredState {
			return fmt.Errorf("not restoring the rewritten savepoint %s: %s (allowNonRestoredState %v)", s.SavepointPath, why, s.AllowNonRestoredState)
		}
	}
	return nil
}

func (rb *Runbook) RestoreFlink(ctx context.Context, w audit.Written, r *Run, idx int, s Step) (any, error) {
	t := FlinkTargetNamed(rb.Config, s.FlinkTarget)
	api := rb.Flink(t.RestURL)
	jobID := restoreJobID(r, idx)
	if j, err := api.Job(ctx, jobID); err == nil {
		return jobFound{JobID: jobID, State: string(j.State), Note: "already started by an earlier attempt"}, nil
	} else if re := (*flink.RESTError)(nil); !errors.As(err, &re) || re.Status != 404 {
		return nil, fmt.Errorf("checking for an earlier attempt's job: %w", err)
	}
	version, err := api.Version(ctx)
	if err != nil {
		return nil, err
	}
	req := flink.RunRequest{EntryClass: s.EntryClass, ProgramArgsList: r.Plan.kind().RestoreArgs(r, s), Parallelism: s.Parallelism, SavepointPath: s.SavepointPath,
		AllowNonRestoredState: s.AllowNonRestoredState, JobID: jobID}
	if s.SavepointPath != "" {
		mode := s.ClaimMode
		if mode == "" {
			mode = "NO_CLAIM" // never let the new job delete the savepoint
		}
		if flink.RestoreModeField(version) == "claimMode" {
			req.ClaimMode = mode
		} else {
			req.RestoreMode = mode
		}
	}
	started, err := effect.RunJar(ctx, w, api, s.JarID, req)
	return jobStarted{JobID: started, FlinkVersion: version, Target: t.Name, Savepoint: s.SavepointPath}, err
}

// restore-flink's results through Flink REST: the job it started
// (jobStarted), or the one an earlier attempt started (jobFound). Their
// fields are in the order the maps they replaced were written, so the
// stored bytes are the same; V is the shape's version (absent: the first).
type (
	jobStarted struct {
		FlinkVersion string `json:"flink_version"`
		JobID        string `json:"job_id"`
		Savepoint    string `json:"savepoint"`
		Target       string `json:"target"`
		V            int    `json:"v,omitempty"`
	}
	jobFound struct {
		JobID string `json:"job_id"`
		Note  string `json:"note"`
		State string `json:"state"`
		V     int    `json:"v,omitempty"`
	}
)
