package failover

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/drconsole/drconsole/clusterlink"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/demo"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/runbooktest"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/storage/storagetest"
)

func fullPlan() runbook.Plan {
	return runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{
		{Kind: KindPreflight},
		{Kind: KindStopMirror},
		{Kind: KindTranslateGroup, Group: "billing", AllowPartial: true},
		{Kind: KindRestoreFlink, FlinkTarget: "flink-dr", JarID: "job.jar", Args: []string{"--bootstrap", "dr"}, SavepointPath: "file:/sp/1"},
	}}
}

func TestApprovalGate(t *testing.T) {
	t.Parallel()
	e := runbooktest.NewEnv(t, 2)
	ctx := context.Background()
	if _, err := e.RB.Create(ctx, runbooktest.Vera, fullPlan(), "drill"); !errors.Is(err, runbook.ErrRole) {
		t.Fatalf("a viewer created a plan: %v", err)
	}
	bad := fullPlan()
	bad.Steps[3].FlinkTarget = "flink-primary"
	if _, err := e.RB.Create(ctx, runbooktest.Alice, bad, "drill"); err == nil || !strings.Contains(err.Error(), "restore goes to DR") {
		t.Fatalf("restore to the primary region accepted: %v", err)
	}
	id, err := e.RB.Create(ctx, runbooktest.Alice, fullPlan(), "region us-east-1 down")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := e.RB.Get(ctx, id)
	hash := r.PlanHash

	// Self-approval is impossible.
	if err := e.RB.Approve(ctx, runbooktest.Alice, id, hash, ""); !errors.Is(err, runbook.ErrSelfApproval) {
		t.Fatalf("self-approval: %v", err)
	}
	if err := e.RB.Approve(ctx, runbook.Actor{Name: strings.ToUpper(runbooktest.Alice.Name), Role: "operator"}, id, hash, ""); !errors.Is(err, runbook.ErrSelfApproval) {
		t.Fatalf("self-approval in other letter case: %v", err)
	}
	// One of two approvals is not enough; the same approver twice counts
	// once, in any letter case.
	for _, who := range []runbook.Actor{runbooktest.Bob, runbooktest.Bob, {Name: strings.ToUpper(runbooktest.Bob.Name), Role: runbooktest.Bob.Role}} {
		if err := e.RB.Approve(ctx, who, id, hash, "ok"); err != nil {
			t.Fatal(err)
		}
	}
	if r, _ = e.RB.Get(ctx, id); r.Approved || r.Status != "pending" {
		t.Fatalf("approved with %v of 2", r.ValidApprovers)
	}
	if _, err := e.RB.Begin(ctx, runbooktest.Alice, id, 0, "", ""); !errors.Is(err, runbook.ErrNotApproved) {
		t.Fatalf("ran a step before approval: %v", err)
	}
	// The plan changes: the approval given for the old hash no longer
	// counts, and replaying it is refused.
	changed := fullPlan()
	changed.Steps[2].Group = "flink-events"
	if err := e.RB.Update(ctx, runbooktest.Alice, id, changed, "wrong group"); err != nil {
		t.Fatal(err)
	}
	if err := e.RB.Approve(ctx, runbooktest.Carol, id, hash, "ok"); err == nil || !strings.Contains(err.Error(), "plan changed") {
		t.Fatalf("approval of the old plan accepted: %v", err)
	}
	r, _ = e.RB.Get(ctx, id)
	if len(r.ValidApprovers) != 0 {
		t.Fatalf("approvals survived a plan change: %v", r.ValidApprovers)
	}
	for _, who := range []runbook.Actor{runbooktest.Bob, runbooktest.Carol} {
		if err := e.RB.Approve(ctx, who, id, r.PlanHash, "ok"); err != nil {
			t.Fatal(err)
		}
	}
	if r, _ = e.RB.Get(ctx, id); !r.Approved || r.Status != "approved" {
		t.Fatalf("2 of 2 approvals: %+v", r.ValidApprovers)
	}
	// Approvals expire.
	e.Now = e.Now.Add(31 * time.Minute)
	if _, err := e.RB.Begin(ctx, runbooktest.Alice, id, 0, "", ""); !errors.Is(err, runbook.ErrNotApproved) {
		t.Fatalf("an expired approval let a step run: %v", err)
	}
	// Rejection needs a reason and ends the run.
	if err := e.RB.Reject(ctx, runbooktest.Bob, id, " "); err == nil {
		t.Fatal("rejection without a reason")
	}
	if err := e.RB.Reject(ctx, runbooktest.Bob, id, "primary is back"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.RB.Begin(ctx, runbooktest.Alice, id, 0, "", ""); !errors.Is(err, runbook.ErrNotApproved) {
		t.Fatalf("a rejected run ran: %v", err)
	}
	// Break-glass is off by default.
	id2, _ := e.RB.Create(ctx, runbooktest.Alice, fullPlan(), "drill")
	if err := e.RB.BreakGlass(ctx, runbooktest.Alice, id2, "the approver is asleep"); err == nil || !strings.Contains(err.Error(), "disabled") {
		t.Fatalf("break-glass while disabled: %v", err)
	}
	e.Cfg.Failover.BreakGlass = true
	if err := e.RB.BreakGlass(ctx, runbooktest.Alice, id2, "the approver is asleep"); err != nil {
		t.Fatal(err)
	}
	if r, _ := e.RB.Get(ctx, id2); !r.Approved || e.Audit.Count("failover.BREAK-GLASS") != 1 {
		t.Fatal("break-glass did not approve, or was not audited")
	}
}

// A full run with a crash at every step boundary: each step resumes, none
// is applied twice, and the audit has the whole story.
func TestRunResumesAfterCrashAtEveryBoundary(t *testing.T) {
	e := runbooktest.NewEnv(t, 1)
	catalogued(t, e, "file:/sp/1")
	ctx := context.Background()
	id, err := e.RB.Create(ctx, runbooktest.Alice, fullPlan(), "drill")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := e.RB.Get(ctx, id)
	if err := e.RB.Approve(ctx, runbooktest.Bob, id, r.PlanHash, "go"); err != nil {
		t.Fatal(err)
	}
	// Steps out of order, and irreversible steps without confirmation, are refused.
	if _, err := e.RB.Begin(ctx, runbooktest.Alice, id, 1, "primary->dr", ""); !errors.Is(err, runbook.ErrOrder) {
		t.Fatalf("step 2 before step 1: %v", err)
	}
	crashed := errors.New("crash")
	for idx := range fullPlan().Steps {
		if idx == 1 {
			e.SB.SetMirrorRunning(false) // dedicated MM2: the operator stops it by hand
		}
		if idx == 1 { // the mirror's stop, the run's point of no return
			if _, err := e.RB.Begin(ctx, runbooktest.Alice, id, idx, "wrong", ""); !errors.Is(err, runbook.ErrConfirmation) {
				t.Fatalf("step %d without the typed confirmation: %v", idx+1, err)
			}
		}
		for _, point := range []string{"started", "effect-done", ""} {
			e.RB.CrashHook = func(p string) {
				if p == point {
					panic(crashed)
				}
			}
			err := func() (err error) {
				defer func() {
					if v := recover(); v != nil {
						err = v.(error)
					}
				}()
				x, err := e.RB.Begin(ctx, runbooktest.Alice, id, idx, "primary->dr", "")
				if err != nil {
					return err
				}
				return x.Perform(ctx)
			}()
			if point != "" && !errors.Is(err, crashed) {
				t.Fatalf("step %d: crash at %s did not happen: %v", idx+1, point, err)
			}
			if point != "" {
				runbook.Restarted() // the console comes back as a new process
			}
			if point == "" && err != nil {
				t.Fatalf("step %d after crashes: %v", idx+1, err)
			}
			r, _ := e.RB.Get(ctx, id)
			if want := map[string]model.StepStatus{"started": model.StepRunning, "effect-done": model.StepRunning, "": model.StepDone}[point]; r.Steps[idx].Status != want {
				t.Fatalf("step %d after crash at %q is %s, want %s", idx+1, point, r.Steps[idx].Status, want)
			}
		}
		if _, err := e.RB.Begin(ctx, runbooktest.Alice, id, idx, "primary->dr", ""); err == nil || !strings.Contains(err.Error(), "never runs twice") {
			t.Fatalf("a done step %d could run again: %v", idx+1, err)
		}
	}
	r, _ = e.RB.Get(ctx, id)
	if r.Status != "completed" || r.NextStep != -1 {
		t.Fatalf("run %s, next step %d", r.Status, r.NextStep)
	}
	// Flink: the job was submitted once though the step ran three times.
	if e.Flink.Runs != 1 {
		t.Fatalf("RunJar called %d times", e.Flink.Runs)
	}
	for _, req := range e.Flink.Jobs {
		if req.ClaimMode != "NO_CLAIM" || req.SavepointPath != "file:/sp/1" || req.RestoreMode != "" {
			t.Fatalf("run request %+v", req)
		}
	}
	// The DR group really got the translated offsets.
	got, err := kadm.NewClient(runbooktest.DRClient(e.Mon, "primary->dr")).FetchOffsets(ctx, "billing")
	if err != nil || len(got) == 0 {
		t.Fatalf("DR group offsets: %v %v", got, err)
	}
	changes, _ := e.Store.GroupChanges(ctx, "primary->dr", "billing")
	if len(changes) != 1 || changes[0].Status != "applied" {
		t.Fatalf("group changes %+v, want one (three attempts finish the same change)", changes)
	}
	for _, action := range []string{"failover.plan", "failover.approve", "failover.completed"} {
		if e.Audit.Count(action) != 1 {
			t.Errorf("audit has %d %s", e.Audit.Count(action), action)
		}
	}
	// Every attempt's start is on record; a crash before the result was
	// written loses that attempt's result, and the resumed attempt writes it.
	if starts, dones := e.Audit.Count("failover.step-start"), e.Audit.Count("failover.step-done"); starts != 12 || dones != 4 {
		t.Errorf("audit: %d step starts (want 12: 3 attempts x 4 steps), %d step results (want 4)", starts, dones)
	}
}

func TestSafetyRulesNeedOverride(t *testing.T) {
	t.Parallel()
	e := runbooktest.NewEnv(t, 1)
	ctx := context.Background()
	id, _ := e.RB.Create(ctx, runbooktest.Alice, runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: KindStopMirror}}}, "drill")
	r, _ := e.RB.Get(ctx, id)
	e.RB.Approve(ctx, runbooktest.Bob, id, r.PlanHash, "")
	// Slow the mirror until lag passes promote_max_lag.
	e.Cfg.Failover.PromoteMaxLag = config.Duration(500 * time.Millisecond)
	e.SB.SetMirrorRate(5)
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := e.RB.Begin(ctx, runbooktest.Alice, id, 0, "primary->dr", "")
		if errors.Is(err, runbook.ErrRuleViolation) {
			if !strings.Contains(err.Error(), "lag within") {
				t.Fatalf("refused for another reason: %v", err)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("stop-mirror never refused on lag")
		}
		// It started: undo by failing it, then try again when lag is higher.
		e.Store.FinishFailoverStep(ctx, storage.StepOutcome{RunID: id, Idx: 0, Runner: runbook.RunnerID(), Failure: fmt.Errorf("test"),
			Record: model.AuditEntry{Actor: "test", Action: "test.fail-step"}})
		time.Sleep(200 * time.Millisecond)
	}
	if e.Audit.Count("failover.step-refused") == 0 {
		t.Fatal("a refusal was not audited")
	}
	x, err := e.RB.Begin(ctx, runbooktest.Alice, id, 0, "primary->dr", "primary region burning, accepting the loss")
	if err != nil {
		t.Fatalf("override: %v", err)
	}
	overridden := false
	for _, rule := range x.Rules {
		overridden = overridden || rule.Overridden != ""
	}
	if !overridden {
		t.Fatalf("rules %+v", x.Rules)
	}

}

