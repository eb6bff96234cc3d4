package failover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/translation"
)

// What a failover step rests on, checked again when it starts (issue 28):
// a plan approved minutes ago may name a savepoint whose positions DR's
// retention has deleted since, or one whose verdict was never known. Every
// step that moves a group or restores a job re-checks, at its start, DR's
// reachability, the catalog's verdict of its savepoint for a restore in DR
// and its positions against DR's current log start. A check that fails or
// cannot be made refuses the step, with the reason; only an operator other
// than the requester may override it (StepArgs.InputsOverride), and the
// override is in the step's start record.
//
// A DR drill's translate, rewrite and restore steps are checked as a
// failover's: they read DR. A failback's translate-group-back,
// rewrite-savepoint-back and restore-flink from its rewritten savepoint
// move positions back to the primary, so they are checked against the
// primary's reachability and current log start (logSide).

// StepArgs are what an operator types to run a step.
type StepArgs struct {
	// Confirmation is the flow's name, for an irreversible step.
	Confirmation string
	// Override is the reason to proceed despite the overridable lag and
	// heartbeat rules.
	Override string
	// InputsOverride is the reason to proceed although what the step
	// rests on (a savepoint's verdict, positions in DR) is unusable or
	// unknown: the second operator's, never the requester's.
	InputsOverride string
}

// ErrInputsOverrideByRequester: the requester may not override the check
// of a step's inputs.
var ErrInputsOverrideByRequester = errors.New("only an operator other than the requester may override what a step rests on")

// inputsTimeout bounds the reads of a step's input checks.
const inputsTimeout = 15 * time.Second

// logSide is the cluster a step's positions lie on: DR for a failover
// or a drill, the primary for a failback.
type logSide struct {
	name, where string // as said in the rules: "DR", "in DR"
	primary     bool
}

var (
	sideDR      = logSide{name: "DR", where: "in DR"}
	sidePrimary = logSide{name: "the primary", where: "on the primary", primary: true}
)

// client is the side's client of a flow's two (Monitor.Clients).
func (s logSide) client(primary, dr *kafka.Client) *kafka.Client {
	if s.primary {
		return primary
	}
	return dr
}

// inputRules re-checks what step idx of r rests on, now; nil for steps
// that rest on no savepoint or group position. The rules are
// SecondOperator: only StepArgs.InputsOverride, from someone other than
// the requester, overrides them.
func (rb *Runbook) inputRules(ctx context.Context, r *Run, idx int) []RuleResult {
	if !r.Plan.RestsOnInputs(idx) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, inputsTimeout)
	defer cancel()
	var rules []RuleResult
	add := func(rr RuleResult) {
		rr.Overridable, rr.SecondOperator = !rr.OK, !rr.OK
		rules = append(rules, rr)
	}
	side := sideDR
	if r.Plan.kind().Target() == model.SidePrimary {
		side = sidePrimary
	}
	if snap := rb.Monitor.Snapshot(r.Flow); snap != nil {
		if side.primary {
			add(RuleResult{Name: "primary cluster reachable now", OK: snap.Source.OK, Evidence: reach(snap.Source, "primary")})
		} else {
			add(RuleResult{Name: "DR cluster reachable now", OK: snap.Target.OK, Evidence: reach(snap.Target, "DR")})
		}
	}
	if k := r.Plan.kind().RestsOn(r.Plan, idx); k != nil {
		for _, rr := range k.InputRules(ctx, rb, r, idx) {
			add(rr)
		}
	}
	return rules
}

// RestsOnInputs reports whether step i of p is checked, when it starts,
// against what it rests on (a savepoint, positions in DR or, for a
// failback, on the primary): the group moves, rewrites and restores from
// a savepoint of a failover, a drill and a failback.
func (p Plan) RestsOnInputs(i int) bool {
	if i < 0 || i >= len(p.Steps) {
		return false
	}
	k := p.kind().RestsOn(p, i)
	return k != nil && k.RestsOnInputs(p.Steps[i])
}

// RestingStep is a step kind that may rest on a savepoint or on group
// positions, re-checked by inputRules when it starts.
type RestingStep interface {
	RestsOnInputs(s Step) bool
	// InputRules are its rules, before rb.inputRules marks them
	// overridable by a second operator only.
	InputRules(ctx context.Context, rb *Runbook, r *Run, i int) []RuleResult
}

