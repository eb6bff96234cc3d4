package failback

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/clusterlink"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/demo"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/runbook/internal/effect"
	"github.com/drconsole/drconsole/runbook/runbooktest"
	"github.com/drconsole/drconsole/storage"
)

// linkFailedOver is a console with Cluster Linking flow "link" (payments
// with 2 partitions, refunds with 1) on the stand-in, whose primary REST
// API is configured, after an approved failover of its mirrors completed.
func linkFailedOver(t *testing.T) (*runbooktest.Env, *demo.ClusterLinkStandIn) {
	t.Helper()
	ctx := context.Background()
	link, err := demo.StartClusterLinkStandIn("dr-cluster", "dr-link", map[string]int{"payments": 2, "refunds": 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(link.Close)
	link.SetPendingStopped(200 * time.Millisecond)
	link.SetLastFetchOffset("payments", 0, 100)
	link.SetLastFetchOffset("payments", 1, 80)
	link.SetLastFetchOffset("refunds", 0, 7)
	e := runbooktest.NewEnv(t, 1, &config.Flow{Name: "link", Kind: "cluster-link", Source: "primary", Target: "dr",
		ClusterLink: &config.ClusterLink{RestURL: link.URL, ClusterID: "dr-cluster", Link: "dr-link",
			Primary: &config.ClusterLink{RestURL: link.URL, ClusterID: demo.ClusterLinkSourceID}}})
	id := e.Approved(t, ctx, runbook.Plan{Flow: "link", Steps: []runbook.Step{{Kind: failover.KindFailoverMirrors}}})
	if err := linkStep(ctx, e, id, 0); err != nil {
		t.Fatal(err)
	}
	if a, err := failover.ActiveSideOf(ctx, e.Store, "link"); err != nil || a.Side != model.SideDR {
		t.Fatalf("after the failover: %+v %v", a, err)
	}
	return e, link
}

// linkStep begins and runs step idx of run id of flow "link" as alice,
// turning a simulated crash (a panic from the crash hook) into an error.
func linkStep(ctx context.Context, e *runbooktest.Env, id int64, idx int) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = v.(error)
		}
	}()
	x, err := e.RB.Begin(ctx, runbooktest.Alice, id, idx, "link", "")
	if err != nil {
		return err
	}
	return x.Perform(ctx)
}

// realActions are the stand-in's actions that were not dry runs.
func realActions(link *demo.ClusterLinkStandIn) []string {
	var out []string
	for _, a := range link.State().Actions {
		if !a.ValidateOnly {
			out = append(out, a.Action+" "+strings.Join(a.Topics, ","))
		}
	}
	return out
}

// A Cluster Linking failback through the runbook, against the stand-in:
// the dry run's truncation is shown and stated, truncate-and-restore goes
// to the primary, the reverse flow is watched from the primary's REST API,
// the wait ends only at zero lag, a lagging reverse is refused, and after
// reverse-and-start DR's topics are mirrors again and the primary is the
// active side. A console crashed at every step boundary sends each action
// once.
// Serial against the other tests (it calls newRunner), but its two runs
// may share the process: each crash is followed by a fresh identity, which
// never matches a step either run left running.
func TestLinkFailbackRun(t *testing.T) {
	for _, unlist := range []bool{false, true} {
		t.Run(map[bool]string{false: "stopped mirror stays listed", true: "stopped mirror unlisted once restored from"}[unlist], func(t *testing.T) {
			t.Parallel()
			linkFailbackRun(t, unlist)
		})
	}
}

