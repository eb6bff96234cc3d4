package switchover

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
)

// rules are checked again when step i starts, none overridable: the
// fence as approved (its first steps and the mirror's stop); before the
// fence, both clusters reached, the mirrored topics known, the mirror
// running and no fence entry there already; before the mirror stops, the
// fence still holding and DR holding every record up to it.
func (b book) rules(ctx context.Context, r *runbook.Run, i int) []runbook.RuleResult {
	k := r.Plan.Steps[i].Kind
	var out []runbook.RuleResult
	if k == KindFence || k == KindVerifyFence || k == KindWaitCaughtUp || k == failover.KindStopMirror {
		f := b.Config.Flow(r.Flow)
		same := runbook.RuleResult{Name: "the flow's switchover configuration fences as approved"}
		planned := r.Plan.Steps[0].Fence
		switch now := FenceOf(f); {
		case planned == nil:
			same.Evidence = "the plan names no fence"
		case sameFence(planned, now):
			same.OK, same.Evidence = true, "fence "+planned.Method
		default:
			same.Evidence = "the configuration changed since the plan was made: make a new plan"
		}
		out = append(out, same)
	}
	switch k {
	case KindFence:
		out = append(out, b.beforeFence(ctx, r, i)...)
	case failover.KindStopMirror:
		out = append(out, b.fenceHolds(ctx, r), b.drHolds(r))
	}
	return out
}

func (b book) beforeFence(ctx context.Context, r *runbook.Run, i int) []runbook.RuleResult {
	s := b.Monitor.Snapshot(r.Flow)
	if s == nil {
		return []runbook.RuleResult{{Name: "the flow is monitored", Evidence: "no figures of this flow"}}
	}
	out := []runbook.RuleResult{
		{Name: "primary reachable", OK: s.Source.OK, Evidence: failover.ReachText(s.Source, "the primary")},
		{Name: "DR reachable", OK: s.Target.OK, Evidence: failover.ReachText(s.Target, "DR")},
	}
	hb := runbook.RuleResult{Name: "MirrorMaker 2 running: replicated heartbeats fresh (DR catches up behind the fence)"}
	timeout := b.Config.Thresholds.HeartbeatTimeout.D()
	if s.HeartbeatAge == nil {
		hb.Evidence = "no replicated heartbeat ever seen"
	} else {
		hb.OK = *s.HeartbeatAge <= timeout
		hb.Evidence = fmt.Sprintf("last heartbeat %s ago (timeout %s)", s.HeartbeatAge.Round(time.Second), timeout)
	}
	out = append(out, hb)
	topics, err := b.mirroredTopics(r.Flow)
	known := runbook.RuleResult{Name: "the mirrored topics are known"}
	if err != nil {
		known.Evidence = err.Error()
		return append(out, known)
	}
	known.OK, known.Evidence = true, strings.Join(topics, ", ")
	out = append(out, known)
	f := r.Plan.Steps[i].Fence
	if f == nil || f.Method != config.FenceACL {
		return out
	}
	none := runbook.RuleResult{Name: "no DENY WRITE entry of the fence's exists yet (the rollback removes only what the fence adds)"}
	primary, _ := b.Monitor.Clients(r.Flow)
	switch there, err := kafka.DenyWriteACLs(ctx, primary, topics, f.Principals); {
	case i < len(r.Steps) && r.Steps[i].Attempts > 0:
		none.OK, none.Evidence = true, "an earlier attempt of this step added them: they are this run's fence"
	case err != nil:
		none.Evidence = "unknown: " + err.Error()
	case len(there) > 0:
		none.Evidence = "already there: " + aclList(there)
	default:
		none.OK, none.Evidence = true, "none"
	}
	return append(out, none)
}

// fenceHolds: the primary's ends are still the fenced ends, read now.
func (b book) fenceHolds(ctx context.Context, r *runbook.Run) runbook.RuleResult {
	rule := runbook.RuleResult{Name: "the fence holds: the primary's log ends are still the fenced ends"}
	ends, _, err := fencedEnds(r)
	if err != nil {
		rule.Evidence = err.Error()
		return rule
	}
	var fr fenced
	if err := resultOf(r, KindFence, &fr); err != nil {
		rule.Evidence = err.Error()
		return rule
	}
	now, open, err := b.primaryEnds(ctx, r.Flow, fr.Topics)
	switch m := moved(ends, now); {
	case err != nil:
		rule.Evidence = "unknown: " + err.Error()
	case len(m) > 0:
		rule.Evidence = strings.Join(m, "; ")
	case len(open) > 0:
		rule.Evidence = "a transaction is open on " + strings.Join(open, ", ")
	default:
		rule.OK, rule.Evidence = true, fmt.Sprintf("%d partition(s) at their fenced ends", len(ends))
	}
	return rule
}

// drHolds: the monitor's figures, read after the fence was verified, show
// DR holding every record up to the fenced ends.
func (b book) drHolds(r *runbook.Run) runbook.RuleResult {
	rule := runbook.RuleResult{Name: "DR holds every record up to the fenced ends"}
	ends, since, err := fencedEnds(r)
	if err != nil {
		rule.Evidence = err.Error()
		return rule
	}
	_, out, breached := behind(b.Monitor.Snapshot(r.Flow), ends, since)
	if all := append(breached, out...); len(all) > 0 {
		rule.Evidence = strings.Join(all, "; ")
		return rule
	}
	rule.OK, rule.Evidence = true, fmt.Sprintf("%d partition(s) replicated to their fenced ends", len(ends))
	return rule
}