// The step kinds that rest on inputs; a method renamed on one side only
// would otherwise drop its checks without a word.
var (
	_ RestingStep = translateGroupStep{}
	_ RestingStep = rewriteSavepointStep{}
	_ RestingStep = restoreFlinkStep{}
	_ RestingStep = translateGroupBackStep{}
	_ RestingStep = rewriteBackStep{}
	_ RestingStep = restoreBackStep{}
)

// RestingStepOf is step kind k of a failover (or a drill) when it may
// rest on inputs; nil if not.
func RestingStepOf(k StepKind) RestingStep {
	rs, _ := step(k).(RestingStep)
	return rs
}

func (translateGroupStep) RestsOnInputs(Step) bool { return true }
func (translateGroupStep) InputRules(ctx context.Context, rb *Runbook, r *Run, i int) []RuleResult {
	s := r.Plan.Steps[i]
	var rules []RuleResult
	if s.FromSavepoint != "" {
		rules = append(rules, rb.verdictRule(ctx, r.Flow, s.FromSavepoint, nil))
	}
	name := "the translated positions of group " + s.Group + " are still in DR"
	plan, err := rb.groupPlan(ctx, r.Flow, s)
	if err != nil {
		return append(rules, RuleResult{Name: name, Evidence: "unknown: " + err.Error()})
	}
	pos := map[model.TP]int64{}
	for _, row := range plan.Rows {
		if row.Translation.Translated() {
			pos[row.DR] = row.Translation.Offset
		}
	}
	return append(rules, rb.positionsRule(ctx, r.Flow, name, sideDR, pos))
}

func (rewriteSavepointStep) RestsOnInputs(Step) bool { return true }
func (rewriteSavepointStep) InputRules(ctx context.Context, rb *Runbook, r *Run, i int) []RuleResult {
	s := r.Plan.Steps[i]
	rules := []RuleResult{rb.verdictRule(ctx, r.Flow, s.RewriteFrom, s.Choices)}
	name := "the rewrite's positions are still in DR"
	p, err := rb.rewriteTargets(ctx, r.Flow, s)
	if err != nil {
		return append(rules, RuleResult{Name: name, Evidence: "unknown: " + err.Error()})
	}
	pos := map[model.TP]int64{}
	for _, row := range p.Targets.Rows {
		if row.Target != nil && row.Target.Offset >= 0 {
			pos[row.DR] = row.Target.Offset
		}
	}
	return append(rules, rb.positionsRule(ctx, r.Flow, name, sideDR, pos))
}

func (restoreFlinkStep) RestsOnInputs(s Step) bool { return strings.TrimSpace(s.SavepointPath) != "" }
func (restoreFlinkStep) InputRules(ctx context.Context, rb *Runbook, r *Run, i int) []RuleResult {
	s := r.Plan.Steps[i]
	if RewriteOf(r.Plan, s.SavepointPath) >= 0 {
		return []RuleResult{rb.rewrittenPositionsRule(ctx, r.Flow, s.SavepointPath, sideDR)}
	}
	return []RuleResult{rb.verdictRule(ctx, r.Flow, s.SavepointPath, nil)}
}

func (translateGroupBackStep) RestsOnInputs(Step) bool { return true }
func (translateGroupBackStep) InputRules(ctx context.Context, rb *Runbook, r *Run, i int) []RuleResult {
	s := r.Plan.Steps[i]
	name := "the positions group " + s.Group + " moves back to are still on the primary"
	b, err := rb.groupBack(ctx, r, s.Group)
	if err != nil {
		return []RuleResult{{Name: name, Evidence: "unknown: " + err.Error()}}
	}
	return []RuleResult{rb.positionsRule(ctx, r.Flow, name, sidePrimary, b.Primary)}
}

func (rewriteBackStep) RestsOnInputs(Step) bool { return true }
func (rewriteBackStep) InputRules(ctx context.Context, rb *Runbook, r *Run, i int) []RuleResult {
	name := "the positions the savepoint is rewritten back to are still on the primary"
	if rb.Catalog == nil {
		return []RuleResult{{Name: name, Evidence: "unknown: no savepoint catalog to read the savepoint"}}
	}
	p, err := rb.backTargets(ctx, r, r.Plan.Steps[i])
	if err != nil {
		return []RuleResult{{Name: name, Evidence: "unknown: " + err.Error()}}
	}
	return []RuleResult{rb.positionsRule(ctx, r.Flow, name, sidePrimary, p.Primary)}
}

