package failback

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/clusterlink"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/runbook/internal/effect"
)

// The failback of a Cluster Linking flow, after a failover or promote made
// DR's mirror topics writable. It needs a bidirectional link (the same
// name on both ends) and the primary cluster's REST API
// (cluster_link.primary), since both actions go to the primary, in
// exactly this order:
//
//	truncate-and-restore-primary, wait-primary-caught-up, stop-writers,
//	reverse-to-primary
//
// truncate-and-restore on the primary truncates its topics to the log ends
// of DR's stopped mirrors, deleting the records that never reached DR, and
// makes them mirrors of DR's topics, so what DR took since comes back.
// Once they caught up and nothing writes to DR, reverse-and-start-mirror
// (or reverse-and-pause-mirror) on the primary makes its topics writable
// again and DR's topics mirrors of them. Offsets are the same on both
// ends throughout, so no group is translated and a Flink savepoint taken
// in DR restores unchanged on the primary. A link that renames topics (a
// prefix) is refused: which primary topic mirrors which DR topic would be
// the console's guess.

const (
	// KindRestorePrimary sends truncate-and-restore to the primary.
	KindRestorePrimary runbook.StepKind = "truncate-and-restore-primary"
	// KindWaitPrimary waits until the primary's mirrors run with zero lag.
	KindWaitPrimary runbook.StepKind = "wait-primary-caught-up"
	// KindReverseToPrimary sends reverse-and-start-mirror (or, with
	// PauseMirrors, reverse-and-pause-mirror) to the primary.
	KindReverseToPrimary runbook.StepKind = "reverse-to-primary"
)

// LinkFailbackPlan is the failback plan of Cluster Linking flow flow;
// pauseMirrors leaves DR's mirrors paused after the reverse.
func LinkFailbackPlan(flow string, pauseMirrors bool) runbook.Plan {
	return runbook.Plan{Flow: flow, Kind: runbook.PlanFailback, Steps: []runbook.Step{{Kind: KindRestorePrimary}, {Kind: KindWaitPrimary},
		{Kind: KindStopWriters}, {Kind: KindReverseToPrimary, PauseMirrors: pauseMirrors}}}
}

// linkFailbackProblems says what makes p unfit as flow's failback.
func linkFailbackProblems(flow *config.Flow, p runbook.Plan) []string {
	var out []string
	if flow.ClusterLink == nil || flow.ClusterLink.Primary == nil {
		out = append(out, "a Cluster Linking failback is sent to the primary cluster's REST API: set cluster_link.primary (rest_url, cluster_id, credentials) for a bidirectional link named "+failover.LinkName(flow)+" on both ends")
	}
	want := LinkFailbackPlan(p.Flow, false)
	if !slices.Equal(kindsOf(p), kindsOf(want)) {
		out = append(out, fmt.Sprintf("the steps of a Cluster Linking failback must be exactly %v, in that order (groups and Flink jobs need no translation: offsets are the same on both ends)", kindsOf(want)))
	}
	for _, s := range p.Steps {
		if s.PauseMirrors && !failover.Is(s.Kind, failover.LeavesMirrorsPaused) {
			out = append(out, "only reverse-to-primary leaves mirrors paused")
		}
	}
	return out
}

func linkFailbackTitle(s runbook.Step, flow *config.Flow) string {
	primary := "?"
	if flow != nil && flow.ClusterLink != nil && flow.ClusterLink.Primary != nil {
		primary = flow.ClusterLink.Primary.RestURL
	}
	if k, ok := linkBackSteps[s.Kind]; ok {
		return k.title(s, flow, primary)
	}
	return ""
}

// linkBack is one topic of the flow as a failback sees it: DR's mirror
// (Mirror, when DR lists it) and the primary's (Back, when the primary
// lists it).
type linkBack struct {
	Primary, DR  string
	Mirror, Back *clusterlink.MirrorTopic
}

