package switchover

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
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/internal/effect"
)

// title says what a switchover's own step i does; "" for the failover's.
func title(p runbook.Plan, i int) string {
	f := p.Steps[i].Fence
	switch p.Steps[i].Kind {
	case KindFence:
		switch {
		case f == nil:
			return "Fence the primary's writers (no fence configured: refused)"
		case f.Method == config.FenceACL:
			return "Fence the primary's writers: add DENY WRITE ACLs on each mirrored topic for " + strings.Join(f.Principals, ", ")
		case f.Method == config.FenceCommand:
			return "Fence the primary's writers: run " + strings.Join(f.Command, " ")
		default:
			return "Fence the primary's writers by hand, then confirm with the flow name"
		}
	case KindVerifyFence:
		return fmt.Sprintf("Verify the fence: the primary's log ends of the mirrored topics stay put for %s", quiet(p))
	case KindWaitCaughtUp:
		return "Wait until DR holds every record up to the fenced ends (MirrorMaker 2's replicated position, committed data only)"
	case KindUnfenceDR:
		return "Unfence on DR: remove the DENY WRITE ACLs of " + strings.Join(fenceOf(p).Principals, ", ") + " on DR's copies of the mirrored topics, so the writers may write there"
	case KindVerdict:
		return "Verdict: RPO 0, verified, or exactly which partitions and records were not"
	}
	return ""
}

// fenceOf is the fence p's first step carries (Problems refuses a plan
// whose fence step has none).
func fenceOf(p runbook.Plan) runbook.Fence {
	if len(p.Steps) > 0 && p.Steps[0].Fence != nil {
		return *p.Steps[0].Fence
	}
	return runbook.Fence{}
}

func quiet(p runbook.Plan) time.Duration {
	return time.Duration(fenceOf(p).QuietPeriodMs) * time.Millisecond
}

// fenced is the fence step's result: how the writers were fenced, on
// which topics; the ACLs it added are exactly what a rollback removes.
type fenced struct {
	Method     string             `json:"method"`
	Topics     []string           `json:"topics"`
	Principals []string           `json:"principals,omitempty"`
	Added      []kafka.TopicACL   `json:"acls_added,omitempty"`
	Command    *effect.CommandRun `json:"command,omitempty"`
	Confirmed  string             `json:"confirmed,omitempty"`
	AtMs       int64              `json:"at_ms"`
}

// fenceVerified is verify-fence's result: the ends that held for the
// quiet period (the fenced ends), or the ones that moved.
type fenceVerified struct {
	Held    bool             `json:"held"`
	Ends    map[string]int64 `json:"fenced_ends"`
	Moved   []string         `json:"moved,omitempty"`
	FromMs  int64            `json:"from_ms"`
	ToMs    int64            `json:"to_ms"`
	Samples int              `json:"samples"`
}

// caughtUp is wait-caught-up's result: MirrorMaker 2's replicated
// position of each fenced partition when it reached the fenced end.
type caughtUp struct {
	CaughtUp   bool             `json:"caught_up"`
	Replicated map[string]int64 `json:"replicated"`
	Behind     []string         `json:"behind,omitempty"`
	AtMs       int64            `json:"at_ms"`
}

// verdictOf is the verdict step's result.
type verdictOf struct {
	Verdict     string   `json:"verdict"`
	Verified    bool     `json:"verified"`
	Partitions  int      `json:"partitions"`
	NotVerified []string `json:"not_verified,omitempty"`
}

// resultOf reads the result of r's step of kind k into v; an error when
// that step has no readable result.
func resultOf(r *runbook.Run, k runbook.StepKind, v any) error {
	i := slices.IndexFunc(r.Plan.Steps, func(s runbook.Step) bool { return s.Kind == k })
	if i < 0 || i >= len(r.Steps) || r.Steps[i].Result == "" || r.Steps[i].Result == "null" {
		return fmt.Errorf("step %s has no result", k)
	}
	if err := json.Unmarshal([]byte(r.Steps[i].Result), v); err != nil {
		return fmt.Errorf("step %s's result unreadable: %w", k, err)
	}
	return nil
}

// mirroredTopics are the flow's mirrored topics on the primary as of the
// monitor's last refresh (MM2's own topics, heartbeats and the other
// direction's copies aside, as the lag figures have them).
func (b book) mirroredTopics(flow string) ([]string, error) {
	return b.topics(flow, func(p model.PartitionLag) string { return p.Topic.String() })
}

