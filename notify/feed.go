package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// runEvents maps the audit actions about a run to the events they
// announce. The plan record names the flow, not the run (it has no id
// when the record is written); the run is the next one created, since
// both are written in one transaction by the only writer.
var runEvents = map[audit.Action]string{
	audit.FailoverPlan:       config.EventRunRequested,
	audit.FailoverApprove:    config.EventRunApproved,
	audit.FailoverReject:     config.EventRunRejected,
	audit.FailoverCancel:     config.EventRunCancelled,
	audit.FailoverStepFailed: config.EventStepFailed,
	audit.FailoverCompleted:  config.EventRunCompleted,
}

// detailKeys are the audit details worth carrying into a notification
// (the evidence blobs are not).
var detailKeys = []string{"reason", "comment", "step", "kind", "error"}

const (
	auditKey = "audit" // the last audit record read
	runKey   = "run"   // the last run announced as requested
)

// feed turns new audit records and flow status changes into outbox
// events every Poll until ctx ends. A failed round is retried whole: the
// outbox and the feeder's state move together or not at all.
func (n *Notifier) feed(ctx context.Context) {
	for {
		added, err := n.feedOnce(ctx)
		if err != nil && ctx.Err() == nil {
			n.Log.Warn("notifications: feeding the outbox failed; retrying", "err", err)
		}
		if added {
			for _, w := range n.wake {
				select {
				case w <- struct{}{}:
				default:
				}
			}
		}
		if !sleep(ctx, n.Poll, nil) {
			return
		}
	}
}

func (n *Notifier) feedOnce(ctx context.Context) (bool, error) {
	var events []storage.NotifyEvent
	state := map[string]string{}
	for _, source := range []func(context.Context) ([]storage.NotifyEvent, map[string]string, error){n.auditEvents, n.flowEvents} {
		evs, st, err := source(ctx)
		if err != nil {
			return false, err
		}
		events = append(events, evs...)
		for k, v := range st {
			state[k] = v
		}
	}
	if len(events) == 0 && len(state) == 0 {
		return false, nil
	}

	return len(events) > 0, n.Store.EnqueueNotifications(ctx, events, state)
}

// position reads a feeder position; on the very first start it is the
// current one (start() of it): history from before notifications were
// configured is not announced.
func (n *Notifier) position(ctx context.Context, key string, start func(context.Context) (int64, error)) (pos int64, first bool, err error) {
	v, ok, err := n.Store.NotifyState(ctx, key)
	if err != nil {
		return 0, false, err
	}
	if !ok {
		pos, err := start(ctx)
		return pos, true, err
	}
	pos, err = strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("notifications: %s position %q: %w", key, v, err)
	}
	return pos, false, nil
}

// auditEvents announces the run changes recorded after the last audit
// record read, in the order they were recorded.
func (n *Notifier) auditEvents(ctx context.Context) ([]storage.NotifyEvent, map[string]string, error) {
	after, first, err := n.position(ctx, auditKey, func(ctx context.Context) (int64, error) {
		head, _, err := n.Store.AuditHead(ctx)
		return head, err
	})
	if err != nil {
		return nil, nil, err
	}
	runPos, runFirst, err := n.position(ctx, runKey, func(ctx context.Context) (int64, error) {
		runs, err := n.Store.FailoverRuns(ctx, 1)
		if err != nil || len(runs) == 0 {
			return 0, err
		}
		return runs[0].ID, nil
	})
	if err != nil || first || runFirst {
		return nil, map[string]string{auditKey: strconv.FormatInt(after, 10), runKey: strconv.FormatInt(runPos, 10)}, err
	}
	entries, err := n.Store.AuditEntries(ctx, storage.AuditFilter{Oldest: true, AfterID: int(after), Limit: 500})
	if err != nil || len(entries) == 0 {
		return nil, nil, err
	}
	var out []storage.NotifyEvent
	for _, e := range entries {
		kind, ok := runEvents[audit.Action(e.Action)]
		if !ok {
			continue
		}
		if kind == config.EventRunRequested {
			runs, err := n.Store.FailoverRunsAfter(ctx, runPos, 1)
			if err != nil {
				return nil, nil, err
			}
			if len(runs) == 0 {
				n.Log.Warn("notifications: a plan record without its run", "audit_record", e.ID)
				continue
			}
			ev, err := n.requested(ctx, runs[0])
			if err != nil {
				return nil, nil, err
			}
			runPos = runs[0].ID
			out = append(out, n.stored(ev, "run:"+strconv.FormatInt(runPos, 10)))
			continue
		}
		out = append(out, n.stored(n.runEvent(ctx, kind, e), "audit:"+strconv.FormatInt(e.ID, 10)))
	}
	return out, map[string]string{auditKey: strconv.FormatInt(entries[len(entries)-1].ID, 10), runKey: strconv.FormatInt(runPos, 10)}, nil
}