// A failback restores only its rewritten-back copy.
func (restoreBackStep) RestsOnInputs(s Step) bool { return strings.TrimSpace(s.SavepointPath) != "" }
func (restoreBackStep) InputRules(ctx context.Context, rb *Runbook, r *Run, i int) []RuleResult {
	return []RuleResult{rb.rewrittenPositionsRule(ctx, r.Flow, r.Plan.Steps[i].SavepointPath, sidePrimary)}
}

// verdictRule asks the savepoint catalog, now, whether savepoint path can
// be restored in DR: its DR verdict (the primary's side does not matter
// for a restore in DR, and is unknown while the primary is down). Unknown
// or unusable fails, with the catalog's reasons. A partition an operator
// chose a position for (a rewrite's choices, by primary "topic-partition")
// does not rest on its translation: the positions rule checks the choice.
func (rb *Runbook) verdictRule(ctx context.Context, flow, path string, chosen map[string]translation.Choice) RuleResult {
	rr := RuleResult{Name: "the catalog's verdict of savepoint " + path + " for a restore in DR is usable"}
	if rb.Catalog == nil {
		rr.Evidence = "unknown: no savepoint catalog to judge it"
		return rr
	}
	sp, err := rb.Store.SavepointByPath(ctx, catalog.CanonicalPath(path))
	switch {
	case errors.Is(err, storage.ErrNotFound):
		rr.Evidence = "unknown: the savepoint is not in the catalog, so its positions cannot be checked"
		return rr
	case err != nil:
		rr.Evidence = "unknown: " + err.Error()
		return rr
	case sp.Origin == model.OriginRewritten:
		return rb.rewrittenPositionsRule(ctx, flow, path, sideDR)
	}
	u, err := rb.Catalog.Usability(ctx, sp, flow)
	if err != nil {
		rr.Evidence = "unknown: " + err.Error()
		return rr
	}
	var why []string
	for _, p := range u.Partitions {
		if _, ok := chosen[mm2.TPKey(p.Source)]; !ok && p.DRVerdict != catalog.Usable {
			why = append(why, fmt.Sprintf("%s: %s (%s)", mm2.TPKey(p.Source), p.DRVerdict, strings.Join(p.Problems, "; ")))
		}
	}
	if u.DRErr != "" && len(why) > 0 {
		why = append(why, "DR: "+u.DRErr)
	}
	why = append(why, u.Notes...)
	rr.OK = len(why) == 0 && len(u.Partitions) > 0
	if rr.OK {
		rr.Evidence = fmt.Sprintf("usable in DR as of %s: %d partition(s), every translated offset at or past DR's log start", u.At.UTC().Format(time.RFC3339), len(u.Partitions))
		return rr
	}
	rr.Evidence = fmt.Sprintf("%s in DR as of %s: %s", u.DR, u.At.UTC().Format(time.RFC3339), strings.Join(why, "; "))
	return rr
}

// rewrittenPositionsRule checks a rewritten savepoint's positions (side's
// topics and offsets already, as the catalog read them back) against
// side's current log start.
func (rb *Runbook) rewrittenPositionsRule(ctx context.Context, flow, path string, side logSide) RuleResult {
	name := "the positions of the rewritten savepoint " + path + " are still " + side.where
	sp, err := rb.Store.SavepointByPath(ctx, catalog.CanonicalPath(path))
	if err != nil {
		return RuleResult{Name: name, Evidence: "unknown: " + err.Error()}
	}
	offs, err := sp.Offsets()
	if err != nil || offs == nil {
		return RuleResult{Name: name, Evidence: fmt.Sprintf("unknown: its offsets could not be read (%v%s)", err, sp.ReadError)}
	}
	pos := map[model.TP]int64{}
	for key, off := range offs {
		tp, err := mm2.ParseTPKey(key)
		if err != nil {
			return RuleResult{Name: name, Evidence: "unknown: " + err.Error()}
		}
		if off >= 0 { // earliest and latest choices rest on no position
			pos[tp] = off
		}
	}
	return rb.positionsRule(ctx, flow, name, side, pos)
}