// topics are the names name gives the monitor's partitions of flow,
// sorted, once each.
func (b book) topics(flow string, name func(model.PartitionLag) string) ([]string, error) {
	s := b.Monitor.Snapshot(flow)
	if s == nil || len(s.Partitions) == 0 {
		return nil, errors.New("the console knows no mirrored partition of this flow yet")
	}
	var out []string
	for _, p := range s.Partitions {
		if !slices.Contains(out, name(p)) {
			out = append(out, name(p))
		}
	}
	slices.Sort(out)
	return out, nil
}

// primaryEnds reads the primary's log end of every partition of topics,
// and whether a transaction is open there (its last stable offset below
// the end): all of them, or an error.
func (b book) primaryEnds(ctx context.Context, flow string, topics []string) (map[model.TP]int64, []string, error) {
	primary, _ := b.Monitor.Clients(flow)
	if primary == nil {
		return nil, nil, errors.New("no client of the primary")
	}
	rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	bounds, err := kafka.ListBounds(rctx, primary, topics...)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the primary's log ends: %w", err)
	}
	stable, err := kafka.StableEnds(rctx, primary, topics...)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the primary's last stable offsets: %w", err)
	}
	ends := make(map[model.TP]int64, len(bounds))
	var open []string
	for tp, lb := range bounds {
		ends[tp] = lb.End
		if lso, ok := stable[tp]; !ok || lso < lb.End {
			open = append(open, mm2.TPKey(tp))
		}
	}
	slices.Sort(open)
	return ends, open, nil
}

// fence performs the fence step.
func (b book) fence(ctx context.Context, w audit.Written, e *runbook.Execution) (any, error) {
	f := e.Step.Fence
	if f == nil {
		return nil, errors.New("the plan names no fence")
	}
	topics, err := b.mirroredTopics(e.Run.Flow)
	if err != nil {
		return nil, err
	}
	res := fenced{Method: f.Method, Topics: topics, AtMs: b.now().UnixMilli()}
	switch f.Method {
	case config.FenceACL:
		res.Principals = f.Principals
		primary, _ := b.Monitor.Clients(e.Run.Flow)
		if e.Run.Steps[e.Idx].Attempts == 0 {
			// The start rule found none; one added since is not this
			// run's to remove.
			if there, err := kafka.DenyWriteACLs(ctx, primary, topics, f.Principals); err != nil || len(there) > 0 {
				return res, errors.Join(err, fmt.Errorf("DENY WRITE entries exist before the fence (%s): the rollback removes only what the fence adds, so it will not add these", aclList(there)))
			}
		}
		// A later attempt (after a crash or a failure) adds the same
		// entries again: the first attempt's start found none, so every
		// entry there is this run's fence.
		res.Added, err = effect.FenceWrites(ctx, w, primary, topics, f.Principals)
		return res, err
	case config.FenceCommand:
		run, err := effect.RunCommand(ctx, w, f.Command, time.Duration(f.CommandTimeoutMs)*time.Millisecond)
		res.Command = &run
		return res, err
	case config.FenceManual:
		res.Confirmed = e.Who.Name + " confirmed the writers are fenced (typed the flow name)"
		return res, nil
	}
	return res, fmt.Errorf("unknown fence method %q", f.Method)
}

func aclList(acls []kafka.TopicACL) string {
	var out []string
	for _, a := range acls {
		out = append(out, a.Principal+" on "+a.Topic)
	}
	return strings.Join(out, ", ")
}

// pollEvery is how often verify-fence samples the ends and
// wait-caught-up reads the monitor's figures.
const pollEvery = 500 * time.Millisecond

