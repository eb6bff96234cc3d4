package failback

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/clusterlink"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/connect"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
)

// backStep is one kind of step of a failback over MirrorMaker 2,
// registered once in backSteps: its title, its preview and its effect.
type backStep interface {
	title(p runbook.Plan, s runbook.Step, flow *config.Flow, names, connectURL, fwd string) string
	preview(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int, flow *config.Flow, rev mm2.ReverseConnectors, on string) ([]string, error)
	do(ctx context.Context, w audit.Written, e *runbook.Execution, flow *config.Flow, api *connect.Client) (any, error)
	rules(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, idx int, flow *config.Flow, api *connect.Client) []runbook.RuleResult
}

var backSteps = map[runbook.StepKind]backStep{
	KindSetUpReverse:          setUpReverseStep{},
	KindWaitReverse:           waitReverseStep{},
	KindStopWriters:           stopWritersStep{},
	KindStopReverse:           stopReverseStep{},
	KindTranslateGroupBack:    translateGroupBackStep{},
	KindSavepointDR:           savepointDRStep{},
	KindRewriteBack:           rewriteBackStep{},
	failover.KindRestoreFlink: restoreBackStep{},
	KindRestartForward:        restartForwardStep{},
}

type setUpReverseStep struct{}

func (setUpReverseStep) title(p runbook.Plan, s runbook.Step, flow *config.Flow, names, connectURL, fwd string) string {
	if flow != nil && flow.ReplicationPolicy != config.PolicyIdentity {
		return fmt.Sprintf("Create the reverse MirrorMaker 2 connectors %s (DR -> primary) on the forward flow's Kafka Connect %s; the source is created stopped, its offsets reset so it copies DR's own topics from the earliest offset into %s on the primary, then resumed",
			names, connectURL, flowstate.TopicsOf(flow).Policy.RemoteTopic(flow.TargetAlias, "<topic>"))
	}
	return fmt.Sprintf("Create the reverse MirrorMaker 2 connectors %s (DR -> primary) on the forward flow's Kafka Connect %s; the source is created stopped, set to start at failover run #%d's cut, then resumed",
		names, connectURL, p.FailbackOf)
}
func (setUpReverseStep) preview(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int, flow *config.Flow, rev mm2.ReverseConnectors, on string) ([]string, error) {
	start, err := book(rb).reverseStart(ctx, r)
	if err != nil {
		return nil, err
	}
	tps := slices.Collect(maps.Keys(start))
	mm2.SortTPs(tps)
	var at []string
	for _, tp := range tps[:min(len(tps), 8)] {
		at = append(at, fmt.Sprintf("%s at %d", mm2.TPKey(tp), start[tp]))
	}
	if len(tps) > 8 {
		at = append(at, fmt.Sprintf("and %d more", len(tps)-8))
	}
	startLine := fmt.Sprintf("PATCH /connectors/%s/offsets: %d DR partitions start at failover run #%d's cut: %s", rev.Source, len(tps), r.Plan.FailbackOf, strings.Join(at, ", "))
	if flow.ReplicationPolicy != config.PolicyIdentity {
		policy := flowstate.TopicsOf(flow).Policy
		startLine = fmt.Sprintf("DELETE /connectors/%s/offsets: it copies DR's own topics from their earliest offset into %s on the primary (a source of this name from an earlier failback would otherwise resume where it stopped); DR's copies of the primary's topics (%s) are not copied back, and the step is refused while they hold anything written after failover run #%d's cut",
			rev.Source, policy.RemoteTopic(flow.TargetAlias, "<topic>"), policy.RemoteTopic(flow.SourceAlias, "<topic>"), r.Plan.FailbackOf)
	}
	lines := []string{
		"POST /connectors" + on + ": " + rev.Source + " (source.cluster.alias " + flow.TargetAlias + ", target.cluster.alias " + flow.SourceAlias + "), created STOPPED",
		startLine,
		"PUT /connectors/{name}/config for " + rev.Checkpoint + " (sync.group.offsets.enabled false) and " + rev.Heartbeat,
		"PUT /connectors/" + rev.Source + "/resume",
		"The Connect workers reach the primary and DR at the forward MirrorSourceConnector's source.cluster / target.cluster bootstrap.servers, with its client settings for each (security.protocol, ssl.*, sasl.*: swapped, and under producer.override.* for the cluster a connector writes to); where it names no address, at the console's own: " + bootstrap(rb.Config, flow.Source) + " and " + bootstrap(rb.Config, flow.Target) + ".",
	}
	return append(lines, rev.Notes...), nil
}
func (setUpReverseStep) do(ctx context.Context, w audit.Written, e *runbook.Execution, flow *config.Flow, api *connect.Client) (any, error) {
	return book(e.Runbook).setUpReverse(ctx, w, e.Run, flow, api)
}

