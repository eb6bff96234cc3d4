package failover

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/demo"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/flink/rewritetest"
	"github.com/drconsole/drconsole/flink/s3"
	"github.com/drconsole/drconsole/flink/s3/s3test"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/runbooktest"
	"github.com/drconsole/drconsole/storage"
)

// drillEnv is NewEnv with the sandbox's Flink stand-in as the DR target
// (a production job runs there: FlinkSandboxJobID), a production DR group
// "billing" holding offsets, the drill configured, and a clock the test
// can move forward.
type drillEnv struct {
	*runbooktest.Env
	fl   *demo.FlinkStandIn
	skew atomic.Int64 // added to the wall clock
	// prodOffsets are billing's DR offsets before the drill.
	prodOffsets  kadm.OffsetResponses
	groupsBefore []string
}

func newDrillEnv(t *testing.T) *drillEnv {
	t.Helper()
	e := &drillEnv{Env: runbooktest.NewEnv(t, 1)}
	fl, err := demo.StartFlinkStandIn()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fl.Close)
	e.fl = fl
	e.Cfg.FlinkTargets[0].RestURL = fl.URL
	e.Cfg.Drill = config.Drill{JobArgs: []string{"--output-suffix", "-drill-{run}", "--group-id", "{group}"},
		Timeout: config.Duration(20 * time.Second), CleanupRetry: config.Duration(time.Second)}
	e.RB.Flink = flink.NewRESTClient
	e.RB.Clock = func() time.Time { return time.Now().Add(time.Duration(e.skew.Load())) }
	ctx := context.Background()
	adm := e.drAdmin()
	o := kadm.Offsets{}
	o.Add(kadm.Offset{Topic: "events", Partition: 0, At: 3, LeaderEpoch: -1})
	if err := adm.CommitAllOffsets(ctx, "billing", o); err != nil {
		t.Fatal(err)
	}
	if e.prodOffsets, err = adm.FetchOffsets(ctx, "billing"); err != nil {
		t.Fatal(err)
	}
	e.groupsBefore = e.drGroups(t)
	return e
}

func (e *drillEnv) drAdmin() *kadm.Client {
	return kadm.NewClient(runbooktest.DRClient(e.Mon, "primary->dr"))
}