// linkBackTopics reads the flow's mirrors on DR and on the primary. The
// topics a failback moves are the ones truncate-and-restore-primary
// recorded, once it is done. Before that, DR's mirrors that the flow's
// topic filter takes; or, when DR lists none, the primary's (an earlier
// attempt restored them, and a cluster may stop listing a stopped mirror
// once the other end restored from it). A link that renames topics is
// refused.
func (rb Book) linkBackTopics(ctx context.Context, flow *config.Flow, r *runbook.Run) ([]linkBack, *clusterlink.Client, error) {
	primary, err := clusterlink.ForPrimary(flow)
	if err != nil {
		return nil, nil, err
	}
	drs, err := rb.FlowMirrors(ctx, flow)
	if err != nil {
		return nil, nil, fmt.Errorf("DR's REST API: %w", err)
	}
	all, err := primary.Mirrors(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("the primary's REST API: %w", err)
	}
	var backs []clusterlink.MirrorTopic
	for _, m := range all {
		if flow.Topics.Matches(m.MirrorTopicName) {
			backs = append(backs, m)
		}
	}
	var renamed []string
	for _, m := range append(slices.Clone(drs), backs...) {
		if m.MirrorTopicName != m.SourceTopicName {
			renamed = append(renamed, m.SourceTopicName+" → "+m.MirrorTopicName)
		}
	}
	if len(renamed) > 0 {
		return nil, nil, fmt.Errorf("the link renames topics (%s): a failback through a prefixed link is not built; which primary topic mirrors which DR topic would be a guess", strings.Join(renamed, ", "))
	}
	var done primaryRestored
	var names []string
	if r != nil && stepResult(r, KindRestorePrimary, &done) == nil && done.V == 0 {
		names = done.Topics
	}
	for _, from := range [][]clusterlink.MirrorTopic{drs, backs} {
		if len(names) > 0 {
			break
		}
		for _, m := range from {
			names = append(names, m.SourceTopicName)
		}
	}
	if len(names) == 0 {
		return nil, nil, fmt.Errorf("neither DR nor the primary lists a mirror topic of link %s that the flow's topic filter takes", failover.LinkName(flow))
	}
	find := func(ms []clusterlink.MirrorTopic, name string) *clusterlink.MirrorTopic {
		if i := slices.IndexFunc(ms, func(m clusterlink.MirrorTopic) bool { return m.MirrorTopicName == name }); i >= 0 {
			return &ms[i]
		}
		return nil
	}
	out := make([]linkBack, 0, len(names))
	for _, n := range names {
		out = append(out, linkBack{Primary: n, DR: n, Mirror: find(drs, n), Back: find(backs, n)})
	}
	return out, primary, nil
}

func primaryNames(ts []linkBack) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Primary
	}
	return out
}

// isRestored: the primary mirrors t from DR (truncate-and-restore done).
func (t linkBack) isRestored() bool { return t.Back != nil && !t.Back.Stopped() }

// isReversed: the primary no longer mirrors t and DR mirrors it again
// (the reverse done).
func (t linkBack) isReversed() bool {
	return t.Back == nil && t.Mirror != nil && !t.Mirror.Stopped() && t.Mirror.MirrorStatus != clusterlink.MirrorPendingStopped
}

// pending are the topics of ts not yet done: an action goes only to them,
// so an attempt that got through part of its topics is finished, not
// repeated.
func pending(ts []linkBack, done func(linkBack) bool) []linkBack {
	var out []linkBack
	for _, t := range ts {
		if !done(t) {
			out = append(out, t)
		}
	}
	return out
}

// truncationOf says what a truncate-and-restore deletes, from its answer:
// per partition where and how many. A topic whose answer leaves a count
// out is unknown, and refuses the step: the console does not delete what
// it cannot count.
func truncationOf(res []clusterlink.MirrorActionResult) (total int64, lines []string, err error) {
	var unknown []string
	for _, r := range res {
		var sum int64
		bad := r.MessagesTruncated == nil || *r.MessagesTruncated < 0
		for _, p := range r.PartitionLevelTruncationData {
			bad = bad || p.MessagesTruncated < 0
			sum += p.MessagesTruncated
		}
		// The partitions must add up to the topic's count: the total is
		// taken from them, so one figure cannot hide another.
		if bad || sum != *r.MessagesTruncated {
			unknown = append(unknown, r.MirrorTopicName)
			continue
		}
		total += sum
		for _, p := range r.PartitionLevelTruncationData {
			if p.MessagesTruncated > 0 {
				lines = append(lines, fmt.Sprintf("%s-%d: %d record(s) from offset %d", r.MirrorTopicName, p.PartitionID, p.MessagesTruncated, p.OffsetTruncatedTo))
			}
		}
	}
	slices.Sort(lines)
	if len(unknown) > 0 {
		return total, lines, fmt.Errorf("the cluster did not say plainly how many records truncate-and-restore deletes from %s (a count missing or negative, or its partitions not adding up to it)", strings.Join(unknown, ", "))
	}
	return total, lines, nil
}