// runNoun names what a run is in an announcement: a DR drill must never
// read as a failover (people act on those at once), a failback says so,
// and a plan that cannot be read is announced as a failover, the one that
// needs looking at.
func runNoun(r *model.Run) (noun string, drill bool) {
	var p struct {
		Drill    bool `json:"drill"`
		Failback bool `json:"failback"`
	}
	if r == nil || json.Unmarshal([]byte(r.PlanJSON), &p) != nil {
		return "failover run", false
	}
	switch {
	case p.Drill:
		return "DR drill run", true
	case p.Failback:
		return "failback run", false
	}
	return "failover run", false
}

// requested is the announcement of a new run, naming who could approve
// it: the enabled operators and admins other than the requester.
func (n *Notifier) requested(ctx context.Context, r model.Run) (Event, error) {
	ev := Event{Kind: config.EventRunRequested, At: msTime(r.CreatedMs), Flow: r.Flow, RunID: r.ID, Actor: r.CreatedBy,
		URL: n.link("/failover/" + strconv.FormatInt(r.ID, 10)), Details: map[string]any{"reason": r.Reason}}
	noun, drill := runNoun(&r)
	if drill {
		ev.Details["drill"] = true
	}
	users, err := n.Store.Users(ctx)
	if err != nil {
		return ev, err
	}
	for _, u := range users {
		if !u.Disabled && u.Role.AtLeast(model.RoleOperator) && u.Name != r.CreatedBy {
			ev.CanApprove = append(ev.CanApprove, u.Name)
		}
	}
	// The reason is the requester's own text: it travels in details, never
	// inside a sentence the console writes (see slack.go).
	ev.Summary = fmt.Sprintf("%s requested %s %d of %s: it waits for approval", r.CreatedBy, noun, r.ID, r.Flow)
	return ev, nil
}

func (n *Notifier) runEvent(ctx context.Context, kind string, e model.AuditEntry) Event {
	id, _ := strconv.ParseInt(strings.TrimPrefix(e.Subject, "failover-run:"), 10, 64)
	ev := Event{Kind: kind, At: msTime(e.AtMs), RunID: id, Actor: e.Actor, URL: n.link("/failover/" + strconv.FormatInt(id, 10))}
	var details map[string]any
	_ = json.Unmarshal(e.Details, &details) // absent or odd details only lose context
	for _, k := range detailKeys {
		if v, ok := details[k]; ok {
			if ev.Details == nil {
				ev.Details = map[string]any{}
			}
			ev.Details[k] = v
		}
	}
	noun := "failover run"
	if r, err := n.Store.FailoverRun(ctx, id); err == nil && r != nil {
		ev.Flow = r.Flow
		var drill bool
		if noun, drill = runNoun(r); drill {
			if ev.Details == nil {
				ev.Details = map[string]any{}
			}
			ev.Details["drill"] = true
		}
	}
	switch kind {
	case config.EventRunApproved:
		ev.Summary = fmt.Sprintf("%s approved %s %d of %s", e.Actor, noun, id, ev.Flow)
	case config.EventRunRejected:
		ev.Summary = fmt.Sprintf("%s rejected %s %d of %s", e.Actor, noun, id, ev.Flow)
	case config.EventRunCancelled:
		ev.Summary = fmt.Sprintf("%s cancelled %s %d of %s", e.Actor, noun, id, ev.Flow)
	case config.EventStepFailed:
		ev.Summary = fmt.Sprintf("A step of %s %d of %s failed (run by %s); the run waits for an operator", noun, id, ev.Flow, e.Actor)
	case config.EventRunCompleted:
		ev.Summary = fmt.Sprintf("%s %d of %s completed", strings.ToUpper(noun[:1])+noun[1:], id, ev.Flow)
	}
	return ev
}