type waitReverseStep struct{}

func (waitReverseStep) title(p runbook.Plan, s runbook.Step, flow *config.Flow, names, connectURL, fwd string) string {
	return "Wait until the reverse connectors run and their committed source offsets reach DR's log ends (every record written in DR since the failover is on the primary)"
}
func (waitReverseStep) preview(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int, flow *config.Flow, rev mm2.ReverseConnectors, on string) ([]string, error) {
	p, err := book(rb).reverseProgress(ctx, r, true)
	if err != nil {
		return nil, err
	}
	return []string{fmt.Sprintf("Polls every second, at most %s. Now: caught up %v; %s", book(rb).reverseCatchUp(), p.CaughtUp(), p)}, nil
}
func (waitReverseStep) do(ctx context.Context, w audit.Written, e *runbook.Execution, flow *config.Flow, api *connect.Client) (any, error) {
	return book(e.Runbook).waitReverse(ctx, e.Run, e.Progress)
}

type stopWritersStep struct{}

func (stopWritersStep) title(p runbook.Plan, s runbook.Step, flow *config.Flow, names, connectURL, fwd string) string {
	return "Confirm that every producer writing to DR's topics of this flow is stopped (type the flow name): records written to DR after this are not replicated back"
}
func (stopWritersStep) preview(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int, flow *config.Flow, rev mm2.ReverseConnectors, on string) ([]string, error) {
	return []string{stopWritersPreview,
		"Records written to DR after the reverse connectors are paused (next step) do not reach the primary."}, nil
}
func (stopWritersStep) do(ctx context.Context, w audit.Written, e *runbook.Execution, flow *config.Flow, api *connect.Client) (any, error) {
	return stopWritersDone(e), nil
}

type stopReverseStep struct{}

func (stopReverseStep) title(p runbook.Plan, s runbook.Step, flow *config.Flow, names, connectURL, fwd string) string {
	return fmt.Sprintf("Pause the reverse connectors %s on %s, check they caught up, and record DR's and the primary's log ends", names, connectURL)
}
func (stopReverseStep) preview(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int, flow *config.Flow, rev mm2.ReverseConnectors, on string) ([]string, error) {
	return []string{"PUT /connectors/{name}/pause" + on + " for " + strings.Join(rev.Names(), ", "),
		"Then the caught-up check again (refused when behind), and the primary's log end of every partition of the flow's topics is read and recorded in this step's result."}, nil
}
func (stopReverseStep) do(ctx context.Context, w audit.Written, e *runbook.Execution, flow *config.Flow, api *connect.Client) (any, error) {
	return book(e.Runbook).stopReverse(ctx, w, e.Run, flow, api)
}

type translateGroupBackStep struct{}