func linkFailbackRun(t *testing.T, unlist bool) {
	e, link := linkFailedOver(t)
	link.SetUnlistRestored(unlist)
	ctx := context.Background()
	e.RB.ReverseCatchUp, e.RB.SettleWait = 20*time.Second, 300*time.Millisecond

	// What the plan must be.
	if _, err := e.RB.Create(ctx, runbooktest.Alice, FailbackPlan("link"), "x"); err == nil || !strings.Contains(err.Error(), "truncate-and-restore-primary") {
		t.Fatalf("the MM2 failback's steps on a Cluster Linking flow: %v", err)
	}
	noPrimary := *e.Cfg.Flow("link")
	cl := *noPrimary.ClusterLink
	cl.Primary, noPrimary.ClusterLink = nil, &cl
	if why := linkFailbackProblems(&noPrimary, LinkFailbackPlan("link", false)); len(why) != 1 || !strings.Contains(why[0], "cluster_link.primary") {
		t.Fatalf("no primary REST API: %v", why)
	}

	link.SetTruncatable("payments", []int64{3, 0})
	id := e.Approved(t, ctx, LinkFailbackPlan("link", false))
	r, _ := e.RB.Get(ctx, id)
	pv := e.RB.Preview(ctx, r)
	if got := strings.Join(pv[0].Lines, "\n"); pv[0].Err != "" || !strings.Contains(got, "3 record(s) the primary holds beyond DR's copy will be deleted (payments-0: 3 record(s) from offset 100)") ||
		!strings.Contains(got, "/v3/clusters/"+demo.ClusterLinkSourceID+"/links/dr-link/mirrors:truncate-and-restore") {
		t.Fatalf("preview of the truncate-and-restore: %v %s", pv[0].Lines, pv[0].Err)
	}
	if len(realActions(link)) != 1 { // the failover's
		t.Fatalf("the preview changed something: %v", realActions(link))
	}

	crashed := errors.New("crash")
	crashAt := func(point string) {
		e.RB.CrashHook = func(p string) {
			if p == point {
				panic(crashed)
			}
		}
	}
	// Every step, crashed after its claim and after its effect, then run.
	for idx, kind := range []runbook.StepKind{KindRestorePrimary, KindWaitPrimary, KindStopWriters, KindReverseToPrimary} {
		if kind == KindReverseToPrimary {
			e.RB.CrashHook = nil
			link.SetRemoteLag("refunds", 0, 2) // a writer still writing to DR
			if err := linkStep(ctx, e, id, idx); !errors.Is(err, runbook.ErrRuleViolation) || !strings.Contains(err.Error(), "refunds ACTIVE lag 2") {
				t.Fatalf("reverse while the primary is behind: %v", err)
			}
			link.SetRemoteLag("refunds", 0, 0)
		}
		for _, point := range []string{"started", "effect-done", ""} {
			crashAt(point)
			if kind == KindWaitPrimary && point == "" {
				link.SetRemoteLag("payments", 1, 5)
				go func() { time.Sleep(1500 * time.Millisecond); link.SetRemoteLag("payments", 1, 0) }()
			}
			err := linkStep(ctx, e, id, idx)
			switch {
			case point != "" && !errors.Is(err, crashed):
				t.Fatalf("%s: crash at %s did not happen: %v", kind, point, err)
			case point != "":
				runbook.Restarted()
			case err != nil:
				t.Fatalf("%s after crashes: %v", kind, err)
			}
		}
		if kind == KindRestorePrimary {
			st := link.State()
			for _, n := range []string{"payments", "refunds"} {
				if m, ok := st.RemoteMirrors[n]; !ok || m.Status != "ACTIVE" {
					t.Fatalf("after truncate-and-restore the primary's %s is %+v (%v)", n, m, ok)
				}
			}
			// Crashed after sending, the retry finds it done; what it
			// deleted was on record before it was sent.
			r, _ := e.RB.Get(ctx, id)
			if res := r.Steps[0].Result; !strings.Contains(res, "earlier attempt restored them") {
				t.Fatalf("the retried step's result: %s", res)
			}
			starts, _ := e.Store.AuditEntries(ctx, storage.AuditFilter{Action: "failover.step-start"})
			counted := 0
			for _, s := range starts {
				if strings.Contains(string(s.Details), `"kind":"truncate-and-restore-primary"`) && strings.Contains(string(s.Details), "payments-0: 3 record(s) from offset 100") {
					counted++
				}
			}
			if counted == 0 {
				t.Fatal("no step-start record says what truncate-and-restore deletes")
			}
			// The reverse flow is watched from the primary's REST API.
			if err := book(e.RB).WatchReverseFlows(ctx); err != nil {
				t.Fatal(err)
			}
			rev := ReverseFlowName("link")
			if got := e.Mon.Watched(); !slices.Equal(got, []string{rev}) {
				t.Fatalf("watched %v", got)
			}
			s := e.Mon.Snapshot(rev)
			if s == nil || !s.Flow.IsClusterLink() || s.Flow.ReverseOf != "link" || s.Flow.Source != "dr" ||
				s.Flow.ClusterLink.ClusterID != demo.ClusterLinkSourceID || s.Flow.ClusterLink.Link != "dr-link" {
				t.Fatalf("reverse flow %+v", s)
			}
		}
	}
	want := []string{"failover payments,refunds", "truncate-and-restore payments,refunds", "reverse-and-start-mirror payments,refunds"}
	if got := realActions(link); !slices.Equal(got, want) {
		t.Fatalf("actions sent %v, want each once: %v", got, want)
	}
	st := link.State()
	for _, n := range []string{"payments", "refunds"} {
		if m := st.Mirrors[n]; m.Status != "ACTIVE" {
			t.Fatalf("after the reverse DR's %s is %+v", n, m)
		}
		if _, ok := st.RemoteMirrors[n]; ok {
			t.Fatalf("the primary's %s is still a mirror", n)
		}
	}
	r, _ = e.RB.Get(ctx, id)
	if r.Status != "completed" {
		t.Fatalf("run %s", r.Status)
	}
	if a, err := failover.ActiveSideOf(ctx, e.Store, "link"); err != nil || a.Side != model.SidePrimary || a.Run != id {
		t.Fatalf("after the failback: %+v %v", a, err)
	}
	if err := book(e.RB).WatchReverseFlows(ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.Mon.Watched(); len(got) != 0 {
		t.Fatalf("still watched after the reverse: %v", got)
	}
}

// The console does not delete what it cannot count: an answer without a
// count, or a count without the partitions, is unknown.
func TestTruncationOfFailsClosed(t *testing.T) {
	t.Parallel()
	n := func(v int64) *int64 { return &v }
	parts := []clusterlink.PartitionTruncation{{PartitionID: 1, OffsetTruncatedTo: 40, MessagesTruncated: 2}}
	total, lines, err := truncationOf([]clusterlink.MirrorActionResult{{MirrorTopicName: "a", MessagesTruncated: n(2), PartitionLevelTruncationData: parts},
		{MirrorTopicName: "b", MessagesTruncated: n(0)}})
	if err != nil || total != 2 || !slices.Equal(lines, []string{"a-1: 2 record(s) from offset 40"}) {
		t.Fatalf("known: %d %v %v", total, lines, err)
	}
	for name, res := range map[string][]clusterlink.MirrorActionResult{
		"no count":      {{MirrorTopicName: "a", PartitionLevelTruncationData: parts}},
		"no partitions": {{MirrorTopicName: "a", MessagesTruncated: n(5)}},
		// A topic saying 0 while a partition says 7: the total may not hide it.
		"partitions over the count": {{MirrorTopicName: "a", MessagesTruncated: n(0),
			PartitionLevelTruncationData: []clusterlink.PartitionTruncation{{PartitionID: 0, MessagesTruncated: 7}}}},
		// +5 and -5 would add up to "nothing to delete".
		"a negative count": {{MirrorTopicName: "a", MessagesTruncated: n(5), PartitionLevelTruncationData: []clusterlink.PartitionTruncation{{MessagesTruncated: 5}}},
			{MirrorTopicName: "b", MessagesTruncated: n(-5), PartitionLevelTruncationData: []clusterlink.PartitionTruncation{{MessagesTruncated: -5}}}},
	} {
		if _, _, err := truncationOf(res); err == nil || !strings.Contains(err.Error(), "did not say plainly how many") {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

// Before the failover nothing may be restored: DR's mirrors still run, so
// the restore rule and the stand-in both refuse.
func TestLinkRestoreRefusedWhileDRMirrors(t *testing.T) {
	t.Parallel()
	link, err := demo.StartClusterLinkStandIn("dr-cluster", "dr-link", map[string]int{"payments": 1})
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	flow := &config.Flow{Name: "link", Kind: "cluster-link", Source: "primary", Target: "dr", ClusterLink: &config.ClusterLink{RestURL: link.URL, ClusterID: "dr-cluster", Link: "dr-link",
		Primary: &config.ClusterLink{RestURL: link.URL, ClusterID: demo.ClusterLinkSourceID}}}
	e := runbooktest.NewEnv(t, 1, flow)
	rb := e.RB
	ctx := context.Background()
	ts, primary, err := book(rb).linkBackTopics(ctx, flow, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := dryRunRestore(ctx, primary, ts); err == nil || !strings.Contains(err.Error(), "not stopped") {
		t.Fatalf("truncate-and-restore while DR's mirror runs: %v", err)
	}
	rules := book(rb).linkFailbackRules(ctx, &runbook.Run{Run: model.Run{Flow: "link"}, Plan: LinkFailbackPlan("link", false)}, 0)
	if f := runbook.Failed(rules); len(f) != 2 {
		t.Fatalf("rules %+v", rules)
	}
}

// What is deleted is what was on record: a count that grew between the
// step's start (its record) and its effect sends nothing. An action an
// earlier attempt got through part of its topics with is sent only to the
// rest.
func TestLinkFailbackSendsOnlyWhatIsOnRecordAndPending(t *testing.T) {
	t.Parallel()
	e, link := linkFailedOver(t)
	ctx := context.Background()
	e.RB.ReverseCatchUp, e.RB.SettleWait = 10*time.Second, 100*time.Millisecond
	link.SetTruncatable("payments", []int64{3, 0})
	id := e.Approved(t, ctx, LinkFailbackPlan("link", false))
	x, err := e.RB.Begin(ctx, runbooktest.Alice, id, 0, "link", "")
	if err != nil {
		t.Fatal(err)
	}
	link.SetTruncatable("payments", []int64{503, 0}) // a producer still writes to the primary
	if err := x.Perform(ctx); err == nil || !strings.Contains(err.Error(), "nothing sent") || !strings.Contains(err.Error(), "then: 3 record(s)") || !strings.Contains(err.Error(), "now: 503 record(s)") {
		t.Fatalf("a count grown since the step started: %v", err)
	}
	if got := realActions(link); len(got) != 1 {
		t.Fatalf("sent %v", got)
	}
	for idx := range 3 {
		if err := linkStep(ctx, e, id, idx); err != nil {
			t.Fatalf("step %d: %v", idx+1, err)
		}
	}
	r, _ := e.RB.Get(ctx, id)
	if !strings.Contains(r.Steps[0].Result, `"truncated":503`) {
		t.Fatalf("the restore's result: %s", r.Steps[0].Result)
	}
	// An earlier attempt reversed payments and died before refunds.
	primary, err := clusterlink.ForPrimary(e.Cfg.Flow("link"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := effect.ReverseAndStart(ctx, runbooktest.Written(t, e), primary, []string{"payments"}); err != nil {
		t.Fatal(err)
	}
	if err := linkStep(ctx, e, id, 3); err != nil {
		t.Fatal(err)
	}
	r, _ = e.RB.Get(ctx, id)
	if !strings.Contains(r.Steps[3].Result, `"sent_to":["refunds"]`) || r.Status != "completed" {
		t.Fatalf("the reverse after a partial one: %s %s", r.Status, r.Steps[3].Result)
	}
	want := []string{"failover payments,refunds", "truncate-and-restore payments,refunds", "reverse-and-start-mirror payments", "reverse-and-start-mirror refunds"}
	if got := realActions(link); !slices.Equal(got, want) {
		t.Fatalf("sent %v, want %v", got, want)
	}
}