// dryRunRestore asks the primary, validate_only, what truncate-and-restore
// would delete.
func dryRunRestore(ctx context.Context, primary *clusterlink.Client, ts []linkBack) (total int64, lines []string, err error) {
	res, err := effect.Validate(ctx, primary, effect.ActionTruncateAndRestore, primaryNames(ts))
	if err != nil {
		return 0, nil, fmt.Errorf("dry run (validate_only) refused: %w", err)
	}
	return truncationOf(res)
}

func truncationText(total int64, lines []string) string {
	if total == 0 {
		return "nothing to delete: the primary holds no record beyond DR's copy"
	}
	return fmt.Sprintf("%d record(s) the primary holds beyond DR's copy will be deleted (%s)", total, strings.Join(lines, "; "))
}

// caughtUp says which of the primary's mirrors are not ACTIVE with zero lag.
func primaryBehind(ts []linkBack) []string {
	var behind []string
	for _, t := range ts {
		switch {
		case t.Back == nil:
			behind = append(behind, t.Primary+" (not a mirror on the primary, and not yet listed as one again by DR)")
		case !t.Back.Ready():
			behind = append(behind, fmt.Sprintf("%s %s lag %d", t.Primary, t.Back.MirrorStatus, t.Back.TotalLag()))
		}
	}
	return behind
}

// countedRule names the rule whose evidence is the count of what
// truncate-and-restore deletes, as the step-start record holds it.
const countedRule = "the cluster states what truncate-and-restore deletes on the primary (validate_only), per partition"

// linkFailbackRules are the rules of step idx of a Cluster Linking
// failback, after the active-side rule. Topics an earlier attempt got
// through are left out: only the rest are judged, and sent to.
func (rb Book) linkFailbackRules(ctx context.Context, r *runbook.Run, idx int) []runbook.RuleResult {
	flow := rb.Config.Flow(r.Flow)
	ts, primary, err := rb.linkBackTopics(ctx, flow, r)
	reads := runbook.RuleResult{Name: "DR's and the primary's REST APIs answer for link " + failover.LinkName(flow)}
	if err != nil {
		reads.Evidence = err.Error()
		return []runbook.RuleResult{reads}
	}
	reads.OK, reads.Evidence = true, fmt.Sprintf("%d topic(s): %s", len(ts), strings.Join(primaryNames(ts), ", "))
	rules := []runbook.RuleResult{reads}
	if k, ok := linkBackSteps[r.Plan.Steps[idx].Kind]; ok {
		return k.rules(ctx, ts, primary, rules)
	}
	return rules
}

// linkFailbackEffect performs step e of a Cluster Linking failback.
func linkFailbackEffect(ctx context.Context, e *runbook.Execution) (any, error) {
	flow := e.Runbook.Config.Flow(e.Run.Flow)
	retry := e.Idx < len(e.Run.Steps) && e.Run.Steps[e.Idx].Attempts > 0
	if k, ok := linkBackSteps[e.Step.Kind]; ok {
		return k.do(ctx, e.Started, e, flow, retry)
	}
	return nil, fmt.Errorf("step kind %q is not a Cluster Linking failback step", e.Step.Kind)
}

// defaultSettleWait bounds how long a retried step waits for what an
// earlier attempt sent to show before it sends to the topics still
// pending: a cluster may apply an action later than it answers (Connect
// was seen to).
const defaultSettleWait = 30 * time.Second