func (translateGroupBackStep) title(p runbook.Plan, s runbook.Step, flow *config.Flow, names, connectURL, fwd string) string {
	return "Move consumer group " + s.Group + " to the primary: a partition where the DR group is at DR's log end recorded by stop-reverse is committed at the primary's log end recorded then; one inside the log through the reverse flow's offset syncs, or, among the records the forward flow had copied to DR, through the forward flow's syncs read backwards (refused where none applies)"
}
func (translateGroupBackStep) preview(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int, flow *config.Flow, rev mm2.ReverseConnectors, on string) ([]string, error) {
	g := r.Plan.Steps[i].Group
	b, err := book(rb).groupBack(ctx, r, g)
	if err != nil {
		return []string{"Reads DR group " + g + "'s offsets when it runs; stop-reverse's recorded ends and the reverse flow's syncs decide: " + err.Error()}, nil
	}
	offsets, notInDR := b.Primary, b.Absent
	tps := slices.Collect(maps.Keys(offsets))
	mm2.SortTPs(tps)
	lines := []string{"OffsetCommit to the primary group " + g + " (it must have no members); its current offsets go to the audit log first:"}
	for _, tp := range tps {
		lines = append(lines, fmt.Sprintf("%s → %d", mm2.TPKey(tp), offsets[tp]))
	}
	if len(b.Translated) > 0 {
		lines = append(lines, "Inside DR's log, moved through the reverse flow's offset syncs: "+strings.Join(b.Translated, "; "))
	}
	if len(notInDR) > 0 {
		lines = append(lines, "Not committed in DR, left as they are on the primary: "+strings.Join(notInDR, ", "))
	}
	return lines, nil
}
func (translateGroupBackStep) do(ctx context.Context, w audit.Written, e *runbook.Execution, flow *config.Flow, api *connect.Client) (any, error) {
	return book(e.Runbook).translateGroupBack(ctx, w, e.Run, e.Step.Group, e.Who)
}

type savepointDRStep struct{}

func (savepointDRStep) title(p runbook.Plan, s runbook.Step, flow *config.Flow, names, connectURL, fwd string) string {
	return fmt.Sprintf("Stop the DR Flink job %s on %s with a savepoint (it has read everything: the writers are stopped) and register the savepoint in the catalog", s.JobID, s.FlinkTarget)
}
func (savepointDRStep) preview(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int, flow *config.Flow, rev mm2.ReverseConnectors, on string) ([]string, error) {
	s := r.Plan.Steps[i]
	return []string{"POST /jobs/" + s.JobID + "/stop on " + s.FlinkTarget + " (drain false): stop-with-savepoint, then the savepoint is registered in the catalog",
		"Resumed after a crash with the job no longer running, its newest savepoint since stop-reverse is taken from Flink's checkpoint history."}, nil
}
func (savepointDRStep) do(ctx context.Context, w audit.Written, e *runbook.Execution, flow *config.Flow, api *connect.Client) (any, error) {
	return book(e.Runbook).savepointDR(ctx, w, e.Run, e.Step, e.Progress)
}

type rewriteBackStep struct{}

func (rewriteBackStep) title(p runbook.Plan, s runbook.Step, flow *config.Flow, names, connectURL, fwd string) string {
	return "Copy the savepoint savepoint-dr took into " + s.RewriteTo + ", each Kafka split moved by the translate-back rule: from DR's log end recorded by stop-reverse to the primary's log end recorded then; one inside the log through the reverse or forward flow's syncs, re-reading at most the records stated (refused where none applies)"
}
func (rewriteBackStep) preview(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int, flow *config.Flow, rev mm2.ReverseConnectors, on string) ([]string, error) {
	p, err := book(rb).backTargets(ctx, r, r.Plan.Steps[i])
	if err != nil {
		return []string{"Reads the savepoint savepoint-dr takes; stop-reverse's recorded ends decide: " + err.Error()}, nil
	}
	lines := append([]string{"Copies " + p.Source.Path + " into " + r.Plan.Steps[i].RewriteTo + " (source uid " + p.SourceUID + "), the splits:"}, p.Rows...)
	if len(p.Absent) > 0 {
		lines = append(lines, "No split in the savepoint (the job never read them): "+strings.Join(p.Absent, ", "))
	}
	if err := p.Err(); err != nil {
		lines = append(lines, "Refused now: "+err.Error())
	}
	return lines, nil
}
func (rewriteBackStep) do(ctx context.Context, w audit.Written, e *runbook.Execution, flow *config.Flow, api *connect.Client) (any, error) {
	return book(e.Runbook).rewriteBack(ctx, w, e.Run, e.Step)
}

