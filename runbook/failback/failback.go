package failback

import (
	"cmp"
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
	"github.com/drconsole/drconsole/connect"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/runbook/internal/effect"
)

// A failback is a run of a plan with Failback set, through the same
// approval gate, step machine and audit-first effects as a failover. It
// returns a MirrorMaker 2 flow to the primary after a completed failover
// (FailbackOf, the run whose cut it starts from), in exactly this order:
//
//	set-up-reverse, wait-reverse-caught-up, stop-writers, stop-reverse,
//	translate-group-back (one per group), [savepoint-dr,
//	rewrite-savepoint-back,] [restore-flink,] restart-forward
//
// What is enforced here rather than trusted to the plan:
//   - only while DR is the active side after the run FailbackOf (checked
//     when the plan is made and again when each step starts);
//   - only MM2 flows on Kafka Connect (connect_url), under either
//     policy (failback_scope.go: what the reverse flow copies, and where
//     DR's records lie on the primary). Cluster Linking flows have a
//     failback of their own (failback_clusterlink.go);
//   - the reverse connectors run on the forward flow's Connect cluster
//     (connect_url), whose workers are assumed to reach both clusters at
//     the console's bootstrap addresses, with the client settings the
//     forward MirrorSourceConnector has for each (swapped: workerClients);
//     a cluster the console reaches with TLS or SASL whose forward
//     settings name no security.protocol is refused;
//   - every rule fails closed: a state, offset or log end that cannot be
//     read refuses the step or keeps it waiting.
//
// Optional Flink steps (failback_flink.go) stop the DR job with a
// savepoint and restore it on the primary. A DR group's offset inside the
// log is moved back through the reverse flow's offset syncs
// (failback_translate.go), and so is a savepoint's split.

const (
	// KindSetUpReverse creates the reverse connectors DR -> primary, the
	// source starting at the failover's cut.
	KindSetUpReverse runbook.StepKind = "set-up-reverse"
	// KindWaitReverse waits until the reverse flow has committed to the
	// primary every record DR holds.
	KindWaitReverse runbook.StepKind = "wait-reverse-caught-up"
	// KindStopWriters is the operator's typed confirmation that nothing
	// writes to DR any more.
	KindStopWriters runbook.StepKind = "stop-writers"
	// KindStopReverse pauses the reverse connectors once they caught up,
	// recording the primary's log ends.
	KindStopReverse runbook.StepKind = "stop-reverse"
	// KindTranslateGroupBack moves a consumer group from DR to the
	// primary: a DR group at DR's log end when stop-reverse paused the
	// reverse flow goes to the primary's log end recorded then.
	KindTranslateGroupBack runbook.StepKind = "translate-group-back"
	// KindRestartForward deletes the reverse connectors and starts the
	// forward MM2 connectors again, the source at the primary's log ends
	// stop-reverse recorded.
	KindRestartForward runbook.StepKind = "restart-forward"
)

// failbackKinds are the kinds of failback steps, with their traits the
// failover's shared step machinery reads (failover.RegisterSteps).
var failbackKinds = map[runbook.StepKind]failover.StepTrait{
	KindSetUpReverse: 0, KindWaitReverse: 0, KindStopWriters: 0, KindStopReverse: 0,
	KindTranslateGroupBack: failover.TranslatesBack,
	KindSavepointDR:        0,
	KindRewriteBack:        failover.Rewrites | failover.RewritesDRSavepoint,
	KindRestartForward:     failover.RestartsForward,
	KindRestorePrimary:     0, KindWaitPrimary: 0,
	KindReverseToPrimary: failover.LeavesMirrorsPaused,
}

// FailbackPlan is the failback plan of flow, the one order a failback
// has: a translate-group-back step per group after stop-reverse (whose
// recorded ends it translates with), before restart-forward.
func FailbackPlan(flow string, groups ...string) runbook.Plan {
	p := runbook.Plan{Flow: flow, Kind: runbook.PlanFailback}
	for _, k := range []runbook.StepKind{KindSetUpReverse, KindWaitReverse, KindStopWriters, KindStopReverse} {
		p.Steps = append(p.Steps, runbook.Step{Kind: k})
	}
	for _, g := range groups {
		p.Steps = append(p.Steps, runbook.Step{Kind: KindTranslateGroupBack, Group: g})
	}
	p.Steps = append(p.Steps, runbook.Step{Kind: KindRestartForward})
	return p
}

// stopWritersPreview is what the stop-writers step asks, in both failbacks.
const stopWritersPreview = "The console changes nothing here: stop every producer writing to DR's topics of this flow, then type the flow name."

// DefaultReverseCatchUp bounds the wait-reverse-caught-up step.
const DefaultReverseCatchUp = 30 * time.Minute

func (rb Book) reverseCatchUp() time.Duration {
	if rb.ReverseCatchUp > 0 {
		return rb.ReverseCatchUp
	}
	return DefaultReverseCatchUp
}

// failbackTitle says what step s of failback p does; "" for other kinds.
func failbackTitle(p runbook.Plan, s runbook.Step, flow *config.Flow) string {
	if flow != nil && flow.IsClusterLink() {
		return linkFailbackTitle(s, flow)
	}
	connectURL, fwd := "?", "?"
	var rev mm2.ReverseConnectors
	if flow != nil {
		connectURL, fwd = flow.ConnectURL, strings.Join(flow.Connectors, ", ")
		rev, _ = forwardFlow(flow, nil).ReverseConfigs()
	}
	names := strings.Join(rev.Names(), ", ")
	if k, ok := backSteps[s.Kind]; ok {
		return k.title(p, s, flow, names, connectURL, fwd)
	}
	return ""
}

// failbackProblems says what makes failback p not exactly the failback.
func failbackProblems(cfg *config.Config, p runbook.Plan) []error {
	flow := cfg.Flow(p.Flow)
	if flow == nil {
		return nil // Validate says so
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("failback: "+format, args...)) }
	if flow.IsClusterLink() {
		for _, why := range linkFailbackProblems(flow, p) {
			bad("%s", why)
		}
		return errs
	}
	if flow.ConnectURL == "" {
		bad("the flow has no connect_url: the reverse connectors are created through Kafka Connect REST, and dedicated-mode MirrorMaker 2 has none")
	}
	var groups []string
	for _, st := range failover.StepsThat(p, failover.TranslatesBack) {
		switch {
		case strings.TrimSpace(st.Group) == "":
			bad("name the consumer group of each translate-group-back step")
		case slices.Contains(groups, st.Group):
			bad("group %s is translated back twice", st.Group)
		}
		groups = append(groups, st.Group)
	}
	want := FailbackPlan(p.Flow, groups...)
	if fk := flinkBackKinds(p); len(fk) > 0 {
		fb := runbook.FlinkBack{}
		if slices.Contains(fk, KindSavepointDR) {
			fb.DRJob = "-"
		}
		want = WithFlinkBack(want, fb)
	}
	if !slices.Equal(kindsOf(p), kindsOf(want)) {
		bad("the steps must be exactly %v, in that order", kindsOf(want))
	}
	for _, why := range flinkBackProblems(cfg, p) {
		bad("%s", why)
	}
	return errs
}

