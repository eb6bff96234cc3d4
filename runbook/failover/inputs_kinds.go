package failover

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/storage"
)

// logSide is the cluster a step's positions lie on: DR for a failover
// or a drill, the primary for a failback.
type logSide struct {
	name, where string // as said in the rules: "DR", "in DR"
	primary     bool
}

var (
	sideDR      = logSide{name: "DR", where: "in DR"}
	SidePrimary = logSide{name: "the primary", where: "on the primary", primary: true}
)

// client is the side's client of a flow's two (Monitor.Clients).
func (s logSide) client(primary, dr *kafka.Client) *kafka.Client {
	if s.primary {
		return primary
	}
	return dr
}

// The step kinds that rest on inputs; a method renamed on one side only
// would otherwise drop its checks without a word.
var (
	_ runbook.RestingStep = translateGroupStep{}
	_ runbook.RestingStep = rewriteSavepointStep{}
	_ runbook.RestingStep = restoreFlinkStep{}
)

// restingStepOf is step kind k of a failover (or a drill) when it may
// rest on inputs; nil if not.
func restingStepOf(k runbook.StepKind) runbook.RestingStep {
	rs, _ := step(k).(runbook.RestingStep)
	return rs
}

func (translateGroupStep) RestsOnInputs(runbook.Step) bool { return true }

func (translateGroupStep) InputRules(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int) []runbook.RuleResult {
	s := r.Plan.Steps[i]
	var rules []runbook.RuleResult
	if s.FromSavepoint != "" {
		rules = append(rules, book(rb).verdictRule(ctx, r.Flow, s.FromSavepoint, nil))
	}
	name := "the translated positions of group " + s.Group + " are still in DR"
	plan, err := book(rb).groupPlan(ctx, r.Flow, s)
	if err != nil {
		return append(rules, runbook.RuleResult{Name: name, Evidence: "unknown: " + err.Error()})
	}
	pos := map[model.TP]int64{}
	for _, row := range plan.Rows {
		if row.Translation.Translated() {
			pos[row.DR] = row.Translation.Offset
		}
	}
	return append(rules, book(rb).PositionsRule(ctx, r.Flow, name, sideDR, pos))
}

func (rewriteSavepointStep) RestsOnInputs(runbook.Step) bool { return true }

func (rewriteSavepointStep) InputRules(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int) []runbook.RuleResult {
	s := r.Plan.Steps[i]
	rules := []runbook.RuleResult{book(rb).verdictRule(ctx, r.Flow, s.RewriteFrom, s.Choices)}
	name := "the rewrite's positions are still in DR"
	p, err := book(rb).rewriteTargets(ctx, r.Flow, s)
	if err != nil {
		return append(rules, runbook.RuleResult{Name: name, Evidence: "unknown: " + err.Error()})
	}
	pos := map[model.TP]int64{}
	for _, row := range p.Targets.Rows {
		if row.Target != nil && row.Target.Offset >= 0 {
			pos[row.DR] = row.Target.Offset
		}
	}
	return append(rules, book(rb).PositionsRule(ctx, r.Flow, name, sideDR, pos))
}

func (restoreFlinkStep) RestsOnInputs(s runbook.Step) bool {
	return strings.TrimSpace(s.SavepointPath) != ""
}

func (restoreFlinkStep) InputRules(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int) []runbook.RuleResult {
	s := r.Plan.Steps[i]
	if RewriteOf(r.Plan, s.SavepointPath) >= 0 {
		return []runbook.RuleResult{book(rb).RewrittenPositionsRule(ctx, r.Flow, s.SavepointPath, sideDR)}
	}
	return []runbook.RuleResult{book(rb).verdictRule(ctx, r.Flow, s.SavepointPath, nil)}
}

// verdictRule asks the savepoint catalog, now, whether savepoint path can
// be restored in DR: its DR verdict (the primary's side does not matter
// for a restore in DR, and is unknown while the primary is down). Unknown
// or unusable fails, with the catalog's reasons. A partition an operator
// chose a position for (a rewrite's choices, by primary "topic-partition")
// does not rest on its translation: the positions rule checks the choice.
func (rb Book) verdictRule(ctx context.Context, flow, path string, chosen map[string]model.Choice) runbook.RuleResult {
	rr := runbook.RuleResult{Name: "the catalog's verdict of savepoint " + path + " for a restore in DR is usable"}
	if rb.Catalog == nil {
		rr.Evidence = "unknown: no savepoint catalog to judge it"
		return rr
	}
	sp, err := rb.Store.SavepointByPath(ctx, flink.CanonicalPath(path))
	switch {
	case errors.Is(err, storage.ErrNotFound):
		rr.Evidence = "unknown: the savepoint is not in the catalog, so its positions cannot be checked"
		return rr
	case err != nil:
		rr.Evidence = "unknown: " + err.Error()
		return rr
	case sp.Origin == model.OriginRewritten:
		return rb.RewrittenPositionsRule(ctx, flow, path, sideDR)
	}
	u, err := rb.Catalog.Usability(ctx, sp, flow)
	if err != nil {
		rr.Evidence = "unknown: " + err.Error()
		return rr
	}
	var why []string
	for _, p := range u.Partitions {
		if _, ok := chosen[mm2.TPKey(p.Source)]; !ok && p.DRVerdict != model.VerdictUsable {
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

// RewrittenPositionsRule checks a rewritten savepoint's positions (side's
// topics and offsets already, as the catalog read them back) against
// side's current log start.
func (rb Book) RewrittenPositionsRule(ctx context.Context, flow, path string, side logSide) runbook.RuleResult {
	name := "the positions of the rewritten savepoint " + path + " are still " + side.where
	sp, err := rb.Store.SavepointByPath(ctx, flink.CanonicalPath(path))
	if err != nil {
		return runbook.RuleResult{Name: name, Evidence: "unknown: " + err.Error()}
	}
	offs, err := sp.Offsets()
	if err != nil || offs == nil {
		return runbook.RuleResult{Name: name, Evidence: fmt.Sprintf("unknown: its offsets could not be read (%v%s)", err, sp.ReadError)}
	}
	pos := map[model.TP]int64{}
	for key, off := range offs {
		tp, err := mm2.ParseTPKey(key)
		if err != nil {
			return runbook.RuleResult{Name: name, Evidence: "unknown: " + err.Error()}
		}
		if off >= 0 { // earliest and latest choices rest on no position
			pos[tp] = off
		}
	}
	return rb.PositionsRule(ctx, flow, name, side, pos)
}

// PositionsRule reads side's log starts and fails when any of pos (side's
// partitions and the offsets a step moves them to) lies before one: the
// records from there were deleted by retention, and a job or group put
// there would silently skip to wherever its reset policy leads.
func (rb Book) PositionsRule(ctx context.Context, flow, name string, side logSide, pos map[model.TP]int64) runbook.RuleResult {
	rr := runbook.RuleResult{Name: name}
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