// positionsRule reads side's log starts and fails when any of pos (side's
// partitions and the offsets a step moves them to) lies before one: the
// records from there were deleted by retention, and a job or group put
// there would silently skip to wherever its reset policy leads.
func (rb *Runbook) positionsRule(ctx context.Context, flow, name string, side logSide, pos map[model.TP]int64) RuleResult {
	rr := RuleResult{Name: name}
	if len(pos) == 0 {
		rr.OK, rr.Evidence = true, "no position "+side.where+" to check"
		return rr
	}
	primary, dr := rb.Monitor.Clients(flow)
	if dr == nil {
		rr.Evidence = "unknown: no flow " + flow
		return rr
	}
	var topics []string
	for tp := range pos {
		if !slices.Contains(topics, tp.Topic) {
			topics = append(topics, tp.Topic)
		}
	}
	bounds, err := kafka.ListBounds(ctx, side.client(primary, dr), topics...)
	var deleted, unknown []string
	for _, tp := range slices.SortedFunc(maps.Keys(pos), func(a, b model.TP) int {
		return strings.Compare(mm2.TPKey(a), mm2.TPKey(b))
	}) {
		b, ok := bounds[tp]
		switch {
		case !ok:
			unknown = append(unknown, mm2.TPKey(tp))
		case b.Start > pos[tp]:
			deleted = append(deleted, fmt.Sprintf("%s: log start %d is past the position %d (%d record(s) deleted)", mm2.TPKey(tp), b.Start, pos[tp], b.Start-pos[tp]))
		}
	}
	switch {
	case len(deleted) > 0:
		rr.Evidence = "data deleted " + side.where + ": " + strings.Join(deleted, "; ")
	case len(unknown) > 0:
		rr.Evidence = fmt.Sprintf("unknown: %s's log start of %s could not be read", side.name, strings.Join(unknown, ", "))
		if err != nil {
			rr.Evidence += ": " + err.Error()
		}
	default:
		rr.OK, rr.Evidence = true, fmt.Sprintf("%d position(s), each at or past %s's log start, read %s", len(pos), side.name, rb.Now().UTC().Format(time.RFC3339))
	}
	return rr
}

// applyInputsOverride lets who's typed reason override the failing input
// rules, when who is not the run's requester.
func applyInputsOverride(rules []RuleResult, r *Run, who Actor, reason string) error {
	if strings.TrimSpace(reason) == "" {
		return nil
	}
	if samePerson(who.Name, r.CreatedBy) {
		return ErrInputsOverrideByRequester
	}
	for i := range rules {
		if rules[i].SecondOperator && !rules[i].OK {
			rules[i].Overridden = reason + " (override by " + who.Name + ")"
		}
	}
	return nil
}

// planInputs are the input checks of every step of r as its approver sees
// them, for the approval's record: a step later says what changed since.
func (rb *Runbook) planInputs(ctx context.Context, r *Run) map[string][]RuleResult {
	out := map[string][]RuleResult{}
	for i := range r.Plan.Steps {
		if rules := rb.inputRules(ctx, r, i); len(rules) > 0 {
			out[fmt.Sprint(i+1)] = rules
		}
	}
	return out
}

// changedSinceApproval compares step idx's input checks now with those
// the newest approval of the current plan recorded, and says what changed
// ("" entries never). An approval that recorded none (from before this
// check) compares nothing.
func (rb *Runbook) changedSinceApproval(ctx context.Context, r *Run, idx int, now []RuleResult) []string {
	es, err := rb.Store.AuditEntries(ctx, storage.AuditFilter{Action: string(audit.FailoverApprove), Subject: RunSubject(r.ID)})
	if err != nil {
		return []string{"the approval's record could not be read: " + err.Error()}
	}
	for _, e := range es { // newest first
		if e.Subject != RunSubject(r.ID) {
			continue
		}
		var d struct {
			PlanHash string                  `json:"plan_hash"`
			Inputs   map[string][]RuleResult `json:"inputs"`
		}
		if json.Unmarshal([]byte(e.Details), &d) != nil || d.PlanHash != r.PlanHash || d.Inputs == nil {
			continue
		}
		then := d.Inputs[fmt.Sprint(idx+1)]
		var out []string
		for _, n := range now {
			i := slices.IndexFunc(then, func(t RuleResult) bool { return t.Name == n.Name })
			switch {
			case i < 0:
				out = append(out, fmt.Sprintf("%s: not checked at approval; now %s", n.Name, mark(n)))
			case then[i].OK != n.OK:
				out = append(out, fmt.Sprintf("%s: at approval by %s %s; now %s", n.Name, e.Actor, mark(then[i]), mark(n)))
			}
		}
		return out
	}
	return nil
}

func mark(r RuleResult) string {
	if r.OK {
		return "✓ " + r.Evidence
	}
	return "✗ " + r.Evidence
}