func kindsOf(p runbook.Plan) []runbook.StepKind {
	out := make([]runbook.StepKind, len(p.Steps))
	for i, s := range p.Steps {
		out[i] = s.Kind
	}
	return out
}

// StampFailback pins a failback plan to the failover it undoes, so the
// approval covers which cut the reverse flow starts from; it refuses while
// the primary is the active side. Create and Update call it; the plan
// form's summary too, to say so before anything is stored.
func (rb Book) StampFailback(ctx context.Context, p *runbook.Plan) error {
	if p.Kind != runbook.PlanFailback {
		return nil
	}
	active, err := failover.ActiveSideOf(ctx, rb.Store, p.Flow)
	if err != nil {
		return fmt.Errorf("failback: which side of %s is active could not be read: %w", p.Flow, err)
	}
	if active.Side != model.SideDR {
		return fmt.Errorf("failback refused: the primary is the active side of %s; a failback returns a flow to the primary after a completed failover", p.Flow)
	}
	p.FailbackOf = active.Run
	return nil
}

// forwardFlow is the flow as the reverse set-up sees it; forward states,
// when not nil, are checked by the cycle rule.
func forwardFlow(f *config.Flow, cfg *config.Config) mm2.ForwardFlow {
	ff := mm2.ForwardFlow{PrimaryAlias: f.SourceAlias, DRAlias: f.TargetAlias, Policy: flowstate.TopicsOf(f).Policy,
		Include: f.Topics.Include, Exclude: f.Topics.Exclude, OffsetSyncsLocation: string(f.OffsetSyncsLocation), Connectors: f.Connectors,
		WorkerTopics: slices.DeleteFunc([]string{f.ConnectOffsetsTopic}, func(t string) bool { return t == "" }),
		// The title needs only the names; the bootstraps are the console's.
		PrimaryBootstrap: "-", DRBootstrap: "-"}
	if cfg != nil {
		ff.PrimaryBootstrap = bootstrap(cfg, f.Source)
		ff.DRBootstrap = bootstrap(cfg, f.Target)
	}
	return ff
}

func bootstrap(cfg *config.Config, cluster string) string {
	if c := cfg.Clusters[cluster]; c != nil {
		return strings.Join(c.Bootstrap, ",")
	}
	return ""
}

// failbackRules are checked when step idx of failback r starts; they
// cannot be overridden.
func (rb Book) failbackRules(ctx context.Context, r *runbook.Run, idx int) []runbook.RuleResult {
	flow := rb.Config.Flow(r.Flow)
	active := runbook.RuleResult{Name: "DR is the active side, after the failover this plan undoes"}
	switch a, err := failover.ActiveSideOf(ctx, rb.Store, r.Flow); {
	case err != nil:
		active.Evidence = "unknown: " + err.Error()
	case a.Side != model.SideDR || a.Run != r.Plan.FailbackOf:
		active.Evidence = fmt.Sprintf("the %s is active after run #%d; this plan undoes run #%d", a.Side, a.Run, r.Plan.FailbackOf)
	default:
		active.OK, active.Evidence = true, fmt.Sprintf("DR active since run #%d", a.Run)
	}
	rules := []runbook.RuleResult{active}
	if errs := failbackProblems(rb.Config, r.Plan); len(errs) > 0 {
		rules = append(rules, runbook.RuleResult{Name: "a valid failback plan", Evidence: errors.Join(errs...).Error()})
		return rules
	}
	if flow.IsClusterLink() {
		return append(rules, rb.linkFailbackRules(ctx, r, idx)...)
	}
	api := rb.Connect(flow.ConnectURL)
	if k, ok := backSteps[r.Plan.Steps[idx].Kind]; ok {
		rules = append(rules, k.rules(ctx, rb.Runbook, r, idx, flow, api)...)
	}
	return rules
}

// forwardStates reads the forward connectors for the cycle rule; one that
// cannot be read is unknown, which the rule refuses.
func forwardStates(ctx context.Context, api *connect.Client, names []string) []mm2.ForwardConnector {
	out := make([]mm2.ForwardConnector, 0, len(names))
	for _, n := range names {
		s, err := api.Status(ctx, n)
		out = append(out, mm2.ForwardConnector{Name: n, Known: err == nil, State: string(s.Connector.State), Tasks: len(s.Tasks)})
	}
	return out
}

func reverseNames(flow *config.Flow) []string {
	rev, _ := forwardFlow(flow, nil).ReverseConfigs()
	return rev.Names()
}