type restoreBackStep struct{}

func (restoreBackStep) title(p runbook.Plan, s runbook.Step, flow *config.Flow, names, connectURL, fwd string) string {
	if s.SavepointPath == "" {
		return fmt.Sprintf("Start the Flink job on the primary's %s without a savepoint: its Kafka source starts from the group offsets translate-group-back committed", s.FlinkTarget)
	}
	return fmt.Sprintf("Start the Flink job on the primary's %s from the rewritten savepoint %s (same source uid, whole state)", s.FlinkTarget, s.SavepointPath)
}
func (restoreBackStep) preview(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int, flow *config.Flow, rev mm2.ReverseConnectors, on string) ([]string, error) {
	return book(rb).PreviewRestore(ctx, r, i, r.Plan.Steps[i]), nil
}
func (restoreBackStep) do(ctx context.Context, w audit.Written, e *runbook.Execution, flow *config.Flow, api *connect.Client) (any, error) {
	rb, r := e.Runbook, e.Run
	if err := book(rb).RewrittenReady(ctx, r, e.Step); err != nil {
		return nil, err
	}
	return book(rb).RestoreFlink(ctx, w, r, e.Idx, e.Step)
}

type restartForwardStep struct{}

func (restartForwardStep) title(p runbook.Plan, s runbook.Step, flow *config.Flow, names, connectURL, fwd string) string {
	return fmt.Sprintf("Delete the reverse connectors, set the forward source connector to start at the primary's log ends recorded by stop-reverse, then resume the forward connectors %s on %s", fwd, connectURL)
}
func (restartForwardStep) preview(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, i int, flow *config.Flow, rev mm2.ReverseConnectors, on string) ([]string, error) {
	return []string{"DELETE /connectors/{name}" + on + " for " + strings.Join(rev.Names(), ", ") + ", verified gone (404)",
		"PATCH /connectors/{forward source}/offsets: the primary's log ends stop-reverse recorded (records the reverse flow copied back lie below them and are not copied to DR again)",
		"PUT /connectors/{name}/resume for " + strings.Join(flow.Connectors, ", "),
		"After this step the primary is the active side of " + r.Flow + "."}, nil
}
func (restartForwardStep) do(ctx context.Context, w audit.Written, e *runbook.Execution, flow *config.Flow, api *connect.Client) (any, error) {
	return book(e.Runbook).restartForward(ctx, w, e.Run, flow, api)
}

// stopWritersDone is the stop-writers step's result in both failbacks:
// the console changes nothing, the operator's typed confirmation is it.
func stopWritersDone(e *runbook.Execution) any {
	return writersStopped{ConfirmedBy: e.Who.Name, Note: "the operator confirmed, by typing the flow name, that no producer writes to DR"}
}

// writersStopped is stop-writers' result, with the keys, in the order, of
// the map it replaced; V is the shape's version (absent: the first).
type writersStopped struct {
	ConfirmedBy string `json:"confirmed_by"`
	Note        string `json:"note"`
	V           int    `json:"v,omitempty"`
}

// linkBackStep is one kind of step of a Cluster Linking failback,
// registered once in linkBackSteps.
type linkBackStep interface {
	title(s runbook.Step, flow *config.Flow, primary string) string
	preview(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, s runbook.Step, at string, ts []linkBack, primary *clusterlink.Client, names string) ([]string, error)
	do(ctx context.Context, w audit.Written, e *runbook.Execution, flow *config.Flow, retry bool) (any, error)
	rules(ctx context.Context, ts []linkBack, primary *clusterlink.Client, rules []runbook.RuleResult) []runbook.RuleResult
}

var linkBackSteps = map[runbook.StepKind]linkBackStep{
	KindRestorePrimary:   linkRestorePrimaryStep{},
	KindWaitPrimary:      linkWaitPrimaryStep{},
	KindStopWriters:      linkStopWritersStep{},
	KindReverseToPrimary: linkReverseToPrimaryStep{},
}

