package failover

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/internal/effect"
	"github.com/drconsole/drconsole/storage"
)

// A DR drill is a run of a plan with Drill set, through the same approval
// gate, step state machine, Worker and audit-first effects as a failover.
// What differs, and is enforced here rather than trusted to the plan:
//   - the steps may only be preflight, translate-group, rewrite-savepoint
//     and restore-flink: never stop-mirror, promote or fail over mirrors;
//   - translate-group commits to a temporary DR group
//     drconsole-drill-<run>-<group>, which must not exist before the drill
//     (so it is never a production group), never to the group it names;
//   - restore-flink submits a copy of the job through Flink REST with its
//     own job id and the drill's job arguments (drill.job_args, which keep
//     its output apart), never a FlinkDeployment redeploy;
//   - the safety rules are evaluated and recorded as the ones a failover
//     would have failed, without stopping the drill;
//   - the restore times the job to RUNNING and to its first record;
//   - then the cleanup cancels the drill job and deletes the temporary
//     groups, audited; a cleanup that fails is retried with backoff, and a
//     drill found unfinished at start-up (the console died mid-drill) is
//     ended and cleaned up, never resumed.

// DrillGroup is the temporary DR group a drill run commits group's
// translated offsets to.
func DrillGroup(run int64, group string) string {
	return effect.DrillGroupPrefix + strconv.FormatInt(run, 10) + "-" + group
}

// drillProblems says what makes drill p unfit as a drill.
func drillProblems(cfg *config.Config, p runbook.Plan) []error {
	var errs []error
	for i, s := range p.Steps {
		bad := func(format string, args ...any) {
			errs = append(errs, &runbook.StepProblem{Step: i, Kind: s.Kind, Why: fmt.Sprintf(format, args...)})
		}
		k, ok := drillSteps[s.Kind]
		if !ok {
			bad("a drill never stops the mirror, promotes or fails over mirror topics: production keeps running")
			continue
		}
		for _, why := range k.problems(cfg, p, i) {
			bad("%s", why)
		}
	}
	if len(StepsThat(p, restores)) != 1 {
		errs = append(errs, errors.New("a drill restores the Flink job exactly once (one restore-flink step): that is what it times"))
	}
	return errs
}

// stampDrill copies the configured drill job arguments into a drill plan's
// restore step, so the approval covers them.
func stampDrill(p *runbook.Plan, cfg *config.Config) {
	p.Steps = slices.Clone(p.Steps) // the caller's plan stays as it was
	for i := range p.Steps {
		if Is(p.Steps[i].Kind, restores) && len(p.Steps[i].DrillArgs) == 0 {
			p.Steps[i].DrillArgs = slices.Clone(cfg.Drill.JobArgs)
		}
	}
}

// drillArgs are the drill job's program arguments: the step's own, then
// its drill arguments with {run} and {group} replaced.
func drillArgs(r *runbook.Run, s runbook.Step) []string {
	group := ""
	for _, st := range StepsThat(r.Plan, translates) {
		group = DrillGroup(r.ID, st.Group)
	}
	rep := strings.NewReplacer("{run}", strconv.FormatInt(r.ID, 10), "{group}", group)
	out := slices.Clone(s.Args)
	for _, a := range s.DrillArgs {
		out = append(out, rep.Replace(a))
	}
	return out
}

// drillGroups are the temporary groups run r commits to.
func drillGroups(r *runbook.Run) []string {
	var out []string
	for _, s := range StepsThat(r.Plan, translates) {
		out = append(out, DrillGroup(r.ID, s.Group))
	}
	return out
}

func drillRestore(r *runbook.Run) int {
	return First(r.Plan, restores)
}

// drillGuards are the rules that keep a drill step away from production.
// They fail closed (an error reading DR refuses the step) and cannot be
// overridden.
func (rb Book) drillGuards(ctx context.Context, r *runbook.Run, idx int) []runbook.RuleResult {
	s := r.Plan.Steps[idx]
	kind := runbook.RuleResult{Name: "a drill leaves production's mirror, groups and job alone", OK: len(drillProblems(rb.Config, r.Plan)) == 0}
	kind.Evidence = "step " + string(s.Kind) + " of a valid drill plan"
	if !kind.OK {
		kind.Evidence = errors.Join(drillProblems(rb.Config, r.Plan)...).Error()
	}
	rules := []runbook.RuleResult{kind}
	if k, ok := drillSteps[s.Kind]; ok {
		rules = append(rules, k.guards(ctx, rb.Runbook, r, idx)...)
	}
	return rules
}