func (e *drillEnv) drGroups(t *testing.T) []string {
	t.Helper()
	listed, err := e.drAdmin().ListGroups(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return slices.Sorted(slices.Values(listed.Groups()))
}

func drillPlan() runbook.Plan {
	return runbook.Plan{Flow: "primary->dr", Kind: runbook.PlanDrill, Steps: []runbook.Step{
		{Kind: KindPreflight},
		{Kind: KindTranslateGroup, Group: "billing", AllowPartial: true},
		{Kind: KindRestoreFlink, FlinkTarget: "flink-dr", JarID: demo.FlinkJarID, Args: []string{"--bootstrap", "dr"}},
	}}
}

// waitDrill waits until drill id's cleanup has been tried (done or failed).
func (e *drillEnv) waitDrill(t *testing.T, id int64) model.Drill {
	t.Helper()
	for deadline := time.Now().Add(45 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		d, err := e.Store.Drill(context.Background(), id)
		if err == nil && (d.Cleanup == model.CleanupDone || d.Cleanup == model.CleanupFailed) {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("drill %d not finished: %+v %v", id, d, err)
		}
	}
}

// production is untouched: billing's DR offsets are what they were, the
// stand-in's production job runs and was never cancelled, the mirror
// runs, and no group is left in DR that was not there before.
func (e *drillEnv) productionUntouched(t *testing.T) {
	t.Helper()
	after, err := e.drAdmin().FetchOffsets(context.Background(), "billing")
	if err != nil {
		t.Fatal(err)
	}
	before, _ := e.prodOffsets.Lookup("events", 0)
	if o, ok := after.Lookup("events", 0); !ok || o.At != before.At || len(after) != len(e.prodOffsets) {
		t.Errorf("production DR group billing: %v, was %v", after, e.prodOffsets)
	}
	if st := e.fl.JobState(demo.FlinkSandboxJobID); st != "RUNNING" || slices.Contains(e.fl.Cancelled(), demo.FlinkSandboxJobID) {
		t.Errorf("production job %s is %s (cancelled: %v)", demo.FlinkSandboxJobID, st, e.fl.Cancelled())
	}
	if s := e.Mon.Snapshot("primary->dr"); s.HeartbeatAge == nil || *s.HeartbeatAge > 10*time.Second {
		t.Errorf("the mirror stopped during the drill: heartbeat age %v", s.HeartbeatAge)
	}
	if got := e.drGroups(t); !slices.Equal(got, e.groupsBefore) {
		t.Errorf("DR groups after the drill %v, before %v: something was left behind", got, e.groupsBefore)
	}
}

// A drill run end to end through the Worker: planned by alice, approved by
// bob, started by alice. The job copy is submitted with its own id and
// the drill's arguments, timed to RUNNING and to its first record, the
// temporary group holds the translated offsets while the job runs, then
// the job is cancelled and the group deleted; production is untouched and
// everything is on record.
func TestDrillMeasuresAndCleansUp(t *testing.T) {
	t.Parallel()
	e := newDrillEnv(t)
	ctx := context.Background()
	id := approvedRun(t, e.Env, drillPlan())
	w := &Worker{Runbook: e.RB}
	if err := w.RunDrill(ctx, runbooktest.Alice, id, "primary->dr"); err != nil {
		t.Fatal(err)
	}
	d := e.waitDrill(t, id)
	if !d.Succeeded() || d.Cleanup != model.CleanupDone || d.CleanupAttempts != 1 {
		t.Fatalf("drill %+v", d)
	}
	rto, toRunning := *d.RTOMs(), *d.ToRunningMs()
	if rto < demo.StandInFirstRecord.Milliseconds() || rto > 20_000 || toRunning > rto {
		t.Fatalf("achieved RTO %d ms (RUNNING after %d ms): want at least the stand-in's %s", rto, toRunning, demo.StandInFirstRecord)
	}
	if d.RereadMax() == nil || d.RPOMs == nil {
		t.Fatalf("re-read bound %v or RPO %v unknown after a clean drill on a healthy flow", d.RereadMax(), d.RPOMs)
	}
	t.Logf("achieved RTO %d ms, RUNNING after %d ms, RPO %d ms (a lower bound: %v), re-read at most %d", rto, toRunning, *d.RPOMs, d.RPOAtLeast, *d.RereadMax())
	group := DrillGroup(id, "billing")
	if !slices.Equal(d.Groups, []string{group}) {
		t.Fatalf("temporary groups %v", d.Groups)
	}
	// The copy: its own job id, the drill arguments expanded, cancelled.
	r, _ := e.RB.Get(ctx, id)
	jobID := restoreJobID(r, 2)
	req := e.fl.Jobs()[jobID]
	if req == nil || d.JobID != jobID || jobID == demo.FlinkSandboxJobID {
		t.Fatalf("drill job %s: request %v (jobs %v)", jobID, req, e.fl.Jobs())
	}
	var args []string
	for _, a := range req["programArgsList"].([]any) {
		args = append(args, a.(string))
	}
	if want := []string{"--bootstrap", "dr", "--output-suffix", "-drill-" + strconv.FormatInt(id, 10), "--group-id", group}; !slices.Equal(args, want) {
		t.Fatalf("drill job args %q, want %q", args, want)
	}
	if e.fl.JobState(jobID) != "CANCELED" || !slices.Equal(e.fl.Cancelled(), []string{jobID}) {
		t.Fatalf("drill job %s is %s; cancelled %v", jobID, e.fl.JobState(jobID), e.fl.Cancelled())
	}
	// The temporary group held the translated offsets, and is gone.
	changes, _ := e.Store.GroupChanges(ctx, "primary->dr", group)
	if len(changes) != 1 || changes[0].Status != "applied" || len(changes[0].Changes) == 0 {
		t.Fatalf("changes of %s: %+v", group, changes)
	}
	if _, err := e.drAdmin().FetchOffsets(ctx, group); err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
		t.Fatal(err)
	} else if st, _, _ := e.Mon.Translator("primary->dr").DRGroupState(ctx, group); st != "Dead" {
		t.Fatalf("temporary group %s is %s after the cleanup", group, st)
	}
	if cs, _ := e.Store.GroupChanges(ctx, "primary->dr", "billing"); len(cs) != 0 {
		t.Fatalf("the drill recorded changes to the production group: %+v", cs)
	}
	e.productionUntouched(t)
	for action, want := range map[string]int{"drill.start": 1, "drill.cleanup-start": 1, "drill.cleanup-done": 1, "failover.step-start": 3,
		"failover.step-done": 3, "failover.completed": 1} {
		if n := e.Audit.Count(action); n != want {
			t.Errorf("%d %s records, want %d", n, action, want)
		}
	}
	last, err := e.Store.LastDrillSuccess(ctx)
	if err != nil || last["primary->dr"] != *d.CleanupDoneMs {
		t.Fatalf("last success %v %v", last, err)
	}
	// A drill runs once.
	if err := w.RunDrill(ctx, runbooktest.Alice, id, "primary->dr"); err == nil {
		t.Fatal("a finished drill started again")
	}
}