type linkRestorePrimaryStep struct{}

func (linkRestorePrimaryStep) title(s runbook.Step, flow *config.Flow, primary string) string {
	return "Truncate the primary's topics to DR's copy and make them mirrors of DR (truncate-and-restore on " + primary + ", link " + failover.LinkName(flow) + "): the records that never reached DR are deleted"
}
func (linkRestorePrimaryStep) preview(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, s runbook.Step, at string, ts []linkBack, primary *clusterlink.Client, names string) ([]string, error) {
	todo := pending(ts, linkBack.isRestored)
	lines := []string{at + "truncate-and-restore?include_partition_level_truncation_data=true for " + strings.Join(primaryNames(todo), ", ")}
	if len(todo) == 0 {
		return append(lines, "The primary's topics are mirrors of DR's already: nothing to send."), nil
	}
	if total, parts, err := dryRunRestore(ctx, primary, todo); err != nil {
		lines = append(lines, err.Error())
	} else {
		lines = append(lines, "Dry run (validate_only): "+truncationText(total, parts)+".")
	}
	return append(lines, "Export or reconcile those records before approving: they are deleted from the primary, and exist nowhere else."), nil
}
func (linkRestorePrimaryStep) do(ctx context.Context, w audit.Written, e *runbook.Execution, flow *config.Flow, retry bool) (any, error) {
	rb := e.Runbook
	counted := ""
	for _, rule := range e.Rules {
		if rule.Name == countedRule && rule.OK {
			counted = rule.Evidence
		}
	}
	return book(rb).restorePrimary(ctx, w, e.Run, flow, counted, retry)
}

type linkWaitPrimaryStep struct{}

func (linkWaitPrimaryStep) title(s runbook.Step, flow *config.Flow, primary string) string {
	return "Wait until the primary's mirror topics run with zero lag (every record written in DR since the failover is on the primary)"
}
func (linkWaitPrimaryStep) preview(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, s runbook.Step, at string, ts []linkBack, primary *clusterlink.Client, names string) ([]string, error) {
	behind := primaryBehind(ts)
	return []string{fmt.Sprintf("Polls the primary's mirrors every second, at most %s. Now: %s", book(rb).reverseCatchUp(), cmp.Or(strings.Join(behind, "; "), "caught up"))}, nil
}
func (linkWaitPrimaryStep) do(ctx context.Context, w audit.Written, e *runbook.Execution, flow *config.Flow, retry bool) (any, error) {
	return book(e.Runbook).waitPrimary(ctx, e.Run, flow, e.Progress)
}

type linkStopWritersStep struct{}

func (linkStopWritersStep) title(s runbook.Step, flow *config.Flow, primary string) string {
	return "Stop every producer writing to DR's topics of this flow (typed confirmation; the console changes nothing)"
}
func (linkStopWritersStep) preview(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, s runbook.Step, at string, ts []linkBack, primary *clusterlink.Client, names string) ([]string, error) {
	return []string{stopWritersPreview,
		"Records written to DR after the reverse (the last step) are refused there: DR's topics become mirrors again."}, nil
}
func (linkStopWritersStep) do(ctx context.Context, w audit.Written, e *runbook.Execution, flow *config.Flow, retry bool) (any, error) {
	return stopWritersDone(e), nil
}

type linkReverseToPrimaryStep struct{}