// settled reads the topics again until none is pending under done, or
// the settle wait passes: what an earlier attempt of the step sent may still
// be taking effect, and sending it again would apply it twice.
func (rb Book) settled(ctx context.Context, r *runbook.Run, flow *config.Flow, ts []linkBack, done func(linkBack) bool) ([]linkBack, error) {
	deadline := time.Now().Add(cmp.Or(rb.SettleWait, defaultSettleWait))
	for len(pending(ts, done)) > 0 && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
		next, _, err := rb.linkBackTopics(ctx, flow, r)
		if err != nil {
			return nil, err
		}
		ts = next
	}
	return ts, nil
}

// restorePrimary counts (validate_only) what truncate-and-restore deletes
// on the topics not restored yet and sends it to them, only if the count
// is the one the step-start record holds (counted): a primary that took
// writes since would lose records nobody approved. A retry first waits for
// an earlier attempt's restore to show.
func (rb Book) restorePrimary(ctx context.Context, w audit.Written, r *runbook.Run, flow *config.Flow, counted string, retry bool) (*primaryRestored, error) {
	ts, primary, err := rb.linkBackTopics(ctx, flow, r)
	if err == nil && retry {
		ts, err = rb.settled(ctx, r, flow, ts, linkBack.isRestored)
	}
	if err != nil {
		return nil, err
	}
	todo := pending(ts, linkBack.isRestored)
	res := &primaryRestored{Topics: primaryNames(ts), Primary: flow.ClusterLink.Primary.RestURL, SentTo: primaryNames(todo)}
	if len(todo) == 0 {
		res.Note = "the primary's topics are mirrors of DR's already (an earlier attempt restored them); what it deleted is in that attempt's step-start record (the rule counting it), written before it was sent"
		return res, nil
	}
	total, lines, err := dryRunRestore(ctx, primary, todo)
	if err != nil {
		return res, err
	}
	if now := truncationText(total, lines); counted == "" || now != counted {
		return res, fmt.Errorf("nothing sent: the count of what truncate-and-restore deletes is not the one on record when this step started (then: %s; now: %s); start the step again to put the new count on record", cmp.Or(counted, "none"), now)
	}
	out, err := effect.TruncateAndRestore(ctx, w, primary, primaryNames(todo))
	if err != nil {
		return res, err
	}
	total, lines, terr := truncationOf(out)
	res.Truncation = &Truncation{Truncated: total, TruncatedPartitions: lines}
	if terr != nil {
		// Done already; the record says what is not known.
		res.TruncatedUnknown = terr.Error()
	}
	return res, nil
}

// primaryRestored is restore-primary's result: the topics it restored on
// the primary and what truncate-and-restore deleted there; later steps
// read its topics back. Its fields are in the order the map it replaced
// was written, so the stored bytes are the same; V is the shape's version
// (absent: the first).
type primaryRestored struct {
	Note    string   `json:"note,omitempty"`
	Primary string   `json:"primary"`
	SentTo  []string `json:"sent_to"`
	Topics  []string `json:"topics"`
	*Truncation
	TruncatedUnknown string `json:"truncated_unknown,omitempty"`
	V                int    `json:"v,omitempty"`
}

// Truncation is what truncate-and-restore deleted, recorded once it was
// sent (exported: JSON decodes into an embedded pointer only of an
// exported type).
type Truncation struct {
	Truncated           int64    `json:"truncated"`
	TruncatedPartitions []string `json:"truncated_partitions"`
}

// wait-primary's results: the primary's mirrors caught up
// (primaryCaughtUp), or why they were not when it gave up
// (primaryBehindBy). Their fields are in the order the maps they replaced
// were written, so the stored bytes are the same; V is the shape's
// version (absent: the first).
type (
	primaryCaughtUp struct {
		CaughtUp bool     `json:"caught_up"`
		Topics   []string `json:"topics"`
		V        int      `json:"v,omitempty"`
	}
	primaryBehindBy struct {
		Behind string `json:"behind"`
		V      int    `json:"v,omitempty"`
	}
)

