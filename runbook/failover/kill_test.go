package failover

// A real crash test: the runbook runs in a child process that is killed
// with SIGKILL at every step boundary and started again, against the same
// SQLite file and the same clusters (the sandbox's kfake brokers and the
// Flink stand-in listen on loopback in this, the parent, process).

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/demo"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/flink/rewritetest"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/runbooktest"
	"github.com/drconsole/drconsole/storage"
)

const childEnv = "DRCONSOLE_RUNBOOK_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(runbookChild())
	}
	os.Exit(m.Run())
}

// killConfig is the configuration parent and children share.
func killConfig(primary, dr []string, flinkURL, spDir string) *config.Config {
	cfg := &config.Config{
		Clusters: map[string]*config.Cluster{"primary": {Bootstrap: primary}, "dr": {Bootstrap: dr}},
		Flows: []*config.Flow{{Source: "primary", Target: "dr", ReplicationPolicy: "identity", OffsetSyncsLocation: "target",
			ConnectOffsetsTopic: mm2.ConnectOffsetsTopic("primary"), Topics: config.Topics{Include: demo.Topics}}},
		RefreshInterval: config.Duration(500 * time.Millisecond),
		FlinkTargets:    []*config.FlinkTarget{{Name: "flink-dr", RestURL: flinkURL, Region: "dr"}},
		SavepointDirs:   []string{spDir},
		Drill:           config.Drill{JobArgs: []string{"--group-id", "{group}"}},
	}
	if err := cfg.Normalize("kill-test"); err != nil {
		panic(err)
	}
	return cfg
}

// runbookChild runs run $RUN to the end, announcing each step boundary on
// stdout; at the boundary named in $CRASH_AT ("idx:point") it stops and
// waits to be killed.
func runbookChild() int {
	ctx := context.Background()
	split := func(k string) []string { return strings.Split(os.Getenv(k), ",") }
	cfg := killConfig(split("PRIMARY"), split("DR"), os.Getenv("FLINK"), os.Getenv("SPDIR"))
	store, err := storage.Open(os.Getenv("DB"))
	if err != nil {
		fmt.Println("ERROR", err)
		return 1
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	mon, err := monitor.NewMonitor(ctx, cfg, store, log)
	if err != nil {
		fmt.Println("ERROR", err)
		return 1
	}
	go mon.Run(ctx)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if s := mon.Snapshot("primary->dr"); mon.Ready() && s.Target.OK && s.HeartbeatAge != nil {
			break
		}
		if time.Now().After(deadline) {
			fmt.Println("ERROR monitor not ready")
			return 1
		}
	}
	id, _ := strconv.ParseInt(os.Getenv("RUN"), 10, 64)
	var current int
	var rb *runbook.Runbook
	rb = &runbook.Runbook{Store: store, Config: cfg, Audit: runbook.StoreAuditor{Store: store}, Log: log,
		Flink: flink.NewRESTClient, StopVerifyWindow: time.Second,
		CrashHook: func(point string) {
			if os.Getenv("DRILL") != "" { // the worker runs the steps: ask which
				r, _ := rb.Get(ctx, id)
				current = r.NextStep
			}
			fmt.Printf("AT %d:%s\n", current, point)
			if os.Getenv("CRASH_AT") == fmt.Sprintf("%d:%s", current, point) {
				time.Sleep(time.Minute) // the parent kills us here
			}
		}}
	Equip(rb, Env{Monitor: mon, Catalog: &catalog.Catalog{Store: store, Config: cfg, Monitor: mon}})
	if os.Getenv("DRILL") != "" {
		return drillChild(ctx, rb, id)
	}
	for {
		r, err := rb.Get(ctx, id)
		if err != nil {
			fmt.Println("ERROR", err)
			return 1
		}
		if r.NextStep < 0 {
			fmt.Println("DONE")
			return 0
		}
		current = r.NextStep
		x, err := rb.Begin(ctx, runbook.Actor{Name: "alice", Role: "operator"}, id, r.NextStep, "primary->dr", "")
		if err != nil {
			fmt.Println("ERROR", err)
			return 1
		}
		if err := x.Perform(ctx); err != nil {
			fmt.Println("ERROR", err)
			return 1
		}
	}
}