func (linkReverseToPrimaryStep) title(s runbook.Step, flow *config.Flow, primary string) string {
	if s.PauseMirrors {
		return "Reverse the mirrors on " + primary + " (reverse-and-pause-mirror): the primary's topics become writable, DR's become mirrors of them, paused"
	}
	return "Reverse the mirrors on " + primary + " (reverse-and-start-mirror): the primary's topics become writable, DR's become mirrors of them again"
}
func (linkReverseToPrimaryStep) preview(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, s runbook.Step, at string, ts []linkBack, primary *clusterlink.Client, names string) ([]string, error) {
	action := "reverse-and-start-mirror"
	if s.PauseMirrors {
		action = "reverse-and-pause-mirror"
	}
	return []string{at + action + " for " + names + ", then waits until DR lists each as its mirror and the primary lists none",
		"Now behind on the primary: " + cmp.Or(strings.Join(primaryBehind(ts), "; "), "nothing"),
		"Consumer groups and Flink savepoints need nothing: offsets are the same on both ends."}, nil
}
func (linkReverseToPrimaryStep) do(ctx context.Context, w audit.Written, e *runbook.Execution, flow *config.Flow, retry bool) (any, error) {
	return book(e.Runbook).reverseToPrimary(ctx, w, e.Run, flow, e.Step.PauseMirrors, retry)
}

// rules: the checks a step of a failback over MirrorMaker 2 adds to the
// active-side rule when it starts; none can be overridden.
func (setUpReverseStep) rules(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, idx int, flow *config.Flow, api *connect.Client) []runbook.RuleResult {
	var rules []runbook.RuleResult
	policy := flowstate.TopicsOf(flow).Policy
	cycle := runbook.RuleResult{Name: "no replication cycle: the forward connectors are known stopped (identity policy)"}
	switch err := mm2.CheckReverseCycle(policy, forwardStates(ctx, api, flow.Connectors)); {
	case err != nil:
		cycle.Evidence = err.Error()
	case !policy.Identity:
		cycle.Name = "no replication cycle"
		cycle.OK, cycle.Evidence = true, "default policy: MM2 copies no topic back to the cluster it came from"
	default:
		cycle.OK, cycle.Evidence = true, "every forward connector STOPPED with no tasks"
	}
	cut := runbook.RuleResult{Name: "the failover's cut is known for every mirrored partition"}
	if scope, err := book(rb).reverseScope(ctx, r); err != nil {
		cut.Evidence = err.Error()
	} else {
		cut.OK, cut.Evidence = true, fmt.Sprintf("cut of run #%d", r.Plan.FailbackOf)
		if !policy.Identity {
			rules = append(rules, book(rb).copiesUnchangedRule(ctx, r, scope))
		}
	}
	clients := runbook.RuleResult{Name: "the Connect workers' client settings for every cluster the console reaches with TLS or SASL are known (from the forward MirrorSourceConnector)"}
	if inherited, err := forwardConfigs(ctx, api, flow.Connectors); err != nil {
		clients.Evidence = err.Error()
	} else if _, _, err := workerClients(rb.Config, flow, inherited); err != nil {
		clients.Evidence = err.Error()
	} else {
		clients.OK, clients.Evidence = true, "none needed, or security.protocol set for each"
	}
	rules = append(rules, cycle, cut, clients)
	return rules
}
func (waitReverseStep) rules(context.Context, *runbook.Runbook, *runbook.Run, int, *config.Flow, *connect.Client) []runbook.RuleResult {
	return nil
}
func (stopWritersStep) rules(context.Context, *runbook.Runbook, *runbook.Run, int, *config.Flow, *connect.Client) []runbook.RuleResult {
	return nil
}
func (stopReverseStep) rules(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, idx int, flow *config.Flow, api *connect.Client) []runbook.RuleResult {
	return []runbook.RuleResult{book(rb).caughtUpRule(ctx, r)}
}
func (translateGroupBackStep) rules(context.Context, *runbook.Runbook, *runbook.Run, int, *config.Flow, *connect.Client) []runbook.RuleResult {
	return nil
}
func (savepointDRStep) rules(context.Context, *runbook.Runbook, *runbook.Run, int, *config.Flow, *connect.Client) []runbook.RuleResult {
	return nil
}
func (rewriteBackStep) rules(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, idx int, flow *config.Flow, api *connect.Client) []runbook.RuleResult {
	var rules []runbook.RuleResult
	rule := runbook.RuleResult{Name: "every Kafka split of the DR savepoint can be moved to the primary (at DR's end recorded by stop-reverse, or inside the log through the reverse or forward flow's syncs)"}
	if p, err := book(rb).backTargets(ctx, r, r.Plan.Steps[idx]); err != nil {
		rule.Evidence = err.Error()
	} else if err := p.Err(); err != nil {
		rule.Evidence = err.Error()
	} else {
		rule.OK, rule.Evidence = true, fmt.Sprintf("%d split(s): %s", len(p.Rows), strings.Join(p.Rows, ", "))
	}
	rules = append(rules, rule)
	return rules
}
func (restoreBackStep) rules(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, idx int, flow *config.Flow, api *connect.Client) []runbook.RuleResult {
	return book(rb).RestoreRewrittenRule(ctx, r, idx)
}
func (restartForwardStep) rules(ctx context.Context, rb *runbook.Runbook, r *runbook.Run, idx int, flow *config.Flow, api *connect.Client) []runbook.RuleResult {
	var rules []runbook.RuleResult
	idle := runbook.RuleResult{Name: "the reverse connectors are paused or deleted (this step deletes them before the forward flow resumes)"}
	if err := reverseIdle(ctx, api, reverseNames(flow)); err != nil {
		idle.Evidence = err.Error()
	} else {
		idle.OK, idle.Evidence = true, "none running"
	}
	rules = append(rules, idle)
	return rules
}