// No drill without approval: nothing is recorded as started, Flink and
// DR are asked nothing. And a plan that would touch production is not a
// drill at all.
func TestDrillRefused(t *testing.T) {
	t.Parallel()
	e := newDrillEnv(t)
	ctx := context.Background()
	id, err := e.RB.Create(ctx, runbooktest.Alice, drillPlan(), "quarterly drill")
	if err != nil {
		t.Fatal(err)
	}
	w := &Worker{Runbook: e.RB}
	if err := w.RunDrill(ctx, runbooktest.Alice, id, "primary->dr"); !errors.Is(err, runbook.ErrNotApproved) {
		t.Fatalf("an unapproved drill: %v", err)
	}
	r, _ := e.RB.Get(ctx, id)
	if err := e.RB.Approve(ctx, runbooktest.Bob, id, r.PlanHash, ""); err != nil {
		t.Fatal(err)
	}
	if err := w.RunDrill(ctx, runbooktest.Vera, id, "primary->dr"); !errors.Is(err, runbook.ErrRole) {
		t.Fatalf("a viewer ran a drill: %v", err)
	}
	if err := w.RunDrill(ctx, runbooktest.Alice, id, "primary"); !errors.Is(err, runbook.ErrConfirmation) {
		t.Fatalf("a drill without the flow's name typed: %v", err)
	}
	if _, err := e.Store.Drill(ctx, id); !errors.Is(err, storage.ErrNotFound) || len(e.fl.Jobs()) != 0 || e.Audit.Count("drill.start") != 0 {
		t.Fatalf("a refused drill left %v, jobs %v", err, e.fl.Jobs())
	}
	// The run page's previews say what the drill changes, not what a failover would.
	r, _ = e.RB.Get(ctx, id)
	if pv := e.RB.PreviewStep(ctx, r, 1); pv.Err != "" || len(pv.Lines) == 0 || !strings.Contains(pv.Lines[0], DrillGroup(id, "billing")+", which must not exist") {
		t.Errorf("translate preview %+v", pv)
	}
	if pv := e.RB.PreviewStep(ctx, r, 2); !strings.Contains(strings.Join(pv.Lines, "\n"), "--group-id "+DrillGroup(id, "billing")) {
		t.Errorf("restore preview %+v", pv)
	}
	// The configured drill arguments went into the plan: approvals cover them.
	if got := r.Plan.Steps[2].DrillArgs; !slices.Equal(got, e.Cfg.Drill.JobArgs) {
		t.Fatalf("plan drill args %q", got)
	}
	for name, change := range map[string]func(*runbook.Plan){
		"stop the mirror":   func(p *runbook.Plan) { p.Steps = slices.Insert(p.Steps, 1, runbook.Step{Kind: KindStopMirror}) },
		"no drill args":     func(p *runbook.Plan) { p.Steps[2].DrillArgs = []string{} },
		"no restore":        func(p *runbook.Plan) { p.Steps = p.Steps[:2] },
		"restore not last":  func(p *runbook.Plan) { p.Steps = append(p.Steps, runbook.Step{Kind: KindPreflight}) },
		"a temporary group": func(p *runbook.Plan) { p.Steps[1].Group = DrillGroup(3, "billing") },
	} {
		p := drillPlan()
		change(&p)
		if name == "no drill args" {
			e.Cfg.Drill.JobArgs = nil
		}
		if _, err := e.RB.Create(ctx, runbooktest.Alice, p, "drill"); err == nil {
			t.Errorf("%s: a drill plan accepted", name)
		}
		e.Cfg.Drill.JobArgs = []string{"--group-id", "{group}"}
	}
	e.productionUntouched(t)
}

