package failover

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/clusterlink"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/internal/effect"
)

// linkAPI returns the flow's Cluster Linking client (with the flow's TLS
// settings, as monitoring uses).
func (rb Book) linkAPI(flow *config.Flow) (*clusterlink.Client, error) {
	return clusterlink.ForFlow(flow)
}

// FlowMirrors lists the flow's mirror topics (those its topic filter takes)
// that are not stopped yet.
func (rb Book) FlowMirrors(ctx context.Context, flow *config.Flow) ([]clusterlink.MirrorTopic, error) {
	api, err := rb.linkAPI(flow)
	if err != nil {
		return nil, err
	}
	all, err := api.Mirrors(ctx)
	if err != nil {
		return nil, err
	}
	var out []clusterlink.MirrorTopic
	for _, m := range all {
		if flow.Topics.Matches(m.SourceTopicName) {
			out = append(out, m)
		}
	}
	return out, nil
}

func mirrorNames(ms []clusterlink.MirrorTopic, skipStopped bool) []string {
	var out []string
	for _, m := range ms {
		if skipStopped && m.Stopped() {
			continue // promoted by an earlier attempt: idempotent
		}
		out = append(out, m.MirrorTopicName)
	}
	return out
}

// atRisk sums the lag of mirrors: the records a failover would lose.
func atRisk(ms []clusterlink.MirrorTopic) (total int64, per []string) {
	for _, m := range ms {
		if lag := m.TotalLag(); lag > 0 {
			total += lag
			per = append(per, fmt.Sprintf("%s: %d", m.MirrorTopicName, lag))
		}
	}
	return total, per
}

// alterMirrors promotes (planned) or fails over the flow's mirrors, then waits until
// every one is STOPPED (through PENDING_STOPPED). Mirrors already stopped by
// mirrorsAltered is promote-mirrors' and failover-mirrors' result: the
// mirrors sent, what was at risk then, and their states once read (a
// pointer: present, even empty, only once read). Its fields are in the
// order the map it replaced was written, so the stored bytes are the
// same; V is the shape's version (absent: the first).
type mirrorsAltered struct {
	LagPerMirror  []string           `json:"lag_per_mirror"`
	Mirrors       []string           `json:"mirrors"`
	RecordsAtRisk int64              `json:"records_at_risk"`
	States        *map[string]string `json:"states,omitempty"`
	V             int                `json:"v,omitempty"`
}