// rules: what a step of a Cluster Linking failback checks after the
// reads rule (given), of the topics ts an earlier attempt did not get
// through.
func (linkRestorePrimaryStep) rules(ctx context.Context, ts []linkBack, primary *clusterlink.Client, rules []runbook.RuleResult) []runbook.RuleResult {
	todo := pending(ts, linkBack.isRestored)
	if len(todo) == 0 {
		return append(rules, runbook.RuleResult{Name: "the primary's topics are mirrors of DR's", OK: true, Evidence: "restored by an earlier attempt"})
	}
	stopped := runbook.RuleResult{Name: "every mirror of the flow on DR is stopped (the failover made DR's topics writable)"}
	var live []string
	for _, t := range todo {
		switch {
		case t.Mirror == nil:
			live = append(live, t.DR+" (not listed by DR)")
		case !t.Mirror.Stopped():
			live = append(live, t.DR+" "+string(t.Mirror.MirrorStatus))
		}
	}
	if len(live) > 0 {
		stopped.Evidence = strings.Join(live, ", ")
	} else {
		stopped.OK, stopped.Evidence = true, "all STOPPED"
	}
	counted := runbook.RuleResult{Name: countedRule}
	if total, lines, err := dryRunRestore(ctx, primary, todo); err != nil {
		counted.Evidence = err.Error()
	} else {
		counted.OK, counted.Evidence = true, truncationText(total, lines)
	}
	rules = append(rules, stopped, counted)
	return rules
}
func (linkWaitPrimaryStep) rules(_ context.Context, _ []linkBack, _ *clusterlink.Client, rules []runbook.RuleResult) []runbook.RuleResult {
	return rules
}
func (linkStopWritersStep) rules(_ context.Context, _ []linkBack, _ *clusterlink.Client, rules []runbook.RuleResult) []runbook.RuleResult {
	return rules
}
func (linkReverseToPrimaryStep) rules(ctx context.Context, ts []linkBack, primary *clusterlink.Client, rules []runbook.RuleResult) []runbook.RuleResult {
	todo := pending(ts, linkBack.isReversed)
	if len(todo) == 0 {
		return append(rules, runbook.RuleResult{Name: "DR's topics are mirrors of the primary's", OK: true, Evidence: "reversed by an earlier attempt"})
	}
	up := runbook.RuleResult{Name: "every mirror on the primary ACTIVE with zero lag (writers on DR stopped, all of DR's records on the primary)"}
	if behind := primaryBehind(todo); len(behind) > 0 {
		up.Evidence = strings.Join(behind, "; ")
	} else {
		up.OK, up.Evidence = true, "all caught up"
	}
	rules = append(rules, up)
	return rules
}