// killRig is the sandbox, the Flink stand-in, a console database with an
// approved run, and a way to run that run in a child process.
type killRig struct {
	ctx   context.Context
	sb    *demo.Sandbox
	fl    *demo.FlinkStandIn
	db    string
	spDir string // the savepoint directory (rewrite source and destination)
	store *storage.Store
	mon   *monitor.Monitor
	rb    *runbook.Runbook
	plan  runbook.Plan
	// rewrite is the plan's rewrite-savepoint step.
	rewrite runbook.Step
	id      int64
	drill   string // "1": the child runs run id as a drill (drill_kill_test.go)
}

func newKillRig(t *testing.T) *killRig {
	t.Helper()
	if testing.Short() {
		t.Skip("starts child processes")
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	sb, err := demo.Start(ctx, demo.Options{Logger: log, Seed: 5, CheckpointInterval: runbooktest.SandboxCheckpoints})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sb.Close)
	fl, err := demo.StartFlinkStandIn()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fl.Close)
	spDir := t.TempDir()
	cfg := killConfig(sb.PrimaryBootstrap(), sb.DRBootstrap(), fl.URL, spDir)
	db := filepath.Join(t.TempDir(), "drconsole.db")
	store, mon := runbooktest.Monitored(ctx, t, cfg, db, log)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		cps, _ := store.Checkpoints(ctx, "primary->dr")
		if s := mon.Snapshot("primary->dr"); s.Status == model.FlowStatusOK && len(cps) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("sandbox not healthy")
		}
	}
	rb := &runbook.Runbook{Store: store, Config: cfg, Audit: runbook.StoreAuditor{Store: store}, Log: log}
	Equip(rb, Env{Monitor: mon, Catalog: &catalog.Catalog{Store: store, Config: cfg, Monitor: mon}})
	// The savepoint to rewrite: real, with a topic no mirror copies (its
	// partitions start where alice chose).
	rewritetest.RenamedCopy(t, runbooktest.RewriteFixture, filepath.Join(spDir, "src"), "orders-users-source", map[string]string{"users": "clicks"})
	if _, err := envOf(rb).Catalog.Register(ctx, filepath.Join(spDir, "src")); err != nil {
		t.Fatal(err)
	}
	rewrite := runbook.Step{Kind: KindRewriteSavepoint, RewriteFrom: "file:" + spDir + "/src", SourceUID: "orders-users-source", RewriteTo: "file:" + spDir + "/dr",
		Choices: map[string]model.Choice{}}
	pv, err := book(rb).PreviewRewrite(ctx, "primary->dr", rewrite)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range pv.Targets.Rows {
		if !row.Translated() {
			rewrite.Choices[row.Key] = model.Choice{Kind: model.ChoiceEarliest}
		}
	}
	plan := runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{
		{Kind: KindPreflight}, {Kind: KindStopMirror}, {Kind: KindTranslateGroup, Group: "billing", AllowPartial: true}, rewrite,
		{Kind: KindRestoreFlink, FlinkTarget: "flink-dr", JarID: demo.FlinkJarID, SavepointPath: rewrite.RewriteTo},
	}}
	id, err := rb.Create(ctx, runbook.Actor{Name: "alice", Role: "operator"}, plan, "kill drill")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := rb.Get(ctx, id)
	if err := rb.Approve(ctx, runbook.Actor{Name: "bob", Role: "operator"}, id, r.PlanHash, ""); err != nil {
		t.Fatal(err)
	}
	sb.SetMirrorRunning(false) // dedicated MM2 stopped by hand
	return &killRig{ctx: ctx, sb: sb, fl: fl, db: db, spDir: spDir, store: store, mon: mon, rb: rb, plan: plan, rewrite: rewrite, id: id}
}

// child runs the run in a child process on database db; with crashAt it
// SIGKILLs the child there and reports true, else it waits for DONE.
func (k *killRig) child(t *testing.T, db, crashAt string) (killed bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1", "DB="+db, "RUN="+strconv.FormatInt(k.id, 10), "CRASH_AT="+crashAt, "DRILL="+k.drill,
		"PRIMARY="+strings.Join(k.sb.PrimaryBootstrap(), ","), "DR="+strings.Join(k.sb.DRBootstrap(), ","), "FLINK="+k.fl.URL, "SPDIR="+k.spDir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	var seen []string
	for lines.Scan() {
		line := lines.Text()
		seen = append(seen, line)
		if crashAt != "" && line == "AT "+crashAt {
			cmd.Process.Kill() // SIGKILL: no deferred cleanup, no flush
			cmd.Wait()
			return true
		}
		if strings.HasPrefix(line, "ERROR") {
			cmd.Wait()
			t.Fatalf("child (crash at %q): %s\n%s", crashAt, line, strings.Join(seen, "\n"))
		}
	}
	cmd.Wait()
	if crashAt != "" {
		t.Fatalf("child never reached %s:\n%s", crashAt, strings.Join(seen, "\n"))
	}
	if len(seen) == 0 || seen[len(seen)-1] != "DONE" {
		t.Fatalf("final child did not finish:\n%s", strings.Join(seen, "\n"))
	}
	return false
}