// verifyFence samples the primary's log ends of the fenced topics over
// the quiet period: any end that moves, a partition that appears or
// cannot be read, or a transaction still open at its end fails the step,
// naming the partition and how many records.
func (b book) verifyFence(ctx context.Context, e *runbook.Execution) (any, error) {
	var fr fenced
	if err := resultOf(e.Run, KindFence, &fr); err != nil {
		return nil, err
	}
	period := quiet(e.Run.Plan)
	res := fenceVerified{FromMs: b.now().UnixMilli()}
	first, open, err := b.primaryEnds(ctx, e.Run.Flow, fr.Topics)
	if err != nil {
		return res, fmt.Errorf("the fence is not verified: %w", err)
	}
	res.Ends, res.Samples = keyed(first), 1
	if missing := b.unread(e.Run.Flow, fr.Topics, first); len(missing) > 0 {
		return res, fmt.Errorf("the fence is not verified: the primary's end of %s was not read (the monitor knows these partitions)", strings.Join(missing, ", "))
	}
	deadline := time.Now().Add(period)
	for {
		if time.Now().After(deadline) {
			if len(open) > 0 {
				// Its commit or abort marker would still move the end.
				return res, fmt.Errorf("the fence is not verified: a transaction is open on %s (its outcome may still be written); roll back the fence, or wait for it to end and run this step again", strings.Join(open, ", "))
			}
			res.Held, res.ToMs = true, b.now().UnixMilli()
			return res, nil
		}
		progress(e, fmt.Sprintf("%d partition(s) at the fenced ends; %s of the quiet period to go", len(first), time.Until(deadline).Round(time.Second)))
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(min(pollEvery, max(time.Until(deadline), time.Millisecond))):
		}
		var now map[model.TP]int64
		now, open, err = b.primaryEnds(ctx, e.Run.Flow, fr.Topics)
		if err != nil {
			return res, fmt.Errorf("the fence is not verified: %w", err)
		}
		res.Samples++
		if res.Moved = moved(first, now); len(res.Moved) > 0 {
			return res, fmt.Errorf("the fence does not hold: %s; a writer bypasses the fence: roll back (removes the fence's ACLs) or stop that writer and run this step again", strings.Join(res.Moved, "; "))
		}
	}
}

// unread are the partitions of topics the monitor's figures know that
// ends lacks: a partition never sampled is never checked for catch-up.
func (b book) unread(flow string, topics []string, ends map[model.TP]int64) []string {
	var out []string
	if s := b.Monitor.Snapshot(flow); s != nil {
		for _, p := range s.Partitions {
			tp := model.TP{Topic: p.Topic.String(), Partition: p.Partition}
			if _, ok := ends[tp]; !ok && slices.Contains(topics, tp.Topic) {
				out = append(out, mm2.TPKey(tp))
			}
		}
	}
	return out
}

// moved says how each partition's end differs between from and now.
func moved(from, now map[model.TP]int64) []string {
	var out []string
	for tp, end := range now {
		if was, ok := from[tp]; !ok {
			out = append(out, mm2.TPKey(tp)+": a partition that was not there when the fence was first checked")
		} else if end != was {
			out = append(out, fmt.Sprintf("%s: %+d record(s) (end %d → %d)", mm2.TPKey(tp), end-was, was, end))
		}
	}
	for tp := range from {
		if _, ok := now[tp]; !ok {
			out = append(out, mm2.TPKey(tp)+": its end could not be read")
		}
	}
	slices.Sort(out)
	return out
}

func progress(e *runbook.Execution, s string) {
	if e.Progress != nil {
		e.Progress(s)
	}
}

func keyed(m map[model.TP]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for tp, v := range m {
		out[mm2.TPKey(tp)] = v
	}
	return out
}

func unkeyed(m map[string]int64) (map[model.TP]int64, error) {
	out := make(map[model.TP]int64, len(m))
	for k, v := range m {
		tp, err := mm2.ParseTPKey(k)
		if err != nil {
			return nil, err
		}
		out[tp] = v
	}
	return out, nil
}

// fencedEnds are the ends verify-fence saw hold, and when it finished.
func fencedEnds(r *runbook.Run) (map[model.TP]int64, time.Time, error) {
	var v fenceVerified
	if err := resultOf(r, KindVerifyFence, &v); err != nil {
		return nil, time.Time{}, err
	}
	if !v.Held || len(v.Ends) == 0 {
		return nil, time.Time{}, errors.New("verify-fence did not see the fence hold")
	}
	ends, err := unkeyed(v.Ends)
	return ends, time.UnixMilli(v.ToMs), err
}