// flowEvents compares each flow's status and loss incidents with what was
// last told. CRITICAL and BROKEN are announced once when entered, the
// recovery when the flow is OK again; WARNING and UNKNOWN change nothing
// told. New loss incidents are announced as they are recorded.
func (n *Notifier) flowEvents(ctx context.Context) ([]storage.NotifyEvent, map[string]string, error) {
	var out []storage.NotifyEvent
	state := map[string]string{}
	if n.Flows == nil || !n.Flows.Ready() {
		return nil, state, nil
	}
	watched := map[string]bool{}
	for _, s := range n.Flows.Snapshots() {
		key := "flow:" + s.Flow.Name
		watched[key] = true
		told, _, err := n.Store.NotifyState(ctx, key)
		if err != nil {
			return nil, nil, err
		}
		var kind string
		switch {
		case s.FailedOver != nil && (told == string(model.FlowStatusCritical) || told == string(model.FlowStatusBroken)):
			kind = config.EventFlowOK // resolved: failedOverEvent says why
		case s.Status == model.FlowStatusCritical && told != string(model.FlowStatusCritical):
			kind = config.EventFlowCritical
		case s.Status == model.FlowStatusBroken && told != string(model.FlowStatusBroken):
			kind = config.EventFlowBroken
		case s.Status == model.FlowStatusOK && (told == string(model.FlowStatusCritical) || told == string(model.FlowStatusBroken)):
			kind = config.EventFlowOK
		}
		if kind != "" {
			ev := n.flowEvent(kind, s)
			if s.FailedOver != nil {
				ev = n.failedOverEvent(s, told)
			}
			out = append(out, n.stored(ev, fmt.Sprintf("%s:%s:%d", key, kind, ev.At.UnixMilli())))
			state[key] = string(s.Status)
		}

		lossKey := "loss:" + s.Flow.Name
		v, seen, err := n.Store.NotifyState(ctx, lossKey)
		if err != nil {
			return nil, nil, err
		}
		before, _ := strconv.ParseInt(v, 10, 64)
		// First look: announce only losses nobody acknowledged yet.
		if (seen && s.LossIncidentsTotal > before) || (!seen && s.DataLost > 0) {
			ev := n.flowEvent(config.EventFlowDataLoss, s)
			ev.Details["incidents_total"], ev.Details["unacknowledged_partitions"], ev.Details["lost_offsets_total"] = s.LossIncidentsTotal, s.DataLost, s.LostOffsetsTotal
			out = append(out, n.stored(ev, fmt.Sprintf("%s:%d", lossKey, s.LossIncidentsTotal)))
		}
		if !seen || s.LossIncidentsTotal != before {
			state[lossKey] = strconv.FormatInt(s.LossIncidentsTotal, 10)
		}
	}
	// A flow announced CRITICAL or BROKEN that is no longer watched (a
	// failback's reverse flow once stopped, a flow taken out of the
	// config) would hold its alert open for ever: close it, saying why.
	told, err := n.Store.NotifyStatesWithPrefix(ctx, "flow:")
	if err != nil {
		return nil, nil, err
	}
	if n.missingSince == nil {
		n.missingSince = map[string]time.Time{}
	}
	now := n.Now()
	for _, key := range slices.Sorted(maps.Keys(told)) {
		was := told[key]
		if watched[key] || (was != string(model.FlowStatusCritical) && was != string(model.FlowStatusBroken)) {
			delete(n.missingSince, key)
			continue
		}
		if first, ok := n.missingSince[key]; !ok {
			n.missingSince[key] = now
			continue
		} else if now.Sub(first) < n.UnwatchedAfter {
			continue
		}
		delete(n.missingSince, key)
		name := strings.TrimPrefix(key, "flow:")
		ev := Event{Kind: config.EventFlowOK, At: n.Now().UTC(), Flow: name,
			Summary: fmt.Sprintf("Flow %s has not been watched for %s (a failback's reverse flow that was stopped, or a flow taken out of the configuration; if neither, see the console's log): its %s alert is closed", name, n.UnwatchedAfter, was),
			Details: map[string]any{"status": unwatched, "was": was}}
		out = append(out, n.stored(ev, fmt.Sprintf("%s:%s:%d", key, unwatched, ev.At.UnixMilli())))
		state[key] = unwatched
	}
	return out, state, nil
}