func TestRunbookSurvivesSIGKILLAtEveryBoundary(t *testing.T) {
	t.Parallel()
	k := newKillRig(t)
	ctx, rb, store, id, plan, fl, rewrite := k.ctx, k.rb, k.store, k.id, k.plan, k.fl, k.rewrite
	flinkBefore := len(fl.Jobs())
	child := func(crashAt string) bool { return k.child(t, k.db, crashAt) }
	for idx, st := range plan.Steps {
		points := []string{"started", "effect-done"}
		if st.Kind == KindRewriteSavepoint {
			points = []string{"started", "rewrite-written", "effect-done"}
		}
		for _, point := range points {
			if !child(fmt.Sprintf("%d:%s", idx, point)) {
				t.Fatalf("no crash at %d:%s", idx, point)
			}
			r, _ := rb.Get(ctx, id)
			if r.Steps[idx].Status != "running" {
				t.Fatalf("after SIGKILL at %d:%s step %d is %s, want running (interrupted)", idx, point, idx+1, r.Steps[idx].Status)
			}
		}
		// The next child resumes this step and crashes at the next one.
	}
	child("")

	r, _ := rb.Get(ctx, id)
	if r.Status != "completed" {
		t.Fatalf("run %s", r.Status)
	}
	for _, st := range r.Steps {
		want := 3
		if plan.Steps[st.Idx].Kind == KindRewriteSavepoint {
			want = 4
		}
		if st.Status != "done" || st.Attempts != want {
			t.Errorf("step %d: %s after %d attempts, want done after %d", st.Idx+1, st.Status, st.Attempts, want)
		}
	}
	// The rewrite, killed before, after writing and after registering,
	// wrote one savepoint holding exactly its targets, registered as
	// rewritten; the restore started from it.
	rewritten, err := store.SavepointByPath(ctx, rewrite.RewriteTo)
	if err != nil || rewritten.Origin != model.OriginRewritten || rewritten.RewrittenFrom != rewrite.RewriteFrom {
		t.Fatalf("rewritten savepoint in the catalog: %+v %v", rewritten, err)
	}
	if err := book(rb).sameRewrite(ctx, rewrite, mustTargets(t, &runbooktest.Env{RB: rb}, runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{rewrite}})); err != nil {
		t.Fatalf("the rewritten savepoint after SIGKILLs: %v", err)
	}
	for _, req := range fl.Jobs() {
		if req["savepointPath"] != rewrite.RewriteTo || req["allowNonRestoredState"] == true {
			t.Errorf("restore request %v", req)
		}
	}
	// The restore was attempted three times and started one job.
	if n := len(fl.Jobs()) - flinkBefore; n != 1 {
		t.Fatalf("%d Flink jobs started", n)
	}
	// The DR group holds the translated offsets.
	// Three attempts, one change: resumed attempts finish it, never translate anew.
	changes, _ := store.GroupChanges(ctx, "primary->dr", "billing")
	if len(changes) != 1 || changes[0].Status != "applied" {
		t.Fatalf("%d group changes recorded (%+v), want one, applied", len(changes), changes)
	}
	got, err := kadm.NewClient(runbooktest.DRClient(k.mon, "primary->dr")).FetchOffsets(ctx, "billing")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range changes[0].Changes {
		if o, ok := got.Lookup(c.Topic, c.Partition); !ok || o.At != c.Applied {
			t.Errorf("DR group %s-%d at %d, recorded %d", c.Topic, c.Partition, o.At, c.Applied)
		}
	}
	// The audit chain survived eleven SIGKILLs and verifies.
	if n, bad, err := store.VerifyAudit(ctx); err != nil || bad != nil {
		t.Fatalf("audit chain after %d records: %v %v", n, bad, err)
	}
	starts, _ := store.AuditEntries(ctx, storage.AuditFilter{Action: "failover.step-start", Limit: 100})
	if len(starts) != 16 {
		t.Fatalf("%d step starts on record, want 16", len(starts))
	}
}