// behind says, of each fenced partition, what keeps DR from holding every
// record up to its fenced end in s: nothing when it does. A figure the
// monitor did not read since the fence was verified, or could not read,
// is not taken as caught up.
func behind(s *flowstate.FlowSnapshot, ends map[model.TP]int64, since time.Time) (replicated map[string]int64, out []string, breached []string) {
	replicated = map[string]int64{}
	rows := map[model.TP]model.PartitionLag{}
	if s != nil {
		for _, p := range s.Partitions {
			rows[model.TP{Topic: p.Topic.String(), Partition: p.Partition}] = p
		}
	}
	tps := slices.Collect(maps.Keys(ends))
	mm2.SortTPs(tps)
	for _, tp := range tps {
		end, key := ends[tp], mm2.TPKey(tp)
		p, ok := rows[tp]
		switch {
		case !ok:
			out = append(out, key+": not in the monitor's figures")
		case s.FiguresStale || p.AsOf.Time().Before(since):
			out = append(out, key+": not read since the fence was verified")
		case p.SourceEnd.Known && p.SourceEnd.V != end:
			breached = append(breached, fmt.Sprintf("%s: the primary's end is %d, the fenced end %d", key, p.SourceEnd.V, end))
		case p.Restarted.String() != "":
			out = append(out, key+": its log restarted ("+p.Restarted.String()+")")
		case !p.Replicated.Known:
			out = append(out, fmt.Sprintf("%s: MirrorMaker 2's position unknown (fenced end %d: up to %d record(s) may be missing)", key, end, end))
		case p.Replicated.V < end:
			replicated[key] = p.Replicated.V
			out = append(out, fmt.Sprintf("%s: %d record(s) behind (replicated to %d of %d, %s)", key, end-p.Replicated.V, p.Replicated.V, end, p.Method))
		default:
			replicated[key] = p.Replicated.V
		}
	}
	return replicated, out, breached
}

// waitCaughtUp waits until the monitor's figures, read after the fence
// was verified, show MirrorMaker 2's replicated position at every fenced
// end, within the fence's catch-up timeout; a primary end past its fenced
// one fails at once.
func (b book) waitCaughtUp(ctx context.Context, e *runbook.Execution) (any, error) {
	ends, since, err := fencedEnds(e.Run)
	if err != nil {
		return nil, err
	}
	timeout := time.Duration(fenceOf(e.Run.Plan).CatchUpTimeoutMs) * time.Millisecond
	deadline := time.Now().Add(timeout)
	for {
		rep, out, breached := behind(b.Monitor.Snapshot(e.Run.Flow), ends, since)
		res := caughtUp{Replicated: rep, Behind: out, AtMs: b.now().UnixMilli()}
		switch {
		case len(breached) > 0:
			res.Behind = append(res.Behind, breached...)
			return res, fmt.Errorf("the fence does not hold: %s; roll back the fence, or find the writer", strings.Join(breached, "; "))
		case len(out) == 0:
			res.CaughtUp = true
			return res, nil
		case time.Now().After(deadline):
			return res, fmt.Errorf("DR does not hold every record up to the fence after %s: %s", timeout, strings.Join(out, "; "))
		}
		progress(e, fmt.Sprintf("%d of %d partition(s) not yet caught up: %s", len(out), len(ends), out[0]))
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(pollEvery):
		}
	}
}

func sortedTPs(m map[model.TP]int64) []model.TP {
	tps := slices.Collect(maps.Keys(m))
	mm2.SortTPs(tps)
	return tps
}

// drUnfenced is unfence-dr's result: the DENY WRITE entries found on DR's
// copies of the mirrored topics for the fence's principals, and removed.
type drUnfenced struct {
	Note    string           `json:"note,omitempty"`
	Topics  []string         `json:"dr_topics"`
	Found   []kafka.TopicACL `json:"found"`
	Removed []kafka.TopicACL `json:"removed"`
}

// drTopics are DR's copies of the mirrored topics, as the lag figures
// name them.
func (b book) drTopics(flow string) ([]string, error) {
	return b.topics(flow, func(p model.PartitionLag) string { return p.RemoteTopic.String() })
}

// unfenceDR removes the fence's principals' DENY WRITE entries on DR's
// copies of the mirrored topics (a standby fence an operator keeps there
// against split writes); none there removes nothing.
func (b book) unfenceDR(ctx context.Context, w audit.Written, r *runbook.Run) (any, error) {
	f := fenceOf(r.Plan)
	topics, err := b.drTopics(r.Flow)
	if err != nil {
		return nil, err
	}
	_, dr := b.Monitor.Clients(r.Flow)
	res := drUnfenced{Topics: topics}
	res.Found, err = kafka.DenyWriteACLs(ctx, dr, topics, f.Principals)
	switch {
	case errors.Is(err, kafka.ErrNoAuthorizer):
		res.Note = "DR runs no authorizer: no ACL fences writes there, nothing to remove"
		return res, nil
	case err != nil:
		return res, err
	}
	if len(res.Found) == 0 {
		return res, nil
	}
	res.Removed, err = effect.UnfenceWrites(ctx, w, dr, res.Found)
	return res, err
}