func TestStopMirrorThroughConnectAndPreview(t *testing.T) {
	t.Parallel()
	e := runbooktest.NewEnv(t, 1)
	ctx := context.Background()
	fc := e.OnConnect(t)
	id, _ := e.RB.Create(ctx, runbooktest.Alice, fullPlan(), "drill")
	r, _ := e.RB.Get(ctx, id)
	previews := e.RB.Preview(ctx, r)
	if len(previews) != 4 {
		t.Fatalf("%d previews", len(previews))
	}
	for i, want := range []string{"changes nothing", "MirrorSourceConnector: now RUNNING with 1 task(s) → STOPPED", "billing", "job id"} {
		if !strings.Contains(strings.Join(previews[i].Lines, "\n"), want) || previews[i].Err != "" {
			t.Errorf("preview of step %d lacks %q: %v %s", i+1, want, previews[i].Lines, previews[i].Err)
		}
	}
	if len(fc.Stops) != 0 {
		t.Fatal("the preview stopped a connector")
	}
	e.RB.Approve(ctx, runbooktest.Bob, id, r.PlanHash, "")
	for idx := range 2 {
		x, err := e.RB.Begin(ctx, runbooktest.Alice, id, idx, "primary->dr", "")
		if err != nil {
			t.Fatal(err)
		}
		if err := x.Perform(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if fc.Stops["MirrorSourceConnector"] != 1 || fc.Stops["MirrorCheckpointConnector"] != 1 {
		t.Fatalf("stops %v", fc.Stops)
	}
	r, _ = e.RB.Get(ctx, id)
	if !strings.Contains(r.Steps[1].Result, `"MirrorSourceConnector":"STOPPED"`) {
		t.Fatalf("step result %s", r.Steps[1].Result)
	}
}

// The same crash-and-resume walk with the real audit chain, and a runbook
// rebuilt from a freshly opened database after every crash, as a restarted
// console would be. The chain verifies afterwards, and editing any record
// by SQL breaks it.
func TestCrashResumeKeepsAuditChain(t *testing.T) {
	e := runbooktest.NewEnv(t, 1)
	catalogued(t, e, "file:/sp/1")
	ctx := context.Background()
	restart := func() *runbook.Runbook {
		s, err := storage.Open(e.Path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		// A new Runbook, as a restarted console builds it (empty caches, no crash hook).
		rb := &runbook.Runbook{Store: s, Audit: runbook.StoreAuditor{Store: s}, Config: e.RB.Config, Log: e.RB.Log, Clock: e.RB.Clock,
			Connect: e.RB.Connect, Flink: e.RB.Flink, StopVerifyWindow: e.RB.StopVerifyWindow}
		Equip(rb, Env{Monitor: e.Mon, Catalog: envOf(e.RB).Catalog})
		runbook.Restarted()
		return rb
	}
	rb := restart()
	plan := fullPlan()
	id, err := rb.Create(ctx, runbooktest.Alice, plan, "drill")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := rb.Get(ctx, id)
	if err := rb.Approve(ctx, runbooktest.Bob, id, r.PlanHash, ""); err != nil {
		t.Fatal(err)
	}
	e.SB.SetMirrorRunning(false)
	crashed := errors.New("crash")
	for idx := range plan.Steps {
		for _, point := range []string{"started", "effect-done"} {
			rb.CrashHook = func(p string) {
				if p == point {
					panic(crashed)
				}
			}
			func() {
				defer func() { recover() }()
				if x, err := rb.Begin(ctx, runbooktest.Alice, id, idx, "primary->dr", ""); err == nil {
					x.Perform(ctx)
				}
			}()
			rb = restart() // the console comes back
		}
		x, err := rb.Begin(ctx, runbooktest.Alice, id, idx, "primary->dr", "")
		if err != nil {
			t.Fatalf("resuming step %d: %v", idx+1, err)
		}
		if err := x.Perform(ctx); err != nil {
			t.Fatalf("step %d: %v", idx+1, err)
		}
	}
	if r, _ := rb.Get(ctx, id); r.Status != "completed" {
		t.Fatalf("run %s", r.Status)
	}
	if e.Flink.Runs != 1 {
		t.Fatalf("Flink job submitted %d times", e.Flink.Runs)
	}
	n, bad, err := rb.Store.VerifyAudit(ctx)
	if err != nil || bad != nil || n < 16 {
		t.Fatalf("audit chain after the run: %d records, %v, %v", n, bad, err)
	}
	starts, _ := rb.Store.AuditEntries(ctx, storage.AuditFilter{Action: "failover.step-start", Limit: 100})
	if len(starts) != 12 {
		t.Fatalf("%d step starts on record, want 12 (3 attempts x 4 steps)", len(starts))
	}
	// Tamper with the approval by SQL, past the triggers: the chain breaks.
	db, err := sql.Open("sqlite3", e.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{`DROP TRIGGER audit_no_update`, `UPDATE audit SET actor='mallory' WHERE action='failover.approve'`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if _, bad, err := rb.Store.VerifyAudit(ctx); err != nil || bad == nil {
		t.Fatalf("an edited approval went unnoticed: %v %v", bad, err)
	}
}

func TestClusterLinkPromoteAndFailover(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	link, err := demo.StartClusterLinkStandIn("dr-cluster", "dr-link", map[string]int{"payments": 2, "refunds": 1})
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	link.SetPendingStopped(300 * time.Millisecond)
	e := runbooktest.NewEnv(t, 1, &config.Flow{Name: "link", Kind: "cluster-link", Source: "primary", Target: "dr",
		ClusterLink: &config.ClusterLink{RestURL: link.URL, ClusterID: "dr-cluster", Link: "dr-link"}})
	if _, err := e.RB.Create(ctx, runbooktest.Alice, runbook.Plan{Flow: "link", Steps: []runbook.Step{{Kind: KindTranslateGroup, Group: "g"}}}, "x"); err == nil ||
		!strings.Contains(err.Error(), "not needed") {
		t.Fatalf("translation on a Cluster Linking flow: %v", err)
	}
	if _, err := e.RB.Create(ctx, runbooktest.Alice, runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: KindPromoteMirrors}}}, "x"); err == nil {
		t.Fatal("promote on an MM2 flow accepted")
	}
	approved := func(kind runbook.StepKind) int64 {
		return approvedRun(t, e, runbook.Plan{Flow: "link", Steps: []runbook.Step{{Kind: kind}}})
	}
	// Planned promote with lag: refused at Create, where it is planned,
	// with the rule the step would fail (no override passes it), and
	// nothing stored; the unplanned failover stays the way to accept loss.
	link.SetLag("payments", 1, 42)
	promote := runbook.Plan{Flow: "link", Steps: []runbook.Step{{Kind: KindPromoteMirrors}}}
	var refusal *runbook.StepRefusal
	if _, err := e.RB.Create(ctx, runbooktest.Alice, promote, "x"); !errors.As(err, &refusal) || refusal.Step != 0 || refusal.Kind != KindPromoteMirrors ||
		!strings.Contains(err.Error(), "payments ACTIVE lag 42") || !strings.Contains(err.Error(), "use failover instead") {
		t.Fatalf("planned promote with lag created: %v", err)
	}
	if runs, _ := e.RB.Runs(ctx); len(runs) != 0 {
		t.Fatalf("a refused plan was stored: %+v", runs)
	}
	// Lag that comes after the plan was made: refused when the step
	// starts, before anything is sent.
	link.SetLag("payments", 1, 0)
	id := approved(KindPromoteMirrors)
	link.SetLag("payments", 1, 42)
	r, _ := e.RB.Get(ctx, id)
	pv := e.RB.Preview(ctx, r)[0]
	if !strings.Contains(strings.Join(pv.Lines, "\n"), "payments (from payments): ACTIVE, lag 42") {
		t.Fatalf("preview %v %s", pv.Lines, pv.Err)
	}
	if _, err := e.RB.Begin(ctx, runbooktest.Alice, id, 0, "link", ""); !errors.Is(err, runbook.ErrRuleViolation) || !strings.Contains(err.Error(), "payments ACTIVE lag 42") {
		t.Fatalf("promote with lag: %v", err)
	}
	if st := link.State(); len(st.Actions) != 1 || !st.Actions[0].ValidateOnly {
		t.Fatalf("only the preview's dry run may reach the link: %+v", st.Actions)
	}
	// Unplanned failover: goes ahead, states the loss, ends with every mirror STOPPED.
	id = approved(KindFailoverMirrors)
	x, err := e.RB.Begin(ctx, runbooktest.Alice, id, 0, "link", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Perform(ctx); err != nil {
		t.Fatal(err)
	}
	r, _ = e.RB.Get(ctx, id)
	if r.Status != "completed" || !strings.Contains(r.Steps[0].Result, `"records_at_risk":42`) || !strings.Contains(r.Steps[0].Result, `"payments":"STOPPED"`) {
		t.Fatalf("failover run %s result %s", r.Status, r.Steps[0].Result)
	}
}

// A link that renames topics (a prefix) must not be told its savepoint
// restores unchanged: KafkaSource state is keyed by topic name.
func TestRestoreNoteNamesRenamedTopics(t *testing.T) {
	t.Parallel()
	same := []clusterlink.MirrorTopic{{MirrorTopicName: "orders", SourceTopicName: "orders"}}
	if n := restoreNote(same); !strings.Contains(n, "restores unchanged") {
		t.Fatalf("same names: %q", n)
	}
	renamed := append(same, clusterlink.MirrorTopic{MirrorTopicName: "primary.events", SourceTopicName: "events"})
	if n := restoreNote(renamed); strings.Contains(n, "restores unchanged") || !strings.Contains(n, "events → primary.events") || !strings.Contains(n, "new source uid") {
		t.Fatalf("renamed: %q", n)
	}
}

// translate-group from a savepoint: the savepoint's offsets (from the
// catalog) are translated and committed, not the group's own.
func TestTranslateGroupFromSavepoint(t *testing.T) {
	t.Parallel()
	e := runbooktest.NewEnv(t, 1)
	ctx := context.Background()
	tr := e.Mon.Translator("primary->dr")
	spOffsets := map[model.TP]int64{{Topic: "orders", Partition: 0}: 7, {Topic: "orders", Partition: 1}: 11}
	want := map[model.TP]int64{}
	for tp, off := range spOffsets {
		tl := tr.Index.Translate(tp, off)
		if !tl.Translated() {
			t.Fatalf("%v at %d does not translate: %+v", tp, off, tl)
		}
		want[tp] = tl.Offset // identity policy: same topic names in DR
	}
	const path = "file:/savepoints/savepoint-abc-1"
	catalogued(t, e) // the step checks the savepoint's verdict when it starts
	id, err := e.Store.UpsertSavepoint(ctx, model.Savepoint{Path: path, Kind: model.KindSavepoint, Origin: model.OriginManual,
		Status: model.SavepointCompleted}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Store.SetSavepointOffsets(ctx, id, `{"orders-0":7,"orders-1":11}`, "kafka-source", 4, ""); err != nil {
		t.Fatal(err)
	}
	step := runbook.Step{Kind: KindTranslateGroup, Group: "sp-group", FromSavepoint: "file:///savepoints/savepoint-abc-1/"}
	if !strings.Contains(StepTitle(step, nil), "offsets of savepoint") {
		t.Fatalf("title %q", StepTitle(step, nil))
	}
	run, err := e.RB.Create(ctx, runbooktest.Alice, runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{step, {Kind: KindTranslateGroup, Group: "sp-group", FromSavepoint: "file:/nowhere"}}}, "from savepoint")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := e.RB.Get(ctx, run)
	pv := e.RB.Preview(ctx, r)
	if pv[0].Err != "" || !strings.Contains(strings.Join(pv[0].Lines, "\n"), "savepoint "+path) {
		t.Fatalf("preview: %+v", pv[0])
	}
	if !strings.Contains(pv[1].Err, "not in the savepoint catalog") {
		t.Fatalf("preview of an unknown savepoint: %+v", pv[1])
	}
	if err := e.RB.Approve(ctx, runbooktest.Bob, run, r.PlanHash, "ok"); err != nil {
		t.Fatal(err)
	}
	x, err := e.RB.Begin(ctx, runbooktest.Alice, run, 0, "primary->dr", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Perform(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := kadm.NewClient(runbooktest.DRClient(e.Mon, "primary->dr")).FetchOffsets(ctx, "sp-group")
	if err != nil {
		t.Fatal(err)
	}
	for tp, off := range want {
		if o, ok := got.Lookup(tp.Topic, tp.Partition); !ok || o.At != off {
			t.Errorf("DR group at %v = %+v, want %d (savepoint offset %d translated)", tp, o, off, spOffsets[tp])
		}
	}
	if n := len(got.Sorted()); n != len(want) {
		t.Errorf("DR group has %d partitions, want %d", n, len(want))
	}
}

// Six concurrent starts of one step, from two operators: exactly one
// claims it and runs; the others are refused with ErrConflict and each
// refusal is on record. The DR group is committed once, one outcome is
// recorded, and the next step cannot start while this one runs.
func TestStepStartsExactlyOnce(t *testing.T) {
	t.Parallel()
	e := runbooktest.NewEnv(t, 1)
	ctx := context.Background()
	plan := runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{
		{Kind: KindTranslateGroup, Group: "billing", AllowPartial: true},
		{Kind: KindRestoreFlink, FlinkTarget: "flink-dr", JarID: "job.jar", SavepointPath: "file:/sp/1"},
	}}
	id, err := e.RB.Create(ctx, runbooktest.Alice, plan, "drill")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := e.RB.Get(ctx, id)
	if err := e.RB.Approve(ctx, runbooktest.Carol, id, r.PlanHash, "go"); err != nil {
		t.Fatal(err)
	}
	begun := make(chan *runbook.Execution, 6)
	errs := make(chan error, 6)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 6 {
		who := []runbook.Actor{runbooktest.Alice, runbooktest.Bob}[i%2]
		wg.Go(func() {
			<-start
			x, err := e.RB.Begin(ctx, who, id, 0, "primary->dr", "")
			if err != nil {
				errs <- err
				return
			}
			begun <- x
		})
	}
	close(start)
	wg.Wait()
	close(begun)
	close(errs)
	var xs []*runbook.Execution
	for x := range begun {
		xs = append(xs, x)
	}
	for err := range errs {
		if !errors.Is(err, storage.ErrConflict) {
			t.Errorf("a refused start is not a conflict: %v", err)
		}
	}
	if len(xs) != 1 {
		t.Fatalf("%d of 6 concurrent starts claimed the step, want 1", len(xs))
	}
	// While step 1 runs, neither it nor step 2 can start.
	if _, err := e.RB.Begin(ctx, runbooktest.Bob, id, 0, "primary->dr", ""); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("step 1 started again while running: %v", err)
	}
	if _, err := e.RB.Begin(ctx, runbooktest.Bob, id, 1, "primary->dr", ""); err == nil {
		t.Fatal("step 2 started while step 1 runs")
	}
	if err := xs[0].Perform(ctx); err != nil {
		t.Fatal(err)
	}
	if n := e.Audit.Count("failover.step-start-refused"); n != 6 {
		t.Errorf("%d refusals on record, want 6 (5 concurrent, 1 while running)", n)
	}
	if s, d := e.Audit.Count("failover.step-start"), e.Audit.Count("failover.step-done"); s != 1 || d != 1 {
		t.Errorf("%d step starts and %d results on record, want 1 and 1", s, d)
	}
	changes, _ := e.Store.GroupChanges(ctx, "primary->dr", "billing")
	if len(changes) != 1 || changes[0].Status != "applied" {
		t.Fatalf("group changes %+v, want one, applied", changes)
	}
	if r, _ = e.RB.Get(ctx, id); r.Steps[0].Status != "done" || r.Steps[0].Attempts != 1 {
		t.Fatalf("step 1 %s after %d attempts", r.Steps[0].Status, r.Steps[0].Attempts)
	}
}

// With the audit log unwritable nothing in the runbook happens: no plan,
// no approval, no rejection, no step claimed. A step whose outcome cannot
// be recorded is not finished: it stays running, released, and once the
// audit log works again executing it resumes and finishes the change its
// first attempt made (committed once).
func TestNoRunbookEffectWithoutAuditRecord(t *testing.T) {
	t.Parallel()
	e := runbooktest.NewEnv(t, 1)
	ctx := context.Background()
	plan := runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: KindTranslateGroup, Group: "billing", AllowPartial: true}}}
	id, err := e.RB.Create(ctx, runbooktest.Alice, plan, "drill")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := e.RB.Get(ctx, id)
	storagetest.FailAuditWrites(t, e.Path, true)
	if _, err := e.RB.Create(ctx, runbooktest.Alice, plan, "drill"); err == nil {
		t.Fatal("a plan was created without its audit record")
	}
	if runs, _ := e.RB.Runs(ctx); len(runs) != 1 {
		t.Fatalf("%d runs stored, want 1", len(runs))
	}
	if err := e.RB.Approve(ctx, runbooktest.Bob, id, r.PlanHash, "ok"); err == nil {
		t.Fatal("an approval was given without its audit record")
	}
	if err := e.RB.Reject(ctx, runbooktest.Bob, id, "no"); err == nil {
		t.Fatal("a rejection was made without its audit record")
	}
	if r, _ = e.RB.Get(ctx, id); len(r.Approvals) != 0 || r.Status != "pending" {
		t.Fatalf("run %s with approvals %+v after unrecorded approve/reject", r.Status, r.Approvals)
	}
	storagetest.FailAuditWrites(t, e.Path, false)
	if err := e.RB.Approve(ctx, runbooktest.Bob, id, r.PlanHash, "ok"); err != nil {
		t.Fatal(err)
	}
	storagetest.FailAuditWrites(t, e.Path, true)
	if _, err := e.RB.Begin(ctx, runbooktest.Alice, id, 0, "primary->dr", ""); err == nil {
		t.Fatal("a step started without its audit record")
	}
	if r, _ = e.RB.Get(ctx, id); r.Steps[0].Status != "pending" || r.Status != "approved" {
		t.Fatalf("after an unrecorded start: run %s, step %s", r.Status, r.Steps[0].Status)
	}
	storagetest.FailAuditWrites(t, e.Path, false)
	x, err := e.RB.Begin(ctx, runbooktest.Alice, id, 0, "primary->dr", "")
	if err != nil {
		t.Fatal(err)
	}
	storagetest.FailAuditWrites(t, e.Path, true)
	if err := x.Perform(ctx); err == nil || !strings.Contains(err.Error(), "not recorded") {
		t.Fatalf("an unrecorded outcome passed: %v", err)
	}
	if r, _ = e.RB.Get(ctx, id); r.Steps[0].Status != "running" || r.Steps[0].Runner != "" || r.Status != "running" {
		t.Fatalf("after an unrecorded outcome: run %s, step %s (runner %q), want running and released", r.Status, r.Steps[0].Status, r.Steps[0].Runner)
	}
	storagetest.FailAuditWrites(t, e.Path, false)
	if x, err = e.RB.Begin(ctx, runbooktest.Bob, id, 0, "primary->dr", ""); err != nil {
		t.Fatalf("resuming a released step: %v", err)
	}
	if err := x.Perform(ctx); err != nil {
		t.Fatal(err)
	}
	if r, _ = e.RB.Get(ctx, id); r.Status != "completed" || r.Steps[0].Status != "done" {
		t.Fatalf("run %s, step %s", r.Status, r.Steps[0].Status)
	}
	for action, want := range map[string]int{"failover.step-start": 2, "failover.step-done": 1, "failover.completed": 1} {
		if n := e.Audit.Count(action); n != want {
			t.Errorf("%d %s records, want %d", n, action, want)
		}
	}
	if changes, _ := e.Store.GroupChanges(ctx, "primary->dr", "billing"); len(changes) != 1 || changes[0].Status != "applied" {
		t.Fatalf("group changes %+v, want one, applied", changes)
	}
}