// A temporary group that exists before the drill is not the drill's: the
// translate step is refused, and the cleanup leaves that group alone.
func TestDrillRefusesAnExistingTemporaryGroup(t *testing.T) {
	t.Parallel()
	e := newDrillEnv(t)
	ctx := context.Background()
	id := approvedRun(t, e.Env, drillPlan())
	squatter := DrillGroup(id, "billing")
	o := kadm.Offsets{}
	o.Add(kadm.Offset{Topic: "events", Partition: 0, At: 1, LeaderEpoch: -1})
	if err := e.drAdmin().CommitAllOffsets(ctx, squatter, o); err != nil {
		t.Fatal(err)
	}
	if err := (&Worker{Runbook: e.RB}).RunDrill(ctx, runbooktest.Alice, id, "primary->dr"); err != nil {
		t.Fatal(err)
	}
	d := e.waitDrill(t, id)
	if d.Succeeded() || d.Outcome != model.DrillFailed || !strings.Contains(d.Error, "exists in DR already") || d.Cleanup != model.CleanupDone {
		t.Fatalf("drill %+v", d)
	}
	if offs, err := e.drAdmin().FetchOffsets(ctx, squatter); err != nil || offs["events"][0].At != 1 {
		t.Fatalf("the pre-existing group %s after the drill: %v %v", squatter, offs, err)
	}
	if len(e.fl.Jobs()) != 0 {
		t.Fatalf("jobs submitted after a refused step: %v", e.fl.Jobs())
	}
}

// A cleanup that cannot finish (Flink does not answer) is recorded as
// failed with its error, the drill is not a success, and the worker tries
// again at the retry time and finishes it.
func TestDrillCleanupRetried(t *testing.T) {
	t.Parallel()
	e := newDrillEnv(t)
	ctx := context.Background()
	id := approvedRun(t, e.Env, drillPlan())
	var down atomic.Bool
	e.RB.Flink = func(url string) *flink.RESTClient {
		if down.Load() {
			return flink.NewRESTClient("http://127.0.0.1:1")
		}
		return flink.NewRESTClient(url)
	}
	w := &Worker{Runbook: e.RB}
	// The JobManager goes away as soon as the job's first record is seen.
	e.RB.CrashHook = func(point string) {
		if point == "effect-done" {
			if d, err := e.Store.Drill(ctx, id); err == nil && d.FirstRecordMs != nil {
				down.Store(true)
			}
		}
	}
	if err := w.RunDrill(ctx, runbooktest.Alice, id, "primary->dr"); err != nil {
		t.Fatal(err)
	}
	d := e.waitDrill(t, id)
	if d.Cleanup != model.CleanupFailed || d.Succeeded() || d.CleanupError == "" || d.CleanupNextMs == 0 || d.Outcome != model.DrillMeasured {
		t.Fatalf("drill after a failed cleanup: %+v", d)
	}
	if last, _ := e.Store.LastDrillSuccess(ctx); len(last) != 0 {
		t.Fatalf("a drill whose cleanup failed counts as a success: %v", last)
	}
	// Not due yet: nothing is tried.
	if n, err := w.CleanDrills(ctx); err != nil || n != 0 {
		t.Fatalf("cleanup tried before its retry time: %d %v", n, err)
	}
	down.Store(false)
	e.skew.Store(int64(time.Minute))
	if n, err := w.CleanDrills(ctx); err != nil || n != 1 {
		t.Fatalf("cleanup retry: %d %v", n, err)
	}
	d, _ = e.Store.Drill(ctx, id)
	if !d.Succeeded() || d.CleanupAttempts != 2 {
		t.Fatalf("drill after the retry: %+v", d)
	}
	e.productionUntouched(t)
	if n := e.Audit.Count("drill.cleanup-failed"); n != 1 {
		t.Fatalf("%d failed cleanups on record", n)
	}
}

// A drill that restores a rewritten copy of a savepoint removes the copy
// in its cleanup, directory and catalog entry, once the job copy is
// cancelled; the savepoint it was rewritten from stays. On a local
// directory and on S3 alike.
func TestDrillRemovesItsRewrittenCopy(t *testing.T) {
	for _, where := range []string{"local", "s3"} {
		t.Run(where, func(t *testing.T) { drillRemovesItsCopy(t, where) })
	}
}