// preview says what the switchover's own step i will do.
func (b book) preview(ctx context.Context, r *runbook.Run, i int) []string {
	f := fenceOf(r.Plan)
	topics, err := b.mirroredTopics(r.Flow)
	on := strings.Join(topics, ", ")
	if err != nil {
		on = "(" + err.Error() + ")"
	}
	switch r.Plan.Steps[i].Kind {
	case KindFence:
		switch f.Method {
		case config.FenceACL:
			return []string{"CreateACLs on the primary: DENY WRITE (literal, any host) on " + on + " for " + strings.Join(f.Principals, ", ") + ".",
				"The entries added are recorded in this step's result; Roll back removes exactly those (audited). Other principals are not fenced: verify-fence catches one that writes."}
		case config.FenceCommand:
			return []string{fmt.Sprintf("Runs %q (no shell) on the console's host, at most %s; exit code 0 means fenced. Its output is kept (bounded) in this step's result.", f.Command, time.Duration(f.CommandTimeoutMs)*time.Millisecond),
				"The console cannot undo a command's fence: undo it the same way if you roll back."}
		default:
			return []string{"The console changes nothing here: stop every producer writing to " + on + " on the primary, then type the flow name.",
				"verify-fence then checks that nothing is written any more."}
		}
	case KindVerifyFence:
		return []string{fmt.Sprintf("Reads the primary's log end and last stable offset of every partition of %s every %s for %s: an end that moves, an open transaction or an end that cannot be read fails the step (then roll back, or stop the writer and run it again).", on, pollEvery, quiet(r.Plan))}
	case KindWaitCaughtUp:
		line := fmt.Sprintf("Reads the monitor's figures every %s, at most %s: MirrorMaker 2's replicated position (committed data only) must reach every fenced end, in figures read after verify-fence.", pollEvery, time.Duration(f.CatchUpTimeoutMs)*time.Millisecond)
		s := b.Monitor.Snapshot(r.Flow)
		if s != nil && s.TotalLagMessages != nil {
			line += fmt.Sprintf(" Now: %d record(s) behind in all.", *s.TotalLagMessages)
		}
		return []string{line}
	case KindUnfenceDR:
		line := "DeleteACLs on DR: the DENY WRITE entries (literal, any host) of " + strings.Join(f.Principals, ", ") + " on DR's copies of the mirrored topics; none there: nothing to remove."
		topics, err := b.drTopics(r.Flow)
		if err != nil {
			return []string{line, "Now: " + err.Error()}
		}
		_, dr := b.Monitor.Clients(r.Flow)
		there, err := kafka.DenyWriteACLs(ctx, dr, topics, f.Principals)
		switch {
		case errors.Is(err, kafka.ErrNoAuthorizer):
			return []string{line, "Now: DR runs no authorizer: nothing to remove"}
		case err != nil:
			return []string{line, "Now: unknown: " + err.Error()}
		case len(there) == 0:
			return []string{line, "Now: none on " + strings.Join(topics, ", ")}
		}
		return []string{line, "Now: " + aclList(there)}
	case KindVerdict:
		return []string{"Reads the primary's log ends again and states: RPO 0, verified: DR held every record up to the fence; or exactly which partitions and records were not. Changes nothing."}
	}
	return nil
}

// verdict states what the switchover lost: nothing, verified (DR held
// every record up to the fenced ends and the primary's ends are still
// those), or what was not, partition by partition.
func (b book) verdict(ctx context.Context, r *runbook.Run) (any, error) {
	var notv []string
	ends, _, err := fencedEnds(r)
	if err != nil {
		return verdictOf{Verdict: "NOT verified: " + err.Error()}, nil
	}
	var cu caughtUp
	switch err := resultOf(r, KindWaitCaughtUp, &cu); {
	case err != nil:
		notv = append(notv, err.Error())
	case !cu.CaughtUp:
		notv = append(notv, cu.Behind...)
	}
	var fr fenced
	if err := resultOf(r, KindFence, &fr); err != nil {
		notv = append(notv, err.Error())
	} else if now, _, err := b.primaryEnds(ctx, r.Flow, fr.Topics); err != nil {
		notv = append(notv, "the primary's ends now are unknown ("+err.Error()+"): records written after the fence, if any, are not known to be in DR")
	} else {
		for _, tp := range sortedTPs(ends) {
			switch n, ok := now[tp]; {
			case !ok:
				notv = append(notv, mm2.TPKey(tp)+": the primary's end now is unknown")
			case n > ends[tp]:
				notv = append(notv, fmt.Sprintf("%s: %d record(s) written on the primary after the fence (offsets %d to %d) are not known to be in DR", mm2.TPKey(tp), n-ends[tp], ends[tp], n-1))
			case n < ends[tp]:
				notv = append(notv, fmt.Sprintf("%s: the primary's end went back from %d to %d (log truncated or topic recreated)", mm2.TPKey(tp), ends[tp], n))
			}
		}
	}
	v := verdictOf{Partitions: len(ends), NotVerified: notv}
	if len(notv) == 0 {
		v.Verified = true
		v.Verdict = fmt.Sprintf("RPO 0, verified: DR held every record up to the fence (%d partition(s))", len(ends))
	} else {
		v.Verdict = "NOT verified: " + strings.Join(notv, "; ")
	}
	return v, nil
}