// an earlier attempt are skipped, so the step can run again after a crash.
func (rb Book) alterMirrors(ctx context.Context, w audit.Written, flowName string, planned bool) (*mirrorsAltered, error) {
	flow := rb.Config.Flow(flowName)
	api, err := rb.linkAPI(flow)
	if err != nil {
		return nil, err
	}
	ms, err := rb.FlowMirrors(ctx, flow)
	if err != nil {
		return nil, err
	}
	names := mirrorNames(ms, true)
	lost, per := atRisk(ms)
	result := &mirrorsAltered{Mirrors: names, RecordsAtRisk: lost, LagPerMirror: per}
	if len(names) > 0 {
		if planned {
			_, err = effect.Promote(ctx, w, api, names)
		} else {
			_, err = effect.Failover(ctx, w, api, names)
		}
		if err != nil {
			return result, err // a partial failure is a failure: each topic's error is in it
		}
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		ms, err := rb.FlowMirrors(wctx, flow)
		if err != nil {
			return result, err
		}
		states := map[string]string{}
		stopped := true
		for _, m := range ms {
			states[m.MirrorTopicName] = string(m.MirrorStatus)
			stopped = stopped && m.Stopped()
		}
		result.States = &states
		if stopped {
			return result, nil
		}
		select {
		case <-wctx.Done():
			return result, fmt.Errorf("mirrors not STOPPED within 2 minutes: %v", states)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// linkRules guard promote (planned) and failover.
func (rb Book) linkRules(ctx context.Context, flow *config.Flow, planned bool) []runbook.RuleResult {
	ms, err := rb.FlowMirrors(ctx, flow)
	if err != nil {
		return []runbook.RuleResult{{Name: "cluster link REST API answers", Evidence: err.Error()}}
	}
	rules := []runbook.RuleResult{{Name: "cluster link REST API answers", OK: true, Evidence: fmt.Sprintf("%d mirror topic(s)", len(ms))}}
	lost, per := atRisk(ms)
	if planned {
		var notReady []string
		for _, m := range ms {
			if !m.Stopped() && !m.Ready() {
				notReady = append(notReady, fmt.Sprintf("%s %s lag %d", m.MirrorTopicName, m.MirrorStatus, m.TotalLag()))
			}
		}
		r := runbook.RuleResult{Name: "every mirror ACTIVE with zero lag (a planned promote loses nothing)", OK: len(notReady) == 0,
			Evidence: "all caught up"}
		if len(notReady) > 0 {
			r.Evidence = strings.Join(notReady, "; ") + ": use failover instead if the source is gone"
		}
		rules = append(rules, r)
	} else {
		ev := "no lag: nothing would be lost"
		if lost > 0 {
			ev = fmt.Sprintf("%d record(s) not yet mirrored will be lost (%s)", lost, strings.Join(per, ", "))
		}
		rules = append(rules, runbook.RuleResult{Name: "data at risk stated", OK: true, Evidence: ev})
	}
	return rules
}

// restoreNote says how a Flink job follows the mirrors: offsets are kept,
// so its savepoint restores unchanged, unless the link renames topics (a
// prefix), when the job must read the new names.
func restoreNote(ms []clusterlink.MirrorTopic) string {
	var renamed []string
	for _, m := range ms {
		if m.MirrorTopicName != m.SourceTopicName {
			renamed = append(renamed, m.SourceTopicName+" → "+m.MirrorTopicName)
		}
	}
	if len(renamed) == 0 {
		return "Offsets are identical on both sides and topic names are the same: no translation; the Flink savepoint restores unchanged."
	}
	return fmt.Sprintf("Offsets are identical on both sides, but the link renames %d topic(s) (%s): a Flink job restoring its savepoint must read the new names; "+
		"the KafkaSource state is keyed by topic name, so restore with a new source uid, the savepoint's offsets under the new names "+
		"(drconsole savepoint inspect --json, renamed) and allowNonRestoredState.", len(renamed), strings.Join(renamed, ", "))
}

// previewLink dry-runs promote (planned) or failover with validate_only=true.
func (rb Book) previewLink(ctx context.Context, flow *config.Flow, planned bool) ([]string, error) {
	ms, err := rb.FlowMirrors(ctx, flow)
	if err != nil {
		return nil, err
	}
	names := mirrorNames(ms, true)
	lost, _ := atRisk(ms)
	action := effect.ActionFailover
	if planned {
		action = effect.ActionPromote
	}
	lines := []string{fmt.Sprintf("POST %s/v3/clusters/%s/links/%s/mirrors:%s for %d mirror topic(s), then wait until each is STOPPED",
		flow.ClusterLink.RestURL, flow.ClusterLink.ClusterID, flow.ClusterLink.Link, action, len(names))}
	for _, m := range ms {
		lines = append(lines, fmt.Sprintf("%s (from %s): %s, lag %d → writable topic", m.MirrorTopicName, m.SourceTopicName, m.MirrorStatus, m.TotalLag()))
	}
	if !planned {
		lines = append(lines, fmt.Sprintf("Records at risk: %d (not yet mirrored; lost if the source never comes back).", lost))
	}
	lines = append(lines, restoreNote(ms))
	if len(names) == 0 {
		return append(lines, "Every mirror is stopped already: nothing to do."), nil
	}
	api, err := rb.linkAPI(flow)
	if err != nil {
		return nil, err
	}
	if _, err = effect.Validate(ctx, api, action, names); err != nil {
		return append(lines, "Dry run (validate_only) refused: "+err.Error()), nil
	}
	return append(lines, "Dry run (validate_only) accepted by the cluster."), nil
}

// refusalsTimeout bounds how long Create waits for the link's answer.
const refusalsTimeout = 5 * time.Second

// refusals: a planned promote is refused when it is planned while a mirror
// lags or is not ACTIVE (its rule has no override: the unplanned failover,
// which states and accepts the loss, is the way then), and while the link's
// REST API does not answer (the rule cannot be judged: fail closed). The
// same rules are checked again when the step starts.
func (rb Book) refusals(ctx context.Context, p runbook.Plan) []error {
	var errs []error
	for i, s := range p.Steps {
		if m, ok := step(s.Kind).(mirrorsStep); !ok || !m.planned {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, refusalsTimeout)
		rules := rb.linkRules(cctx, rb.Config.Flow(p.Flow), true)
		cancel()
		for _, r := range rules {
			if !r.OK && !r.Overridable {
				errs = append(errs, &runbook.StepRefusal{Step: i, Kind: s.Kind, Rule: r})
			}
		}
	}
	return errs
}