// An approval from an account the requester created (in the console or,
// as the same name, from the command line), or from one created after
// the run was requested, does not count, and the run says why. An account
// created by someone else before the request counts.
func TestSockPuppetApprovalsDoNotCount(t *testing.T) {
	t.Parallel()
	e := runbooktest.NewEnv(t, 1)
	ctx := context.Background()
	requested := time.Now()
	e.Now = requested
	for _, u := range []model.User{
		{Name: "mallory", Role: "operator", CreatedBy: "alice", CreatedMs: requested.Add(-time.Hour).UnixMilli()},
		{Name: "shelly", Role: "operator", CreatedBy: "cli:Alice", CreatedMs: requested.Add(-time.Hour).UnixMilli()},
		{Name: "late", Role: "operator", CreatedBy: "root-admin", CreatedMs: requested.Add(time.Minute).UnixMilli()},
		{Name: "dave", Role: "operator", CreatedBy: "alice", CreatedMs: requested.Add(-time.Hour).UnixMilli()},
		{Name: "bob", Role: "operator", CreatedBy: "root-admin", CreatedMs: requested.Add(-time.Hour).UnixMilli()},
	} {
		if err := e.Store.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	id, err := e.RB.Create(ctx, runbooktest.Alice, fullPlan(), "drill")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := e.RB.Get(ctx, id)
	wants := map[string]string{"mallory": "created by the requester alice", "shelly": "created by the requester alice",
		"late": "after the run was requested", "dave": "created by the requester alice"}
	for name := range wants {
		if err := e.RB.Approve(ctx, runbook.Actor{Name: name, Role: "operator"}, id, r.PlanHash, "ok"); err != nil {
			t.Fatal(err)
		}
	}
	r, _ = e.RB.Get(ctx, id)
	if r.Approved || len(r.ValidApprovers) != 0 || r.Status != "pending" {
		t.Fatalf("sock-puppet approvals counted: approved %v by %v (%s)", r.Approved, r.ValidApprovers, r.Status)
	}
	for name, want := range wants {
		if !strings.Contains(r.Discounted[name], want) {
			t.Errorf("%s: discounted %q, want it to say %q", name, r.Discounted[name], want)
		}
	}
	if _, err := e.RB.Begin(ctx, runbooktest.Alice, id, 0, "", ""); !errors.Is(err, runbook.ErrNotApproved) {
		t.Fatalf("a step ran on sock-puppet approvals: %v", err)
	}
	if err := e.RB.Approve(ctx, runbooktest.Bob, id, r.PlanHash, "ok"); err != nil {
		t.Fatal(err)
	}
	if r, _ = e.RB.Get(ctx, id); !r.Approved || len(r.ValidApprovers) != 1 || r.ValidApprovers[0] != "bob" {
		t.Fatalf("bob's approval: approved %v by %v", r.Approved, r.ValidApprovers)
	}
}

// Taking over an account the requester did not create works as well as a
// sock-puppet: an approval does not count from an account whose current
// password the requester set (before or after the request, in any case of
// the name, from the console or the command line), or which the requester
// raised or re-enabled after the request. A password the owner set again
// afterwards, or a change by someone else, leaves the approval counting.
func TestApprovalsFromAccountsTheRequesterTookOverDoNotCount(t *testing.T) {
	t.Parallel()
	e := runbooktest.NewEnv(t, 1)
	ctx := context.Background()
	requested := time.Now()
	e.Now = requested
	before := requested.Add(-time.Hour).UnixMilli()
	for _, name := range []string{"pat", "cli-pat", "rolf", "ena", "reset", "other"} {
		if err := e.Store.CreateUser(ctx, model.User{Name: name, Role: "operator", CreatedBy: "root-admin", CreatedMs: before}); err != nil {
			t.Fatal(err)
		}
	}
	change := func(actor, action, name string, at time.Time) {
		t.Helper()
		if _, err := e.Store.AppendAudit(ctx, model.AuditEntry{Actor: actor, Action: action, Subject: "user:" + name, AtMs: at.UnixMilli()}); err != nil {
			t.Fatal(err)
		}
	}
	change("ALICE", "user.password", "Pat", requested.Add(-time.Minute))        // before the request still counts
	change("cli:alice", "user.password", "cli-pat", requested.Add(time.Minute)) // the CLI as the same name
	change("alice", "user.role", "rolf", requested.Add(time.Minute))
	change("alice", "user.enable", "ena", requested.Add(time.Minute))
	change("alice", "user.password", "reset", requested.Add(-time.Minute)) // set by alice, then by an admin
	change("root-admin", "user.password", "reset", requested.Add(-time.Second))
	change("root-admin", "user.password", "other", requested.Add(time.Minute))
	change("alice", "user.role", "other", requested.Add(-time.Hour)) // before the request: alice did not pick it for this run

	id, err := e.RB.Create(ctx, runbooktest.Alice, fullPlan(), "drill")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := e.RB.Get(ctx, id)
	wants := map[string]string{"pat": "password of pat was last set by the requester alice",
		"cli-pat": "password of cli-pat was last set by the requester alice",
		"rolf":    "changed the account rolf (user.role) after the run was requested",
		"ena":     "changed the account ena (user.enable) after the run was requested"}
	for name := range wants {
		if err := e.RB.Approve(ctx, runbook.Actor{Name: name, Role: "operator"}, id, r.PlanHash, "ok"); err != nil {
			t.Fatal(err)
		}
	}
	r, _ = e.RB.Get(ctx, id)
	if r.Approved || len(r.ValidApprovers) != 0 {
		t.Fatalf("approvals from taken-over accounts counted: approved %v by %v", r.Approved, r.ValidApprovers)
	}
	for name, want := range wants {
		if !strings.Contains(r.Discounted[name], want) {
			t.Errorf("%s: discounted %q, want it to say %q", name, r.Discounted[name], want)
		}
	}
	for _, name := range []string{"reset", "other"} {
		if err := e.RB.Approve(ctx, runbook.Actor{Name: name, Role: "operator"}, id, r.PlanHash, "ok"); err != nil {
			t.Fatal(err)
		}
	}
	if r, _ = e.RB.Get(ctx, id); !r.Approved || len(r.ValidApprovers) != 2 {
		t.Fatalf("approvals from accounts the requester does not control: approved %v by %v (discounted %v)", r.Approved, r.ValidApprovers, r.Discounted)
	}
}

// An approval stops counting when the approver's account is disabled or
// demoted to viewer after approving (a compromised approver is handled by
// disabling them, which must also void what they approved).
func TestApprovalFromDisabledOrDemotedAccountDoesNotCount(t *testing.T) {
	t.Parallel()
	e := runbooktest.NewEnv(t, 1)
	ctx := context.Background()
	for _, name := range []string{"dora", "vic"} {
		if err := e.Store.CreateUser(ctx, model.User{Name: name, Role: "operator", CreatedBy: "root-admin", CreatedMs: e.Now.Add(-time.Hour).UnixMilli()}); err != nil {
			t.Fatal(err)
		}
	}
	for name, change := range map[string]func(string) error{
		"dora": func(n string) error { return e.Store.SetDisabled(ctx, n, true) },
		"vic":  func(n string) error { return e.Store.SetRole(ctx, n, "viewer") },
	} {
		id, err := e.RB.Create(ctx, runbooktest.Alice, fullPlan(), "drill")
		if err != nil {
			t.Fatal(err)
		}
		r, _ := e.RB.Get(ctx, id)
		if err := e.RB.Approve(ctx, runbook.Actor{Name: name, Role: "operator"}, id, r.PlanHash, "ok"); err != nil {
			t.Fatal(err)
		}
		if r, _ = e.RB.Get(ctx, id); !r.Approved {
			t.Fatalf("%s's approval did not count while the account was an enabled operator (%v)", name, r.Discounted)
		}
		if err := change(name); err != nil {
			t.Fatal(err)
		}
		if r, _ = e.RB.Get(ctx, id); r.Approved || r.Discounted[name] == "" {
			t.Fatalf("%s's approval still counts after the change: approved %v by %v", name, r.Approved, r.ValidApprovers)
		}
		if _, err := e.RB.Begin(ctx, runbooktest.Alice, id, 0, "", ""); !errors.Is(err, runbook.ErrNotApproved) {
			t.Fatalf("a step ran on %s's voided approval: %v", name, err)
		}
	}
}