// waitPrimary polls the primary's mirrors every second until each runs
// with zero lag, at most rb.reverseCatchUp().
func (rb Book) waitPrimary(ctx context.Context, r *runbook.Run, flow *config.Flow, progress func(string)) (any, error) {
	timeout := rb.reverseCatchUp()
	deadline := time.Now().Add(timeout)
	for {
		ts, _, err := rb.linkBackTopics(ctx, flow, r)
		why := ""
		if err != nil {
			why = err.Error()
		} else if behind := primaryBehind(ts); len(behind) > 0 {
			why = strings.Join(behind, "; ")
		} else {
			return primaryCaughtUp{CaughtUp: true, Topics: primaryNames(ts)}, nil
		}
		if progress != nil {
			progress("the primary's mirrors not caught up: " + why)
		}
		if time.Now().After(deadline) {
			return primaryBehindBy{Behind: why}, fmt.Errorf("the primary's mirrors did not catch up within %s: %s", timeout, why)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// reversedToPrimary is reverse-to-primary's result: the topics it
// reversed and, once DR lists them as mirrors again, their states there.
// Its fields are in the order the map it replaced was written, so the
// stored bytes are the same (DRMirrors is a pointer: present, even empty,
// only once read); V is the shape's version (absent: the first).
type reversedToPrimary struct {
	DRMirrors *map[string]string `json:"dr_mirrors,omitempty"`
	Paused    bool               `json:"paused"`
	Primary   string             `json:"primary"`
	SentTo    []string           `json:"sent_to"`
	Topics    []string           `json:"topics"`
	V         int                `json:"v,omitempty"`
}

// reverseToPrimary reverses the primary's mirrors not reversed yet, then
// waits until DR lists every topic as its mirror again and the primary
// lists none. A retry first waits for an earlier attempt's reverse to show.
func (rb Book) reverseToPrimary(ctx context.Context, w audit.Written, r *runbook.Run, flow *config.Flow, pause, retry bool) (*reversedToPrimary, error) {
	ts, primary, err := rb.linkBackTopics(ctx, flow, r)
	if err == nil && retry {
		ts, err = rb.settled(ctx, r, flow, ts, linkBack.isReversed)
	}
	if err != nil {
		return nil, err
	}
	todo := pending(ts, linkBack.isReversed)
	res := &reversedToPrimary{Topics: primaryNames(ts), Primary: flow.ClusterLink.Primary.RestURL, Paused: pause, SentTo: primaryNames(todo)}
	if len(todo) > 0 {
		if behind := primaryBehind(todo); len(behind) > 0 {
			return res, fmt.Errorf("the primary's mirrors are not caught up: %s", strings.Join(behind, "; "))
		}
		if pause {
			_, err = effect.ReverseAndPause(ctx, w, primary, primaryNames(todo))
		} else {
			_, err = effect.ReverseAndStart(ctx, w, primary, primaryNames(todo))
		}
		if err != nil {
			return res, err
		}
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		ts, _, err := rb.linkBackTopics(wctx, flow, r)
		if err == nil && len(pending(ts, linkBack.isReversed)) == 0 {
			states := map[string]string{}
			for _, t := range ts {
				states[t.DR] = string(t.Mirror.MirrorStatus)
			}
			res.DRMirrors = &states
			return res, nil
		}
		select {
		case <-wctx.Done():
			return res, errors.Join(fmt.Errorf("DR's topics are not mirrors of the primary's within 2 minutes (retrying the step sends nothing to a topic that got there)"), err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// previewLinkFailback says what step i of a Cluster Linking failback sends.
func (rb Book) previewLinkFailback(ctx context.Context, r *runbook.Run, i int) ([]string, error) {
	flow := rb.Config.Flow(r.Flow)
	pr := flow.ClusterLink.Primary
	at := fmt.Sprintf("POST %s/v3/clusters/%s/links/%s/mirrors:", pr.RestURL, pr.ClusterID, failover.LinkName(flow))
	ts, primary, err := rb.linkBackTopics(ctx, flow, r)
	if err != nil {
		return []string{at + "…: the topics are read when the step runs: " + err.Error()}, nil
	}
	names := strings.Join(primaryNames(ts), ", ")
	if k, ok := linkBackSteps[r.Plan.Steps[i].Kind]; ok {
		return k.preview(ctx, rb.Runbook, r, r.Plan.Steps[i], at, ts, primary, names)
	}
	return nil, fmt.Errorf("step kind %q is not a Cluster Linking failback step", r.Plan.Steps[i].Kind)
}