// failedOverEvent closes the CRITICAL or BROKEN alert (was) of a flow
// whose failover completed: the old direction is stopped on purpose, and
// what its primary took after the cut is no data at risk. A completed
// failback returns the flow to normal watching, and its alerts with it.
func (n *Notifier) failedOverEvent(s *flowstate.FlowSnapshot, was string) Event {
	f := s.FailedOver
	ev := Event{Kind: config.EventFlowOK, At: n.Now().UTC(), Flow: s.Flow.Name, URL: n.link("/failover/" + strconv.FormatInt(f.Run, 10))}
	reason := fmt.Sprintf("failed over by run %d", f.Run)
	ev.Summary = fmt.Sprintf("Flow %s: its %s alert is resolved, %s at %s: DR is active, and the old direction's lag is no longer data at risk",
		s.Flow.Name, was, reason, time.UnixMilli(f.SinceMs).UTC().Format(time.RFC3339))
	ev.Details = map[string]any{"status": string(model.FlowStatusFailedOver), "was": was, "reason": reason, "run": f.Run,
		"failed_over_at": time.UnixMilli(f.SinceMs).UTC()}
	return ev
}

// unwatched is the told state of a flow the console no longer watches.
const unwatched = "unwatched"

func (n *Notifier) flowEvent(kind string, s *flowstate.FlowSnapshot) Event {
	ev := Event{Kind: kind, At: n.Now().UTC(), Flow: s.Flow.Name, URL: n.link("/flows/" + url.PathEscape(s.Flow.Name))}
	rpo := "unknown"
	if s.RPOMs != nil {
		rpo = fmt.Sprintf("%.0f s", float64(*s.RPOMs)/1000)
		// A lower bound says so: partitions of unknown lag, or figures
		// resting on a read of a cluster that no longer answers.
		if s.Unknown > 0 || s.RPOAtLeast || s.Bound != "" {
			rpo = "at least " + rpo
		}
	}
	switch kind {
	case config.EventFlowCritical:
		ev.Summary = fmt.Sprintf("Flow %s is CRITICAL: data at risk (RPO) %s", s.Flow.Name, rpo)
	case config.EventFlowBroken:
		ev.Summary = fmt.Sprintf("Flow %s is BROKEN: replication stopped or cannot be seen (RPO %s)", s.Flow.Name, rpo)
	case config.EventFlowOK:
		ev.Summary = fmt.Sprintf("Flow %s is OK again (RPO %s)", s.Flow.Name, rpo)
	case config.EventFlowDataLoss:
		ev.Summary = fmt.Sprintf("Flow %s: source records were deleted before MirrorMaker 2 copied them (%d partition(s) unacknowledged)", s.Flow.Name, s.DataLost)
	}
	ev.Details = map[string]any{"status": string(s.Status), "rpo": rpo}
	return ev
}

// stored wraps an event for the outbox, addressed to the receivers that
// want its kind.
func (n *Notifier) stored(ev Event, sourceKey string) storage.NotifyEvent {
	body, _ := json.Marshal(ev) // plain data: cannot fail
	se := storage.NotifyEvent{Kind: ev.Kind, SourceKey: sourceKey, Payload: body, CreatedMs: ev.At.UnixMilli()}
	for _, r := range n.Receivers {
		if r.Wants(ev.Kind) {
			se.Receivers = append(se.Receivers, r.Name)
		}
	}
	return se
}