// freshGroup: a drill commits only to a temporary group it made itself.
func (rb Book) freshGroup(ctx context.Context, r *runbook.Run, s runbook.Step) runbook.RuleResult {
	g := DrillGroup(r.ID, s.Group)
	fresh := runbook.RuleResult{Name: "the temporary group " + g + " is this drill's own (it did not exist before the drill)"}
	ours, err := rb.wroteGroup(ctx, r, g)
	if err != nil {
		fresh.Evidence = err.Error()
		return fresh
	}
	if ours {
		fresh.OK, fresh.Evidence = true, "written by this drill's earlier attempt"
		return fresh
	}
	gctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	state, _, err := rb.Monitor.Translator(r.Flow).DRGroupState(gctx, g)
	switch {
	case err != nil:
		fresh.Evidence = err.Error()
	case state != "Dead":
		fresh.Evidence = "the group exists in DR already (" + state + "): not made by this drill, so it is not touched"
	default:
		fresh.OK, fresh.Evidence = true, "no such group in DR yet"
	}
	return fresh
}

// drillActor signs what the console does for a drill by itself: a cleanup
// retried after a failure or a restart.
var drillActor = runbook.Actor{Name: "drconsole:drill-cleanup", Role: model.RoleOperator}

// StartDrill begins drill run id: it must be approved and never started,
// confirmation must be the flow's name. The safety rules a failover would
// check are evaluated now and recorded as the ones that would have failed;
// the drill's record and its drill.start audit record are one transaction.
// The Worker then runs the steps (Worker.RunDrill).
func (rb Book) StartDrill(ctx context.Context, who runbook.Actor, id int64, confirmation string) (*runbook.Run, error) {
	if !runbook.MayOperate(who) {
		return nil, runbook.ErrRole
	}
	r, err := rb.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	switch {
	case r.Plan.Kind != runbook.PlanDrill:
		return nil, fmt.Errorf("run %d is a failover, not a drill", id)
	case r.Status != model.RunApproved:
		return nil, fmt.Errorf("drill %d is %s: a drill runs once, after its approval: %w", id, r.Status, runbook.ErrNotApproved)
	case !r.Approved:
		return nil, runbook.ErrNotApproved
	case strings.TrimSpace(confirmation) != r.Flow:
		return nil, fmt.Errorf("%w: type the flow name %q to start the drill", runbook.ErrConfirmation, r.Flow)
	}
	if probs := drillProblems(rb.Config, r.Plan); len(probs) > 0 {
		return nil, errors.Join(probs...)
	}
	rules := rb.CheckRules(ctx, r.Plan, "")
	d := model.Drill{RunID: id, Flow: r.Flow, StartedMs: rb.Now().UnixMilli(), Groups: drillGroups(r), RulesFailed: runbook.Failed(rules),
		RereadExpected: len(StepsThat(r.Plan, translates)) + len(StepsThat(r.Plan, Rewrites))}
	if i := drillRestore(r); i >= 0 {
		d.FlinkTarget, d.JobID = r.Plan.Steps[i].FlinkTarget, restoreJobID(r, i)
	}
	_, err = rb.Recorded(ctx, who, audit.DrillStart, runbook.RunSubject(id), map[string]any{"plan_hash": r.PlanHash, "approvers": r.ValidApprovers,
		"rules": rules, "would_have_failed": d.RulesFailed, "temporary_groups": d.Groups, "job_id": d.JobID, "evidence": rb.Evidence(r.Flow)},
		func(rec model.AuditEntry) (model.AuditEntry, error) { return rb.Store.StartDrill(ctx, d, rec) })
	if err != nil {
		return nil, err
	}
	return r, nil
}

// measureDrill follows the drill job until it is RUNNING and has processed
// a record, recording both moments and the flow's RPO at the second; it
// drillMeasured is what a drill's restore measured of its job: its first
// record (and the flow's RPO then), the state it ended in before one, or
// whether it ran at all when the timeout passed. Its fields are in the
// order the maps it replaced were written, so the stored bytes are the
// same.
type drillMeasured struct {
	JobID string `json:"job_id"`
	*FirstRecord
	Running *bool  `json:"running,omitempty"`
	State   string `json:"state,omitempty"`
}

// FirstRecord is the drill job's first record counted, and the flow's RPO
// then (exported: JSON decodes into an embedded pointer only of an
// exported type).
type FirstRecord struct {
	RecordsSeen int64  `json:"records_seen"`
	RPOAtLeast  bool   `json:"rpo_at_least"`
	RPOMs       *int64 `json:"rpo_ms"`
}