// reverseGone fails unless Connect answers 404 for every name within
// goneWithin: the deletes set off a rebalance, during which Connect
// answers 500 ("a rebalance is expected") or 409 for a while.
func reverseGone(ctx context.Context, api *connect.Client, names []string) error {
	deadline := time.Now().Add(goneWithin)
	for {
		var left []string
		for _, n := range names {
			_, err := api.Info(ctx, n)
			var he *connect.HTTPError
			if !errors.As(err, &he) || he.Status != 404 {
				left = append(left, fmt.Sprintf("%s (%v)", n, cmpErr(err, "exists")))
			}
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not known deleted within %s: %s", goneWithin, strings.Join(left, ", "))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// goneWithin bounds reverseGone's wait.
const goneWithin = 30 * time.Second

// reverseIdle fails unless every name is PAUSED, STOPPED or gone (404).
func reverseIdle(ctx context.Context, api *connect.Client, names []string) error {
	var busy []string
	for _, n := range names {
		s, err := api.Status(ctx, n)
		var he *connect.HTTPError
		switch {
		case errors.As(err, &he) && he.Status == 404:
		case err != nil:
			busy = append(busy, fmt.Sprintf("%s (unknown: %v)", n, err))
		case s.Connector.State != connect.Paused && s.Connector.State != connect.Stopped:
			busy = append(busy, fmt.Sprintf("%s (%s)", n, s.Connector.State))
		}
	}
	if len(busy) > 0 {
		return fmt.Errorf("not known paused or deleted: %s", strings.Join(busy, ", "))
	}
	return nil
}

func cmpErr(err error, otherwise string) string {
	if err != nil {
		return err.Error()
	}
	return otherwise
}

// reverseStart is, per DR partition, where the reverse source starts: DR's
// log end when the forward mirror stopped (failover_cuts of the run the
// plan undoes). A partition whose DR end was not read refuses it: starting
// there at the earliest offset would copy back what the primary has.
func (rb Book) reverseStart(ctx context.Context, r *runbook.Run) (map[model.TP]int64, error) {
	cut, err := rb.Store.FailoverCut(ctx, r.Plan.FailbackOf)
	if err != nil {
		return nil, fmt.Errorf("reading the cut of run #%d: %w", r.Plan.FailbackOf, err)
	}
	if len(cut) == 0 {
		return nil, fmt.Errorf("run #%d recorded no cut (its stop-mirror step predates it, or knew no partition): the reverse source would start at the earliest offset and copy back what the primary holds", r.Plan.FailbackOf)
	}
	out := make(map[model.TP]int64, len(cut))
	var unknown []string
	for _, c := range cut {
		tp := model.TP{Topic: c.RemoteTopic, Partition: c.Partition}
		if c.DREnd == nil {
			unknown = append(unknown, mm2.TPKey(tp))
			continue
		}
		out[tp] = *c.DREnd
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("the cut of run #%d does not know DR's log end of %s", r.Plan.FailbackOf, strings.Join(unknown, ", "))
	}
	return out, nil
}

// failbackEffect performs step e of a failback.
func failbackEffect(ctx context.Context, e *runbook.Execution) (any, error) {
	rb, r := e.Runbook, e.Run
	flow := rb.Config.Flow(r.Flow)
	if flow.IsClusterLink() {
		return linkFailbackEffect(ctx, e)
	}
	api := rb.Connect(flow.ConnectURL)
	if k, ok := backSteps[e.Step.Kind]; ok {
		return k.do(ctx, e.Started, e, flow, api)
	}
	return nil, fmt.Errorf("step kind %q is not a failback step", e.Step.Kind)
}

// reverseSetUp is set-up-reverse's result: the reverse connectors made and
// where their source starts. Its fields are in the order the map it
// replaced was written, so the stored bytes are the same; V is the shape's
// version (absent: the first).
type reverseSetUp struct {
	ConnectURL       string   `json:"connect_url"`
	Connectors       []string `json:"connectors"`
	DRBootstrap      string   `json:"dr_bootstrap"`
	Note             string   `json:"note,omitempty"`
	Notes            []string `json:"notes"`
	PrimaryBootstrap string   `json:"primary_bootstrap"`
	Start            string   `json:"start,omitempty"`
	StartPartitions  int      `json:"start_partitions"`
	V                int      `json:"v,omitempty"`
}

func (rb Book) setUpReverse(ctx context.Context, w audit.Written, r *runbook.Run, flow *config.Flow, api *connect.Client) (*reverseSetUp, error) {
	// Checked again: Begin's reads may be minutes old.
	if err := mm2.CheckReverseCycle(flowstate.TopicsOf(flow).Policy, forwardStates(ctx, api, flow.Connectors)); err != nil {
		return nil, err
	}
	scope, err := rb.reverseScope(ctx, r)
	if err != nil {
		return nil, err
	}
	ff := forwardFlow(flow, rb.Config)
	if ff.Inherited, err = forwardConfigs(ctx, api, flow.Connectors); err != nil {
		return nil, err
	}
	if ff.PrimaryClient, ff.DRClient, err = workerClients(rb.Config, flow, ff.Inherited); err != nil {
		return nil, err
	}
	// The workers reach the clusters where the forward connector does.
	fwd := ff.Inherited[mm2.MirrorSourceConnectorClass]
	ff.PrimaryBootstrap = cmp.Or(fwd["source.cluster.bootstrap.servers"], ff.PrimaryBootstrap)
	ff.DRBootstrap = cmp.Or(fwd["target.cluster.bootstrap.servers"], ff.DRBootstrap)
	rev, err := ff.ReverseConfigs()
	if err != nil {
		return nil, err
	}
	start := scope.startOffsets()
	res := &reverseSetUp{ConnectURL: flow.ConnectURL, Connectors: rev.Names(), Notes: rev.Notes, StartPartitions: len(start),
		PrimaryBootstrap: ff.PrimaryBootstrap, DRBootstrap: ff.DRBootstrap}
	if !scope.policy.Identity {
		res.Start = "earliest"
		if err := rb.setUpReverseFromEarliest(ctx, w, api, rev, res); err != nil {
			return res, err
		}
	} else if err := rb.setUpReverseAtCut(ctx, w, api, rev, flow.TargetAlias, start, res); err != nil {
		return res, err
	}
	// The checkpoint and heartbeat connectors need no start position.
	for _, n := range []string{rev.Checkpoint, rev.Heartbeat} {
		if _, err := effect.PutConnectorConfig(ctx, w, api, n, rev.Configs[n]); err != nil {
			return res, err
		}
	}
	if err := effect.ResumeConnector(ctx, w, api, rev.Source); err != nil {
		return res, err
	}
	return res, nil
}

// setUpReverseAtCut creates the reverse source stopped and sets its
// offsets to the cut (identity policy). A retry finds the source an
// earlier attempt created: done, if Connect's offsets show it at or past
// the cut, whatever its state says. Connect resumes asynchronously, so a
// source resumed a moment ago may still read STOPPED while it refuses
// offset changes (seen against real Connect with the console killed after
// the resume).
func (rb Book) setUpReverseAtCut(ctx context.Context, w audit.Written, api *connect.Client, rev mm2.ReverseConnectors, drAlias string, start map[model.TP]int64, res *reverseSetUp) error {
	body, err := mm2.ReverseStartOffsets(drAlias, start)
	if err != nil {
		return err
	}
	st, err := api.Status(ctx, rev.Source)
	switch {
	case err == nil && startedAtCut(ctx, api, rev.Source, drAlias, start) == nil:
		res.Note = "the source was created and set to the cut by an earlier attempt (" + string(st.Connector.State) + ")"
		return nil
	case err == nil && !st.Stopped():
		return fmt.Errorf("reverse source %s exists and is %s: %w", rev.Source, st.Connector.State, startedAtCut(ctx, api, rev.Source, drAlias, start))
	}
	if _, err := effect.CreateConnectorStopped(ctx, w, api, rev.Source, rev.Configs[rev.Source]); err != nil {
		return err
	}
	return effect.AlterConnectorOffsets(ctx, w, api, rev.Source, body)
}

// setUpReverseFromEarliest creates the reverse source stopped and resets
// its offsets (default policy): Connect keeps a deleted connector's
// offsets, so a source of the same name from an earlier failback would
// otherwise resume where that one stopped, past the records of a topic
// recreated since. A retry finds it with this config: running, it was
// resumed, which the step does only after the reset, so done; stopped, it
// is reset again. Connect applies a resume later than it answers, so a
// source resumed a moment ago may still read STOPPED and refuse the reset:
// then its status is read again until it says RUNNING (resumeSettles).
func (rb Book) setUpReverseFromEarliest(ctx context.Context, w audit.Written, api *connect.Client, rev mm2.ReverseConnectors, res *reverseSetUp) error {
	st, err := api.Status(ctx, rev.Source)
	var he *connect.HTTPError
	if errors.As(err, &he) && he.Status == 404 {
		if _, err := effect.CreateConnectorStopped(ctx, w, api, rev.Source, rev.Configs[rev.Source]); err != nil {
			return err
		}
		return effect.ResetConnectorOffsets(ctx, w, api, rev.Source)
	}
	if err != nil {
		return fmt.Errorf("reading reverse source %s: %w", rev.Source, err)
	}
	info, err := api.Info(ctx, rev.Source)
	if err != nil {
		return fmt.Errorf("reverse source %s exists (%s); reading its config: %w", rev.Source, st.Connector.State, err)
	}
	want := maps.Clone(rev.Configs[rev.Source])
	want["name"] = rev.Source
	if !maps.Equal(info.Config, want) {
		return fmt.Errorf("reverse source %s exists (%s) with another config: it is not the connector this step starts; delete it, or check who made it", rev.Source, st.Connector.State)
	}
	resumed := func(state string) error {
		res.Note = "the source was created, reset and resumed by an earlier attempt (" + state + ")"
		return nil
	}
	if !st.Stopped() {
		return resumed(string(st.Connector.State))
	}
	rerr := effect.ResetConnectorOffsets(ctx, w, api, rev.Source)
	if rerr == nil {
		return nil
	}
	deadline := time.Now().Add(resumeSettles)
	for time.Now().Before(deadline) {
		if st, err := api.Status(ctx, rev.Source); err == nil && !st.Stopped() {
			return resumed(string(st.Connector.State))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	return rerr
}

// resumeSettles bounds how long a status still saying STOPPED after Connect
// refused an offsets change is read again.
const resumeSettles = 15 * time.Second

// forwardConfigs reads the forward connectors' configs, keyed by class, for
// the settings the reverse ones inherit (mm2.InheritedKeys: replication
// factors, intervals). A config that cannot be read fails the step: the
// reverse connectors would otherwise get MM2's defaults, which a cluster
// with fewer than 3 brokers refuses.
func forwardConfigs(ctx context.Context, api *connect.Client, names []string) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	for _, n := range names {
		info, err := api.Info(ctx, n)
		if err != nil {
			return nil, fmt.Errorf("reading forward connector %s's config (the reverse connectors repeat its replication factors and intervals): %w", n, err)
		}
		if c := info.Config["connector.class"]; c != "" && out[c] == nil {
			out[c] = info.Config
		}
	}
	return out, nil
}

// workerClients are the client settings the Connect workers use for the
// primary and for DR, from the forward MirrorSourceConnector's config:
// its source.cluster.* (the primary) and target.cluster.* (DR) keys, the
// prefix, bootstrap.servers and alias aside (the reverse configs set
// those). mm2.ReverseConfigs puts them back swapped, and under
// producer.override.* for the cluster each connector writes to. Secrets
// are usually the workers' config-provider references (${file:...}),
// which Connect returns unresolved; they are passed on as they are and
// never written to the audit log or a page. A cluster the console reaches
// with TLS or SASL whose forward settings name no security.protocol is
// refused: the reverse connectors would try it in plaintext.
func workerClients(cfg *config.Config, flow *config.Flow, inherited map[string]map[string]string) (primary, dr map[string]string, err error) {
	fwd := inherited[mm2.MirrorSourceConnectorClass]
	pick := func(prefix string) map[string]string {
		out := map[string]string{}
		for k, v := range fwd {
			if rest, ok := strings.CutPrefix(k, prefix); ok && rest != "bootstrap.servers" && rest != "alias" {
				out[rest] = v
			}
		}
		return out
	}
	primary, dr = pick("source.cluster."), pick("target.cluster.")
	var missing []string
	for _, c := range []struct {
		name, prefix string
		got          map[string]string
	}{{flow.Source, "source.cluster.", primary}, {flow.Target, "target.cluster.", dr}} {
		if cl := cfg.Clusters[c.name]; cl != nil && (cl.TLS != nil || cl.SASL != nil) && c.got["security.protocol"] == "" {
			missing = append(missing, fmt.Sprintf("cluster %s has TLS or SASL settings, but the forward MirrorSourceConnector sets no %ssecurity.protocol", c.name, c.prefix))
		}
	}
	if len(missing) > 0 {
		return nil, nil, fmt.Errorf("%s: the reverse connectors would reach it in plaintext; give the forward connector the workers' client settings for it (they are repeated, swapped)", strings.Join(missing, "; "))
	}
	return primary, dr, nil
}

// connectNext reads connector name's committed MM2 source offsets for
// cluster alias: per partition, the next offset it will copy.
func connectNext(ctx context.Context, api *connect.Client, name, alias string) (map[model.TP]int64, error) {
	offs, err := api.Offsets(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("reading the offsets of %s: %w", name, err)
	}
	out := map[model.TP]int64{}
	for _, o := range offs {
		key, _ := json.Marshal([]any{name, o.Partition})
		c, err := mm2.DecodeConnectOffset(key, o.Offset)
		if err != nil || c.Cluster != alias {
			continue // not an MM2 source partition of that cluster
		}
		out[model.TP{Topic: c.Topic, Partition: c.Partition}] = c.LastOffset + 1
	}
	return out, nil
}

// startedAtCut fails unless the source's offsets are at or past start for
// every partition that had records at the cut.
func startedAtCut(ctx context.Context, api *connect.Client, name, alias string, start map[model.TP]int64) error {
	next, err := connectNext(ctx, api, name, alias)
	if err != nil {
		return err
	}
	var behind []string
	for tp, s := range start {
		if n, ok := next[tp]; s > 0 && (!ok || n < s) {
			behind = append(behind, mm2.TPKey(tp))
		}
	}
	if len(behind) > 0 {
		slices.Sort(behind)
		return fmt.Errorf("its offsets are not at the cut for %s: it is not the connector this step starts; delete it, or check who made it", strings.Join(behind, ", "))
	}
	return nil
}

// ReverseProgress is how far the reverse flow has come: per DR partition,
// DR's log end now and the next offset the reverse source will copy
// (Connect's committed offset + 1; Connect commits only what the primary
// acknowledged).
type ReverseProgress struct {
	Running bool
	States  map[string]string
	// Ends are DR's log ends read, per partition of the flow's topics.
	Ends map[model.TP]int64
	// Behind are the partitions whose records since the cut are not all
	// committed, with DR's end and the reverse position ("?" unknown).
	Behind []string
	// Uncopyable are the DR partitions written since the failover that
	// the reverse flow never copies (reverseScope.grownPastCut): no wait
	// helps.
	Uncopyable []string
}

// CaughtUp is true only when every figure is known and none is behind.
func (p ReverseProgress) CaughtUp() bool {
	return p.Running && len(p.Behind) == 0 && len(p.Uncopyable) == 0
}

func (p ReverseProgress) String() string {
	if len(p.Uncopyable) > 0 {
		return fmt.Sprintf("connectors %v; behind: %v; never copied back: %v", p.States, p.Behind, p.Uncopyable)
	}
	return fmt.Sprintf("connectors %v; behind: %v", p.States, p.Behind)
}

// reverseFigures are what the reverse flow looks like now: its
// connectors, where its source started (the cut), DR's log ends and the
// source's committed next offsets, per DR partition.
type reverseFigures struct {
	States  map[string]string
	Running bool // every connector and task RUNNING
	Scope   reverseScope
	Ends    map[model.TP]int64
	Next    map[model.TP]int64
}

func (rb Book) readReverse(ctx context.Context, r *runbook.Run) (reverseFigures, error) {
	flow := rb.Config.Flow(r.Flow)
	api := rb.Connect(flow.ConnectURL)
	f := reverseFigures{Running: true, States: map[string]string{}}
	names := reverseNames(flow)
	for _, n := range names {
		s, err := api.Status(ctx, n)
		if err != nil {
			return f, fmt.Errorf("reading the status of %s: %w", n, err)
		}
		f.States[n] = string(s.Connector.State)
		ok := s.Connector.State == connect.Running && len(s.Tasks) > 0
		for _, t := range s.Tasks {
			ok = ok && t.State == connect.Running
		}
		f.Running = f.Running && ok
	}
	var err error
	if f.Scope, err = rb.reverseScope(ctx, r); err != nil {
		return f, err
	}
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	topics, err := rb.drTopics(rctx, r, f.Scope)
	if err != nil {
		return f, err
	}
	if f.Ends, err = rb.drEnds(rctx, r.Flow, topics); err != nil {
		return f, err
	}
	f.Next, err = connectNext(ctx, api, names[0], flow.TargetAlias)
	return f, err
}

// drEnds reads DR's log end of every partition of topics.
func (rb Book) drEnds(ctx context.Context, flow string, topics []string) (map[model.TP]int64, error) {
	_, dr := rb.Monitor.Clients(flow)
	bounds, err := kafka.ListBounds(ctx, dr, topics...)
	if err != nil {
		return nil, fmt.Errorf("reading DR's log ends: %w", err)
	}
	ends := make(map[model.TP]int64, len(bounds))
	for tp, b := range bounds {
		ends[tp] = b.End
	}
	return ends, nil
}

// from is where partition tp's records written in DR since the failover
// start (reverseScope.copies), and false for one the reverse flow does
// not copy.
func (f reverseFigures) from(tp model.TP) (int64, bool) { return f.Scope.copies(tp) }

// reverseProgress reads it; an error is "not caught up".
func (rb Book) reverseProgress(ctx context.Context, r *runbook.Run, wantRunning bool) (ReverseProgress, error) {
	f, err := rb.readReverse(ctx, r)
	p := ReverseProgress{Running: f.Running || !wantRunning, States: f.States}
	if err != nil {
		return p, err
	}
	tps := slices.Collect(maps.Keys(f.Ends))
	mm2.SortTPs(tps)
	var tails []kafka.Range
	p.Ends = f.Ends
	p.Uncopyable = f.Scope.grownPastCut(f.Ends)
	for _, tp := range tps {
		end := f.Ends[tp]
		from, copied := f.from(tp)
		n, ok := f.Next[tp]
		switch {
		case !copied || end <= from:
			continue // nothing written there since the failover
		case ok && n >= end:
			continue
		case ok && end-n <= markerTail:
			tails = append(tails, kafka.Range{TP: tp, From: n, To: end})
			continue
		}
		pos := "?"
		if ok {
			pos = fmt.Sprint(n)
		}
		p.Behind = append(p.Behind, fmt.Sprintf("%s DR end %d, reverse at %s", mm2.TPKey(tp), end, pos))
	}
	behind, err := rb.dataIn(ctx, rb.Config.Flow(r.Flow), tails)
	if err != nil {
		return p, err
	}
	p.Behind = append(p.Behind, behind...)
	unsynced, err := rb.unsynced(ctx, r, f)
	if err != nil {
		return p, err
	}
	p.Behind = append(p.Behind, unsynced...)
	return p, nil
}

// unsynced names the partitions the reverse flow has copied records of
// whose offset syncs the console has not ingested yet: MM2 writes one for
// the first record it copies, and translate-group-back needs them to move
// a position inside the log. stop-reverse ends the watch that ingests
// them, so the wait holds until they are in.
func (rb Book) unsynced(ctx context.Context, r *runbook.Run, f reverseFigures) ([]string, error) {
	var need []model.TP
	for tp, n := range f.Next {
		if from, copied := f.from(tp); copied && n > from {
			need = append(need, tp)
		}
	}
	if len(need) == 0 {
		return nil, nil
	}
	x, err := rb.reverseIndex(ctx, r, f.Scope)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, tp := range need {
		if _, ok := x.Newest(tp); !ok {
			out = append(out, mm2.TPKey(tp)+": no offset sync of the reverse flow ingested yet")
		}
	}
	slices.Sort(out)
	return out, nil
}

// markerTail is how far below DR's log end a reverse position may be and
// still be read for records: the offsets past a transaction's last record
// are its commit or abort marker, which MM2 does not copy, so a reverse
// source at a transactional tail never reaches the log end.
const markerTail = 16

// dataIn reads the DR ranges tails and says which hold a data record (the
// reverse flow has not copied it yet); only markers there is caught up.
func (rb Book) dataIn(ctx context.Context, flow *config.Flow, tails []kafka.Range) ([]string, error) {
	found, err := rb.firstRecords(ctx, flow, tails)
	if err != nil {
		return nil, fmt.Errorf("reading DR's last offsets for records not yet copied back: %w", err)
	}
	var out []string
	for _, t := range tails {
		if off, ok := found[t.TP]; ok {
			out = append(out, fmt.Sprintf("%s DR end %d, reverse at %d (a record at %d)", mm2.TPKey(t.TP), t.To, t.From, off))
		}
	}
	return out, nil
}

// firstRecords reads the DR ranges tails: per partition, the offset of the
// first data record in its range; a range of markers only is absent.
func (rb Book) firstRecords(ctx context.Context, flow *config.Flow, tails []kafka.Range) (map[model.TP]int64, error) {
	found := map[model.TP]int64{}
	if len(tails) == 0 {
		return found, nil
	}
	opts, err := kafka.ClientOptions(flow.Target, rb.Config.Clusters[flow.Target], rb.Log)
	if err != nil {
		return nil, err
	}
	err = kafka.ReadRecords(ctx, opts, tails, kafka.ReadLimits{MaxRecords: int64(len(tails) * markerTail), Idle: 10 * time.Second}, func(r *kafka.Record) error {
		tp := model.TP{Topic: r.Topic, Partition: r.Partition}
		if _, seen := found[tp]; !seen {
			found[tp] = r.Offset
		}
		return nil
	}, nil)
	if err != nil {
		return nil, err
	}
	return found, nil
}

func topicSet(m map[model.TP]int64) map[string]bool {
	out := map[string]bool{}
	for tp := range m {
		out[tp.Topic] = true
	}
	return out
}

func (rb Book) caughtUpRule(ctx context.Context, r *runbook.Run) runbook.RuleResult {
	rule := runbook.RuleResult{Name: "the reverse flow has committed to the primary every record DR holds"}
	p, err := rb.reverseProgress(ctx, r, false)
	switch {
	case err != nil:
		rule.Evidence = "unknown: " + err.Error()
	case len(p.Behind) > 0 || len(p.Uncopyable) > 0:
		rule.Evidence = p.String()
	default:
		rule.OK, rule.Evidence = true, p.String()
	}
	return rule
}

// copiesUnchangedRule (default policy) refuses while DR's copies of the
// primary's topics hold anything written after the failover.
func (rb Book) copiesUnchangedRule(ctx context.Context, r *runbook.Run, scope reverseScope) runbook.RuleResult {
	rule := runbook.RuleResult{Name: "nothing was written in DR into its copies of the primary's topics after the failover (the default policy never copies them back)"}
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ends, err := rb.drEnds(rctx, r.Flow, slices.Sorted(maps.Keys(scope.cutTopics)))
	if err != nil {
		rule.Evidence = "unknown: " + err.Error()
		return rule
	}
	if grown := scope.grownPastCut(ends); len(grown) > 0 {
		rule.Evidence = strings.Join(grown, "; ")
		return rule
	}
	rule.OK, rule.Evidence = true, fmt.Sprintf("%d partition(s) at the cut", len(ends))
	return rule
}

// waitReverse polls the reverse flow until it caught up; at the timeout
// the step fails with the last figures.
func (rb Book) waitReverse(ctx context.Context, r *runbook.Run, progress func(string)) (any, error) {
	timeout := rb.reverseCatchUp()
	deadline := time.Now().Add(timeout)
	for {
		p, err := rb.reverseProgress(ctx, r, true)
		if err == nil && p.CaughtUp() {
			return reverseCaughtUp{Connectors: p.States, CaughtUp: true}, nil
		}
		if err == nil && len(p.Uncopyable) > 0 {
			return reverseUncopyable{Connectors: p.States, NeverCopiedBack: p.Uncopyable},
				fmt.Errorf("records were written in DR where the reverse flow never copies them: %s; return them to the primary by hand (or move them into DR's own topics) before failing back", strings.Join(p.Uncopyable, ", "))
		}
		why := p.String()
		if err != nil {
			why = err.Error()
		}
		if progress != nil {
			progress("reverse flow not caught up: " + why)
		}
		if time.Now().After(deadline) {
			return reverseBehind{Connectors: p.States, Behind: p.Behind}, fmt.Errorf("the reverse flow did not catch up within %s: %s", timeout, why)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// wait-reverse's results: caught up (reverseCaughtUp), records the
// reverse flow never copies (reverseUncopyable), or what was behind when
// it gave up (reverseBehind); stop-reverse's when it finds the flow not
// caught up (reverseNotCaughtUp). Their fields are in the order the maps
// they replaced were written, so the stored bytes are the same; V is the
// shape's version (absent: the first).
type (
	reverseCaughtUp struct {
		CaughtUp   bool              `json:"caught_up"`
		Connectors map[string]string `json:"connectors"`
		V          int               `json:"v,omitempty"`
	}
	reverseUncopyable struct {
		Connectors      map[string]string `json:"connectors"`
		NeverCopiedBack []string          `json:"never_copied_back"`
		V               int               `json:"v,omitempty"`
	}
	reverseBehind struct {
		Behind     []string          `json:"behind"`
		Connectors map[string]string `json:"connectors"`
		V          int               `json:"v,omitempty"`
	}
	reverseNotCaughtUp struct {
		Behind          []string `json:"behind"`
		NeverCopiedBack []string `json:"never_copied_back"`
		V               int      `json:"v,omitempty"`
	}
)

// stopReverse pauses the reverse connectors so the figures stand still,
// checks they caught up and records the primary's log ends, where the
// forward flow restarts. It deletes nothing: restart-forward deletes them
// once those ends are on record (this step's result), so every step can be
// retried as is. A paused connector is harmless while the forward flow is
// stopped; restart-forward refuses to resume it while they exist.
func (rb Book) stopReverse(ctx context.Context, w audit.Written, r *runbook.Run, flow *config.Flow, api *connect.Client) (any, error) {
	names := reverseNames(flow)
	for _, n := range names {
		if err := effect.PauseConnector(ctx, w, api, n); err != nil {
			return nil, err
		}
	}
	p, err := rb.reverseProgress(ctx, r, false)
	if err != nil {
		return nil, err
	}
	if len(p.Behind) > 0 || len(p.Uncopyable) > 0 {
		return reverseNotCaughtUp{Behind: p.Behind, NeverCopiedBack: p.Uncopyable}, fmt.Errorf("the reverse flow has not caught up (connectors paused): %s", p)
	}
	scope, err := rb.reverseScope(ctx, r)
	if err != nil {
		return nil, err
	}
	ends, err := rb.primaryEnds(ctx, r.Flow, scope.copiesOnPrimary(p.Ends)...)
	if err != nil {
		return nil, err
	}
	drEnds := make(map[string]int64, len(p.Ends))
	for tp, e := range p.Ends {
		drEnds[mm2.TPKey(tp)] = e
	}
	return reverseStopped{Paused: names, Connectors: p.States, PrimaryEnds: ends, DREnds: drEnds}, nil
}

// reverseStopped is stop-reverse's result: DR's log ends, where the
// reverse flow stopped, and the primary's, where the forward flow
// restarts; later steps read it back typed (recordedEnds). Its fields
// are in the order the map it replaced was written, so the stored bytes
// are the same. V is the shape's version: absent is the first, the one
// every earlier binary wrote; a changed shape writes a higher one.
type reverseStopped struct {
	Connectors  map[string]string `json:"connectors"`
	DREnds      map[string]int64  `json:"dr_ends"`
	Paused      []string          `json:"paused"`
	PrimaryEnds map[string]int64  `json:"primary_ends"`
	V           int               `json:"v,omitempty"`
}

// primaryEnds reads the primary's log end of every partition of the
// flow's source topics and of extra, keyed by "topic-partition".
func (rb Book) primaryEnds(ctx context.Context, flow string, extra ...string) (map[string]int64, error) {
	snap := rb.Monitor.Snapshot(flow)
	if snap == nil || len(snap.Partitions) == 0 {
		return nil, errors.New("the console knows no mirrored partition of this flow")
	}
	topics := slices.Clone(extra)
	for _, p := range snap.Partitions {
		if !slices.Contains(topics, p.Topic.String()) {
			topics = append(topics, p.Topic.String())
		}
	}
	primary, _ := rb.Monitor.Clients(flow)
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	b, err := kafka.ListBounds(rctx, primary, topics...)
	if err != nil {
		return nil, fmt.Errorf("reading the primary's log ends: %w", err)
	}
	out := make(map[string]int64, len(b))
	for tp, lb := range b {
		out[mm2.TPKey(tp)] = lb.End
	}
	return out, nil
}

// restartForward sets the forward MirrorSourceConnector to the primary's
// ends stop-reverse recorded and resumes every forward connector. Records
// the reverse flow copied to the primary lie below those ends, so they are
// not copied to DR a second time; records written to the primary after
// stop-reverse are above them and are mirrored.
func (rb Book) restartForward(ctx context.Context, w audit.Written, r *runbook.Run, flow *config.Flow, api *connect.Client) (any, error) {
	stopped, err := recordedEnds(r)
	if err != nil {
		return nil, err
	}
	ends, err := stopped.primary()
	if err != nil {
		return nil, err
	}
	// Only the forward source's own partitions: under the default policy
	// the ends also hold the reverse flow's "<dr>.<topic>" copies, which
	// the forward flow never copies (a cycle).
	policy := flowstate.TopicsOf(flow).Policy
	maps.DeleteFunc(ends, func(tp model.TP, _ int64) bool { return policy.IsCycle(flow.TargetAlias, tp.Topic) })
	// The reverse connectors go first: under the identity policy one left
	// behind, even paused, is a resume away from a cycle.
	names := reverseNames(flow)
	for _, n := range names {
		if _, err := effect.DeleteConnector(ctx, w, api, n); err != nil {
			return nil, err
		}
	}
	if err := reverseGone(ctx, api, names); err != nil {
		return nil, fmt.Errorf("reverse connectors: %w", err)
	}
	source, err := forwardSource(ctx, api, flow.Connectors)
	if err != nil {
		return nil, err
	}
	res := &forwardRestarted{Source: source, StartPartitions: len(ends)}
	st, err := api.Status(ctx, source)
	switch atEnds := err == nil && startedAtCut(ctx, api, source, flow.SourceAlias, ends) == nil; {
	case err != nil:
		return res, err
	case atEnds:
		// An earlier attempt set it (and perhaps resumed it: Connect may
		// still say STOPPED for a moment, and refuse offset changes).
		res.Note = "the source was set to the ends by an earlier attempt (" + string(st.Connector.State) + ")"
	case st.Stopped():
		body, err := mm2.ReverseStartOffsets(flow.SourceAlias, ends) // the same body shape: cluster = the copying side
		if err != nil {
			return res, err
		}
		if err := effect.AlterConnectorOffsets(ctx, w, api, source, body); err != nil {
			return res, err
		}
	default:
		return res, fmt.Errorf("forward source %s is %s: %w", source, st.Connector.State, startedAtCut(ctx, api, source, flow.SourceAlias, ends))
	}
	for _, n := range flow.Connectors {
		if err := effect.ResumeConnector(ctx, w, api, n); err != nil {
			return res, err
		}
	}
	return res, nil
}

// forwardRestarted is restart-forward's result: the forward source set to
// the ends stop-reverse recorded. Its fields are in the order the map it
// replaced was written, so the stored bytes are the same; V is the
// shape's version (absent: the first).
type forwardRestarted struct {
	Note            string `json:"note,omitempty"`
	Source          string `json:"source"`
	StartPartitions int    `json:"start_partitions"`
	V               int    `json:"v,omitempty"`
}

// recordedEnds is what run r's stop-reverse recorded.
func recordedEnds(r *runbook.Run) (reverseStopped, error) {
	var res reverseStopped
	if err := stepResult(r, KindStopReverse, &res); err != nil {
		return res, fmt.Errorf("the log ends stop-reverse records are not on record: %w", err)
	}
	if res.V > 0 {
		return res, fmt.Errorf("stop-reverse's result is of version %d, written by a newer drconsole", res.V)
	}
	return res, nil
}

// dr is DR's log ends stop-reverse recorded.
func (s reverseStopped) dr() (map[model.TP]int64, error) { return tpEnds(s.DREnds, "dr_ends") }

// primary is the primary's log ends stop-reverse recorded.
func (s reverseStopped) primary() (map[model.TP]int64, error) {
	return tpEnds(s.PrimaryEnds, "primary_ends")
}

func tpEnds(ends map[string]int64, name string) (map[model.TP]int64, error) {
	if len(ends) == 0 {
		return nil, fmt.Errorf("stop-reverse's result holds no %s", name)
	}
	out := make(map[model.TP]int64, len(ends))
	for k, v := range ends {
		tp, err := mm2.ParseTPKey(k)
		if err != nil {
			return nil, err
		}
		out[tp] = v
	}
	return out, nil
}

// forwardSource is the forward connector whose class is MM2's source.
func forwardSource(ctx context.Context, api *connect.Client, names []string) (string, error) {
	for _, n := range names {
		info, err := api.Info(ctx, n)
		if err != nil {
			return "", fmt.Errorf("reading forward connector %s: %w", n, err)
		}
		if info.Config["connector.class"] == mm2.MirrorSourceConnectorClass {
			return n, nil
		}
	}
	return "", fmt.Errorf("none of the forward connectors %v is a MirrorSourceConnector", names)
}

// previewFailback says what step i of failback r will send, and reads the
// figures it will judge; it changes nothing.
func (rb Book) previewFailback(ctx context.Context, r *runbook.Run, i int) ([]string, error) {
	flow := rb.Config.Flow(r.Flow)
	if errs := failbackProblems(rb.Config, r.Plan); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if flow.IsClusterLink() {
		return rb.previewLinkFailback(ctx, r, i)
	}
	rev, err := forwardFlow(flow, rb.Config).ReverseConfigs()
	if err != nil {
		return nil, err
	}
	on := " on " + flow.ConnectURL
	if k, ok := backSteps[r.Plan.Steps[i].Kind]; ok {
		return k.preview(ctx, rb.Runbook, r, i, flow, rev, on)
	}
	return nil, nil
}

// groupBack is the translate-group-back rule for group: per partition of
// the flow's topics where the DR group has an offset, the primary offset
// is the primary's end stop-reverse recorded when the DR group sits at
// DR's end recorded then (backPositions). Every DR record is then on the
// primary below that end (the reverse flow caught up, the writers were
// stopped), so the group resumes exactly after them; it skips the records
// lost to DR, which it never saw (the lost-records page shows them).
func (rb Book) groupBack(ctx context.Context, r *runbook.Run, group string) (*back, error) {
	_, dr := rb.Monitor.Clients(r.Flow)
	committed, err := groupOffsets(ctx, dr, group)
	if err != nil {
		return nil, fmt.Errorf("DR: %w", err)
	}
	b, err := rb.backPositions(ctx, r, "DR group", committed)
	if err != nil {
		return nil, err
	}
	switch {
	case len(b.Refused) > 0:
		return b, fmt.Errorf("group %s cannot be moved back on %s", group, strings.Join(b.Refused, ", "))
	case len(b.Primary) == 0:
		return b, fmt.Errorf("group %s has no committed offset in DR on the flow's topics", group)
	}
	return b, nil
}

// back is where DR positions (a group's offsets, a savepoint's splits)
// go on the primary under the translate-back rule.
type back struct {
	Primary map[model.TP]int64    // the primary offset of each position moved back
	From    map[model.TP]model.TP // the DR partition each of Primary's came from
	// How says, for a position moved through syncs, which and what it
	// re-reads (the same line as in Translated); empty at DR's end.
	How map[model.TP]string
	// Translated names the positions inside the log moved back through
	// the reverse flow's syncs (failback_translate.go), with their bounds.
	Translated []string
	Refused    []string // positions that cannot be moved, named with their figures
	Absent     []string // partitions of the flow with no position
	Outside    []string // positions on partitions the flow does not mirror
}

// backPositions applies the translate-back rule to positions at in DR:
// a position at DR's log end recorded by stop-reverse, or short of it by
// at most markerTail offsets with no data record between, goes to the
// primary's log end recorded then, exactly. A position inside the log goes
// through this failback's reverse offset syncs (translateInside), or,
// among the records the forward flow copied, through the forward flow's
// read backwards (translateForwardBack). what names the positions in the
// figures ("DR group").
func (rb Book) backPositions(ctx context.Context, r *runbook.Run, what string, at map[model.TP]int64) (*back, error) {
	stopped, err := recordedEnds(r)
	if err != nil {
		return nil, err
	}
	drEnds, err := stopped.dr()
	if err != nil {
		return nil, err
	}
	primaryEnds, err := stopped.primary()
	if err != nil {
		return nil, err
	}
	scope, err := rb.reverseScope(ctx, r)
	if err != nil {
		return nil, err
	}
	b := &back{Primary: map[model.TP]int64{}, From: map[model.TP]model.TP{}, How: map[model.TP]string{}}
	var tails []kafka.Range
	var inside, forward []insideLog
	// inLog sorts a position inside DR's log: records the reverse flow
	// copied back go through its syncs, records the forward flow had
	// copied to DR (below the cut, or in a forward copy) through the
	// forward flow's, read backwards.
	inLog := func(in insideLog) {
		if from, copied := scope.copies(in.tp); !copied || in.pos < from {
			forward = append(forward, in)
			return
		}
		inside = append(inside, in)
	}
	for tp, end := range drEnds {
		pos, ok := at[tp]
		ptp := scope.primaryOf(tp)
		pe, known := primaryEnds[ptp]
		switch {
		case !ok:
			b.Absent = append(b.Absent, mm2.TPKey(tp))
		case pos == 0 && end == 0 && !known:
			// Nothing was ever written there, so the reverse flow made no
			// copy to commit to.
			b.Absent = append(b.Absent, mm2.TPKey(tp))
		case known && pos >= 0 && pos < end && end-pos <= markerTail:
			// Short of the end only by transaction markers? Consumers
			// that commit the last record they returned + 1 (franz-go,
			// Flink's KafkaSource) stop below a commit marker; Java's
			// consumer commits its position past it. Read below.
			tails = append(tails, kafka.Range{TP: tp, From: pos, To: end})
			b.Primary[ptp], b.From[ptp] = pe, tp
		case known && pos >= 0 && pos < end:
			inLog(insideLog{tp: tp, primaryTP: ptp, pos: pos, drEnd: end, primaryTo: pe})
		case pos != end || !known:
			b.Refused = append(b.Refused, fmt.Sprintf("%s (%s at %d, DR's end was %d)", mm2.TPKey(tp), what, pos, end))
		default:
			b.Primary[ptp], b.From[ptp] = pe, tp
		}
	}
	for tp := range at {
		if _, ok := drEnds[tp]; !ok {
			b.Outside = append(b.Outside, mm2.TPKey(tp))
		}
	}
	if len(tails) > 0 {
		found, err := rb.firstRecords(ctx, rb.Config.Flow(r.Flow), tails)
		if err != nil {
			return nil, fmt.Errorf("reading DR between the %s's offsets and DR's end: %w", what, err)
		}
		for _, t := range tails {
			if off, ok := found[t.TP]; ok {
				ptp := scope.primaryOf(t.TP)
				delete(b.Primary, ptp)
				delete(b.From, ptp)
				why := fmt.Sprintf("; a record at %d it has not consumed", off)
				inLog(insideLog{tp: t.TP, primaryTP: ptp, pos: t.From, drEnd: t.To, primaryTo: primaryEnds[ptp], why: why})
			}
		}
	}
	if err := rb.translateInside(ctx, r, scope, what, b, inside); err != nil {
		return nil, err
	}
	if err := rb.translateForwardBack(ctx, r, what, b, forward); err != nil {
		return nil, err
	}
	slices.Sort(b.Translated)
	slices.Sort(b.Refused)
	slices.Sort(b.Absent)
	slices.Sort(b.Outside)
	return b, nil
}

func groupOffsets(ctx context.Context, client *kafka.Client, group string) (map[model.TP]int64, error) {
	out, err := kafka.GroupCommitted(ctx, client, group)
	if err != nil {
		return nil, fmt.Errorf("reading the offsets of group %s: %w", group, err)
	}
	return out, nil
}

// translateGroupBack writes the primary group's current offsets to the
// audit log (for undo by hand: the group-change store is DR's), then
// commits the translated ones. A retry translates the same recorded ends
// again and commits the same offsets.
func (rb Book) translateGroupBack(ctx context.Context, w audit.Written, r *runbook.Run, group string, who runbook.Actor) (any, error) {
	b, err := rb.groupBack(ctx, r, group)
	if err != nil {
		var absent []string
		if b != nil {
			absent = b.Absent
		}
		return groupBackRefused{NotCommittedInDR: absent}, err
	}
	offsets, notInDR := b.Primary, b.Absent
	primary, _ := rb.Monitor.Clients(r.Flow)
	before, err := groupOffsets(ctx, primary, group)
	if err != nil {
		return nil, fmt.Errorf("primary: %w", err)
	}
	keyed := func(m map[model.TP]int64) map[string]int64 {
		out := make(map[string]int64, len(m))
		for tp, v := range m {
			out[mm2.TPKey(tp)] = v
		}
		return out
	}
	if err := rb.Audit.Record(ctx, who, audit.FailbackGroupBefore, runbook.RunSubject(r.ID), map[string]any{"group": group, "primary_offsets": keyed(before), "applying": keyed(offsets)}); err != nil {
		return nil, fmt.Errorf("the primary group's current offsets could not be written to the audit log, so nothing is committed: %w", err)
	}
	if err := effect.CommitPrimaryGroup(ctx, w, primary, group, offsets); err != nil {
		return nil, err
	}
	return groupMovedBack{Group: group, Committed: keyed(offsets), Previous: keyed(before), NotCommittedInDR: notInDR,
		TranslatedInsideLog: b.Translated}, nil
}

// translate-group-back's results: the offsets it committed on the
// primary and those it replaced (groupMovedBack), or the partitions the
// group has no DR offset for when it refused (groupBackRefused). Their
// fields are in the order the maps they replaced were written, so the
// stored bytes are the same; V is the shape's version (absent: the first).
type (
	groupMovedBack struct {
		Committed           map[string]int64 `json:"committed"`
		Group               string           `json:"group"`
		NotCommittedInDR    []string         `json:"not_committed_in_dr"`
		Previous            map[string]int64 `json:"previous"`
		TranslatedInsideLog []string         `json:"translated_inside_log"`
		V                   int              `json:"v,omitempty"`
	}
	groupBackRefused struct {
		NotCommittedInDR []string `json:"not_committed_in_dr"`
		V                int      `json:"v,omitempty"`
	}
)