func drillRemovesItsCopy(t *testing.T, where string) {
	e := newDrillEnv(t)
	e.Cfg.Drill.JobArgs = []string{"--output-suffix", "-drill-{run}"} // the restored state holds the offsets: no group
	ctx := context.Background()
	dir := t.TempDir()
	rewritetest.RenamedCopy(t, runbooktest.RewriteFixture, filepath.Join(dir, "src"), "orders-users-source", nil)
	src, copyTo := "file:"+filepath.Join(dir, "src"), "file:"+filepath.Join(dir, "drill-copy")
	e.Cfg.SavepointDirs = []string{dir}
	envOf(e.RB).Catalog = &catalog.Catalog{Store: e.Store, Config: e.Cfg, Monitor: e.Mon}
	srcThere := func() error { _, err := os.Stat(filepath.Join(dir, "src", flink.MetadataFileName)); return err }
	copyGone := func() error {
		if _, err := os.Lstat(filepath.Join(dir, "drill-copy")); !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("the drill's rewritten copy is still there: %v", err)
		}
		return nil
	}
	if where == "s3" {
		fs3 := s3test.Start(t, "flink")
		meta, err := os.ReadFile(filepath.Join(dir, "src", flink.MetadataFileName))
		if err != nil {
			t.Fatal(err)
		}
		fs3.Put(t, "savepoints/src/_metadata", meta)
		store, err := s3.New(fs3.Config)
		if err != nil {
			t.Fatal(err)
		}
		src, copyTo = "s3://flink/savepoints/src", "s3://flink/savepoints/drill-copy"
		e.Cfg.SavepointDirs, e.Cfg.S3 = []string{"s3://flink/savepoints"}, fs3.Config
		envOf(e.RB).Catalog.S3 = store
		srcThere = func() error {
			if ok, err := store.Exists(ctx, src+"/_metadata"); !ok {
				return fmt.Errorf("the source savepoint is gone: %v", err)
			}
			return nil
		}
		copyGone = func() error {
			if empty, err := store.Empty(ctx, copyTo); err != nil || !empty {
				return fmt.Errorf("the drill's rewritten copy is still on S3: %v", err)
			}
			return nil
		}
	}
	if _, err := envOf(e.RB).Catalog.Register(ctx, strings.TrimPrefix(src, "file:")); err != nil {
		t.Fatal(err)
	}
	rewrite := runbook.Step{Kind: KindRewriteSavepoint, RewriteFrom: src, SourceUID: "orders-users-source", RewriteTo: copyTo}
	p, err := book(e.RB).PreviewRewrite(ctx, "primary->dr", rewrite)
	if err != nil {
		t.Fatal(err)
	}
	// Whatever does not translate now starts at DR's earliest, chosen.
	for _, row := range p.Targets.Rows {
		if row.Target == nil {
			if rewrite.Choices == nil {
				rewrite.Choices = map[string]model.Choice{}
			}
			rewrite.Choices[row.Key] = model.Choice{Kind: model.ChoiceEarliest}
		}
	}
	plan := runbook.Plan{Flow: "primary->dr", Kind: runbook.PlanDrill, Steps: []runbook.Step{rewrite,
		{Kind: KindRestoreFlink, FlinkTarget: "flink-dr", JarID: demo.FlinkJarID, Args: []string{"--bootstrap", "dr"}, SavepointPath: copyTo}}}
	id := approvedRun(t, e.Env, plan)
	if err := (&Worker{Runbook: e.RB}).RunDrill(ctx, runbooktest.Alice, id, "primary->dr"); err != nil {
		t.Fatal(err)
	}
	d := e.waitDrill(t, id)
	if d.Cleanup != model.CleanupDone || !d.Succeeded() {
		r, _ := e.RB.Get(ctx, id)
		t.Fatalf("drill %+v, steps %+v", d, r.Steps)
	}
	if err := copyGone(); err != nil {
		t.Error(err)
	}
	if _, err := e.Store.SavepointByPath(ctx, flink.CanonicalPath(copyTo)); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("the copy's catalog entry after the cleanup: %v", err)
	}
	if _, err := e.Store.SavepointByPath(ctx, flink.CanonicalPath(src)); err != nil {
		t.Errorf("the source savepoint's entry: %v", err)
	}
	if err := srcThere(); err != nil {
		t.Error(err)
	}
	e.productionUntouched(t)
}