// fails when the job fails or drill.timeout passes first.
func (rb Book) measureDrill(ctx context.Context, r *runbook.Run, api *flink.RESTClient, jobID string, progress func(string)) (*drillMeasured, error) {
	ctx, cancel := context.WithTimeout(ctx, rb.Config.Drill.Timeout.D())
	defer cancel()
	running := false
	for {
		d, err := api.JobDetail(ctx, jobID)
		now := rb.Now().UnixMilli()
		switch {
		case err != nil && ctx.Err() == nil:
			// A JobManager busy starting the job may not answer: ask again.
		case err != nil:
		case d.State.Final():
			return &drillMeasured{JobID: jobID, State: string(d.State)}, fmt.Errorf("the drill job %s is %s before processing a record", jobID, d.State)
		case d.State == flink.JobRunning:
			if !running {
				running = true
				if err := rb.Store.DrillMoment(ctx, r.ID, storage.MomentRunning, now); err != nil {
					return nil, err
				}
			}
			if n := d.RecordsSeen(); n > 0 {
				s := rb.Monitor.Snapshot(r.Flow)
				var rpo *int64
				atLeast := false
				if s != nil {
					rpo, atLeast = s.RPOMs, s.RPOAtLeast
				}
				if err := rb.Store.DrillFirstRecord(ctx, r.ID, now, rpo, atLeast); err != nil {
					return nil, err
				}
				return &drillMeasured{JobID: jobID, State: string(d.State), FirstRecord: &FirstRecord{RecordsSeen: n, RPOMs: rpo, RPOAtLeast: atLeast}}, nil
			}
		}
		if progress != nil {
			progress(fmt.Sprintf("drill job %s: %s, no record counted yet", jobID, OrNone(string(d.State))))
		}
		select {
		case <-ctx.Done():
			return &drillMeasured{JobID: jobID, Running: &running}, fmt.Errorf("the drill job %s processed no record within %s (Flink counts records exchanged between vertices: a job chained into one vertex shows none): %w",
				jobID, rb.Config.Drill.Timeout.D(), ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// CleanupDrill makes one attempt at drill id's cleanup: the drill's run is
// ended, as cancelled unless it completed (no step of it starts again), the drill job cancelled and waited
// for, then the temporary groups deleted, each effect behind the
// drill.cleanup-start record. A failed attempt is recorded with the time
// of the next (drill.cleanup_retry, doubling, at most 10 min). why is
// recorded as the drill's failure when its steps did not complete.
func (rb Book) CleanupDrill(ctx context.Context, who runbook.Actor, id int64, why string) error {
	r, err := rb.Get(ctx, id)
	if err != nil {
		return err
	}
	d, err := rb.Store.Drill(ctx, id)
	if err != nil {
		return err
	}
	w, err := rb.Recorded(ctx, who, audit.DrillCleanupStart, runbook.RunSubject(id), map[string]any{"attempt": d.CleanupAttempts + 1, "job_id": d.JobID,
		"temporary_groups": d.Groups, "why": why}, func(rec model.AuditEntry) (model.AuditEntry, error) {
		return rb.Store.DrillCleanupClaim(ctx, id, why, rb.Now().UnixMilli(), rec)
	})
	if err != nil {
		return err
	}
	result := map[string]any{}
	cerr := func() error {
		if i := drillRestore(r); i >= 0 {
			api := rb.Flink(FlinkTarget(rb.Config, r.Plan.Steps[i].FlinkTarget).RestURL)
			jobID := restoreJobID(r, i)
			state, err := effect.CancelJob(ctx, w, api, jobID)
			result["job_state_found"] = state
			if err != nil {
				return fmt.Errorf("cancelling the drill job %s: %w", jobID, err)
			}
			// A job still cancelling may commit offsets once more and bring
			// a deleted group back: the groups go once it has ended.
			final, err := waitJobEnded(ctx, api, jobID)
			result["job_state"] = final
			if err != nil {
				return err
			}
		}
		_, dr := rb.Monitor.Clients(r.Flow)
		var deleted, notOurs []string
		for _, g := range drillGroups(r) {
			// Only a group this drill wrote goes: its change is recorded
			// before the commit, so a crash right after is covered too.
			ours, err := rb.wroteGroup(ctx, r, g)
			if err != nil {
				return err
			}
			if !ours {
				notOurs = append(notOurs, g)
				continue
			}
			did, err := effect.DeleteDrillGroup(ctx, w, dr, g)
			if err != nil {
				return err
			}
			if did {
				deleted = append(deleted, g)
			}
		}
		result["groups_deleted"], result["groups_not_written"] = deleted, notOurs
		removed, kept, err := rb.removeDrillCopies(ctx, w, r)
		result["rewritten_removed"], result["rewritten_kept"] = removed, kept
		return err
	}()
	action, details := audit.DrillCleanupDone, map[string]any{"result": result}
	next := int64(0)
	if cerr != nil {
		base := rb.Config.Drill.CleanupRetry.D()
		pause := min(base<<min(d.CleanupAttempts, 10), 10*time.Minute)
		next = rb.Now().Add(pause).UnixMilli()
		action, details["error"], details["retry_at"] = audit.DrillCleanupFailed, cerr.Error(), time.UnixMilli(next).UTC()
	}
	rec, err := runbook.AuditEntry(who, action, runbook.RunSubject(id), details)
	if err == nil {
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		err = rb.Store.DrillCleanupOutcome(wctx, id, cerr, rb.Now().UnixMilli(), next, rec)
	}
	// Not recorded: the cleanup stays "running", which the next start-up
	// (or the worker's next pass) takes for interrupted and does again.
	return errors.Join(cerr, err)
}

// removeDrillCopies deletes the savepoint copies drill r's rewrite steps
// wrote (the job restored from them is cancelled by now): the directory
// and its catalog entry. Only a copy the catalog marks as rewritten from
// the step's source for the drill's flow, registered after the drill was
// planned, is the drill's: any other is kept and named. A copy on S3 is
// removed through the catalog's S3 store.
func (rb Book) removeDrillCopies(ctx context.Context, w audit.Written, r *runbook.Run) (removed, kept []string, err error) {
	for _, s := range StepsThat(r.Plan, Rewrites) {
		sp, err := rb.Store.SavepointByPath(ctx, flink.CanonicalPath(s.RewriteTo))
		switch {
		case errors.Is(err, storage.ErrNotFound) && rb.Catalog == nil:
			continue // no catalog: the rewrite never ran
		case errors.Is(err, storage.ErrNotFound):
			if exists, err := rb.Catalog.DirExists(ctx, s.RewriteTo); err != nil {
				return removed, kept, err
			} else if exists {
				kept = append(kept, s.RewriteTo+" (not in the catalog: not known to be this drill's copy)")
			}
			continue
		case err != nil:
			return removed, kept, err
		case sp.Origin != model.OriginRewritten || sp.RewrittenFrom != flink.CanonicalPath(s.RewriteFrom) || sp.RewrittenFlow != r.Flow || sp.FirstSeenMs < r.CreatedMs:
			kept = append(kept, s.RewriteTo+" (its catalog entry is not this drill's copy)")
			continue
		}
		var rerr error
		switch local, lerr := flink.LocalPath(s.RewriteTo); {
		case lerr == nil:
			rerr = effect.RemoveSavepointCopy(ctx, w, local)
		case config.IsS3URI(s.RewriteTo) && rb.Catalog != nil && rb.Catalog.S3 != nil:
			rerr = effect.RemoveRemoteSavepointCopy(ctx, w, rb.Catalog.S3, s.RewriteTo)
		default:
			kept = append(kept, s.RewriteTo+" (a remote copy the console has no store for: delete it by hand)")
			continue
		}
		if rerr != nil {
			return removed, kept, fmt.Errorf("removing the drill's rewritten savepoint %s: %w", s.RewriteTo, rerr)
		}
		if err := rb.Store.DeleteSavepoint(ctx, sp.ID); err != nil {
			return removed, kept, err
		}
		removed = append(removed, s.RewriteTo)
	}
	return removed, kept, nil
}

// wroteGroup reports whether run r recorded a change of DR group g.
func (rb Book) wroteGroup(ctx context.Context, r *runbook.Run, g string) (bool, error) {
	changes, err := rb.Store.GroupChanges(ctx, r.Flow, g)
	if err != nil {
		return false, err
	}
	prefix := fmt.Sprintf("failover run %d step ", r.ID)
	return slices.ContainsFunc(changes, func(c storage.GroupChange) bool { return strings.HasPrefix(c.Reason, prefix) }), nil
}

// waitJobEnded waits up to a minute for jobID to be in a final state (or
// unknown to the cluster).
func waitJobEnded(ctx context.Context, api *flink.RESTClient, jobID string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		j, err := api.Job(ctx, jobID)
		if re := (*flink.RESTError)(nil); errors.As(err, &re) && re.Status == 404 {
			return "not found", nil
		}
		if err == nil && j.State.Final() {
			return string(j.State), nil
		}
		select {
		case <-ctx.Done():
			return string(j.State), fmt.Errorf("the drill job %s has not ended a minute after its cancellation (%s, %v)", jobID, OrNone(string(j.State)), err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Drills lists flow's drills ("": every flow's), newest first.
func (rb Book) Drills(ctx context.Context, flow string) ([]model.Drill, error) {
	return rb.Store.Drills(ctx, flow, 500)
}

// Drill returns run id's drill record; nil when it has not started.
func (rb Book) Drill(ctx context.Context, id int64) (*model.Drill, error) {
	d, err := rb.Store.Drill(ctx, id)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &d, nil
}
