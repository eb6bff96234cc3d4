package failback

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/runbook/runbooktest"
)

// stoppedFlink is a Flink REST stand-in for the failback's Flink steps: a
// DR job that stopped with a savepoint (as after a console crash during
// savepoint-dr: FINISHED, its savepoint in the checkpoint history) and jar
// runs on the primary.
type stoppedFlink struct {
	mu   sync.Mutex
	job  string
	sp   flink.Checkpoint
	runs []flink.RunRequest
}

func (f *stoppedFlink) serve(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch p := r.URL.Path; {
		case p == "/config":
			json.NewEncoder(w).Encode(map[string]string{"flink-version": "2.2.1"})
		case p == "/jobs/"+f.job:
			json.NewEncoder(w).Encode(flink.Job{ID: f.job, Name: "events-count", State: "FINISHED"})
		case p == "/jobs/"+f.job+"/checkpoints":
			json.NewEncoder(w).Encode(map[string]any{"latest": map[string]any{"savepoint": f.sp}, "history": []flink.Checkpoint{f.sp}})
		case r.Method == http.MethodPost && strings.HasSuffix(p, "/run"):
			var req flink.RunRequest
			json.NewDecoder(r.Body).Decode(&req)
			f.runs = append(f.runs, req)
			json.NewEncoder(w).Encode(map[string]string{"jobid": req.JobID})
		default:
			w.WriteHeader(404)
			json.NewEncoder(w).Encode(map[string]any{"errors": []string{"not found: " + p}})
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// drSavepointAt writes a copy of a real Flink 2.2.1 savepoint (KafkaSource
// over orders 0-1 and users 0-2, two of the sandbox's mirrored topics)
// with its splits at offsets at, to dest.
func drSavepointAt(t *testing.T, dest string, at map[model.TP]int64) {
	t.Helper()
	targets := map[string]flink.SplitTarget{}
	for tp, off := range at {
		targets[mm2.TPKey(tp)] = flink.SplitTarget{Topic: tp.Topic, Offset: off, Why: "test"}
	}
	if _, err := flink.Rewrite(context.Background(), flink.RewriteRequest{Source: runbooktest.RewriteFixture, Dest: dest, SourceUID: "orders-users-source", Targets: targets}); err != nil {
		t.Fatal(err)
	}
}

// The failback's Flink steps against the Connect and Flink stand-ins and
// the sandbox's clusters: the DR job's savepoint (found in Flink's history
// after a crash, only if taken after stop-reverse) is copied with every
// split moved from DR's recorded end to the primary's, a split inside the
// log is refused naming it, and the job starts on the primary's Flink from
// the copy with allowNonRestoredState off.
func TestFailbackRestoresFlinkOnThePrimary(t *testing.T) {
	t.Parallel()
	e, fc, fo := failedOver(t)
	ctx := context.Background()
	dir := t.TempDir()
	e.Cfg.SavepointDirs = []string{dir}
	book(e.RB).Catalog = &catalog.Catalog{Store: e.Store, Config: e.Cfg, Monitor: e.Mon}
	fl := &stoppedFlink{job: "d0b0"}
	url := fl.serve(t)
	e.RB.Flink = func(string) *flink.RESTClient { return flink.NewRESTClient(url) }
	book(e.RB).Catalog.Flink = e.RB.Flink
	dest := "file:" + filepath.Join(dir, "for-primary")
	plan := WithFlinkBack(FailbackPlan("primary->dr"), runbook.FlinkBack{DRTarget: "flink-dr", DRJob: fl.job, RewriteTo: dest, SourceUID: "orders-users-source",
		Restore: runbook.Step{FlinkTarget: "flink-primary", JarID: "job.jar", Args: []string{"--bootstrap", "primary"}}})
	if got := kindsOf(plan); !strings.Contains(strings.Join(toStrings(got), ","), "stop-reverse,savepoint-dr,rewrite-savepoint-back,restore-flink,restart-forward") {
		t.Fatalf("plan kinds %v", got)
	}
	id := e.Approved(t, ctx, plan)

	// Through stop-reverse: nothing was written in DR, so the reverse
	// source is caught up at the cut.
	cut, err := e.Store.FailoverCut(ctx, fo)
	if err != nil {
		t.Fatal(err)
	}
	cutAt := map[model.TP]int64{}
	for _, c := range cut {
		cutAt[model.TP{Topic: c.RemoteTopic, Partition: c.Partition}] = *c.DREnd
	}
	if err := e.Step(ctx, id, 0); err != nil {
		t.Fatal(err)
	}
	fc.copied("dr-to-primary-MirrorSourceConnector", "dr", cutAt)
	for idx := 1; idx <= 3; idx++ {
		if err := e.Step(ctx, id, idx); err != nil {
			t.Fatalf("step %d: %v", idx+1, err)
		}
	}
	r, _ := e.RB.Get(ctx, id)
	stopped, err := recordedEnds(r)
	if err != nil {
		t.Fatal(err)
	}
	drEnds, err := stopped.dr()
	if err != nil {
		t.Fatal(err)
	}
	primaryEnds, _ := stopped.primary()
	splits := map[model.TP]int64{}
	for _, tp := range []model.TP{{Topic: "orders"}, {Topic: "orders", Partition: 1}, {Topic: "users"}, {Topic: "users", Partition: 1}, {Topic: "users", Partition: 2}} {
		end, ok := drEnds[tp]
		if !ok || end < 3 {
			t.Fatalf("DR end of %s: %d %v (the sandbox mirrors it and has written to it)", mm2.TPKey(tp), end, ok)
		}
		splits[tp] = end
	}

	// 5. savepoint-dr, resumed: the job is FINISHED; a savepoint taken
	// before stop-reverse is not this step's.
	good := filepath.Join(dir, "savepoint-d0b0-good")
	drSavepointAt(t, good, splits)
	stopReverseAt := stepFinished(r, KindStopReverse)
	fl.sp = flink.Checkpoint{ID: 7, Status: "COMPLETED", IsSavepoint: true, ExternalPath: "file:" + good, TriggerTime: stopReverseAt - 1}
	if err := e.Step(ctx, id, 4); err == nil || !strings.Contains(err.Error(), "lists no savepoint of it completed since stop-reverse") {
		t.Fatalf("savepoint-dr with only an older savepoint: %v", err)
	}
	fl.sp.TriggerTime = stopReverseAt + 1
	if err := e.Step(ctx, id, 4); err != nil {
		t.Fatal(err)
	}

	// A savepoint inside the log on a partition (the DR job had not read
	// everything) moves that split as a group's: below the cut, through
	// the forward flow's syncs read backwards, by MM2's rule mirrored.
	behind := map[model.TP]int64{}
	for tp, off := range splits {
		behind[tp] = off
	}
	users1 := model.TP{Topic: "users", Partition: 1}
	behind[users1] = splits[users1] - 3
	bad := filepath.Join(dir, "savepoint-d0b0-behind")
	drSavepointAt(t, bad, behind)
	if _, err := book(e.RB).Catalog.Register(ctx, bad); err != nil {
		t.Fatal(err)
	}
	rb, _ := e.RB.Get(ctx, id)
	rb.Steps[4].Result = `{"savepoint":"file:` + bad + `"}`
	fs, ok := e.Mon.SyncSourceOf("primary->dr", users1, behind[users1])
	if !ok {
		t.Fatalf("no forward sync at or below users-1 %d", behind[users1])
	}
	want := fs.Upstream
	if behind[users1] > fs.Downstream {
		want++
	}
	if p, err := book(e.RB).backTargets(ctx, rb, rb.Plan.Steps[5]); err != nil || p.Err() != nil || p.Targets["users-1"].Offset != want ||
		!strings.Contains(p.Targets["users-1"].Why, "read backwards") || !slices.ContainsFunc(p.Rows, func(r string) bool { return strings.HasPrefix(r, "users-1: users-1 at") }) {
		t.Fatalf("a savepoint behind DR's end: %+v %v; want users-1 at %d (sync %d→%d)", p, err, want, fs.Upstream, fs.Downstream)
	}

	// 6. rewrite-savepoint-back: every split at the primary's recorded end.
	if err := e.Step(ctx, id, 5); err != nil {
		t.Fatal(err)
	}
	k, err := book(e.RB).Catalog.KafkaSplits(ctx, dest, "orders-users-source")
	if err != nil {
		t.Fatal(err)
	}
	if len(k.Partitions) != len(splits) {
		t.Fatalf("rewritten splits %v, want %d", k.Partitions, len(splits))
	}
	for key, p := range k.Partitions {
		tp := model.TP{Topic: p.Topic, Partition: p.Partition}
		if want := primaryEnds[tp]; p.Next != want {
			t.Errorf("%s at %d in the copy, want the primary's end %d (DR's was %d)", key, p.Next, want, drEnds[tp])
		}
	}
	sp, err := e.Store.SavepointByPath(ctx, flink.CanonicalPath(dest))
	if err != nil || sp.Origin != model.OriginRewritten || sp.RewrittenFrom != flink.CanonicalPath("file:"+good) {
		t.Fatalf("catalog entry %+v %v", sp, err)
	}
	// Retried, it reads its own copy back and writes nothing.
	r, _ = e.RB.Get(ctx, id)
	if res, err := book(e.RB).rewriteBack(ctx, runbooktest.Written(t, e), r, r.Plan.Steps[5]); err != nil || !strings.Contains(res.(*failover.SavepointRewritten).Note, "earlier attempt") {
		t.Fatalf("rewrite-back retried: %v %v", res, err)
	}

	// 7. restore-flink on the primary's Flink, from the copy.
	if err := e.Step(ctx, id, 6); err != nil {
		t.Fatal(err)
	}
	if len(fl.runs) != 1 || fl.runs[0].SavepointPath != dest || fl.runs[0].AllowNonRestoredState || fl.runs[0].ClaimMode != "NO_CLAIM" {
		t.Fatalf("jar runs %+v", fl.runs)
	}
	if err := e.Step(ctx, id, 7); err != nil {
		t.Fatal(err)
	}
	if a, err := failover.ActiveSideOf(ctx, e.Store, "primary->dr"); err != nil || a.Side != model.SidePrimary {
		t.Fatalf("after the failback: %+v %v", a, err)
	}
}

func toStrings(ks []runbook.StepKind) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return out
}

func TestFailbackFlinkPlanRefusals(t *testing.T) {
	t.Parallel()
	cfg := &config.Config{
		Clusters: map[string]*config.Cluster{"primary": {Bootstrap: []string{"p:9092"}}, "dr": {Bootstrap: []string{"d:9092"}}},
		Flows:    []*config.Flow{{Source: "primary", Target: "dr", ReplicationPolicy: "identity", ConnectURL: "http://connect:8083"}},
		FlinkTargets: []*config.FlinkTarget{{Name: "flink-dr", RestURL: "http://jm-dr:8081", Region: "dr"},
			{Name: "flink-primary", RestURL: "http://jm-p:8081", Region: "primary"}},
		SavepointDirs: []string{"/savepoints"},
	}
	if err := cfg.Normalize("test"); err != nil {
		t.Fatal(err)
	}
	back := func(mut func(*runbook.FlinkBack)) runbook.Plan {
		fb := runbook.FlinkBack{DRTarget: "flink-dr", DRJob: "j1", RewriteTo: "/savepoints/back", Restore: runbook.Step{FlinkTarget: "flink-primary", JarID: "job.jar"}}
		if mut != nil {
			mut(&fb)
		}
		return WithFlinkBack(FailbackPlan("primary->dr", "g"), fb)
	}
	if err := back(nil).Validate(cfg); err != nil {
		t.Fatalf("the Flink failback plan refused: %v", err)
	}
	if err := back(func(fb *runbook.FlinkBack) { fb.DRJob = "" }).Validate(cfg); err != nil {
		t.Fatalf("restore from the groups' offsets refused: %v", err)
	}
	withDRSavepoint := back(func(fb *runbook.FlinkBack) { fb.DRJob = "" })
	withDRSavepoint.Steps[len(withDRSavepoint.Steps)-2].SavepointPath = "/savepoints/taken-in-dr"
	noRewrite := back(nil)
	noRewrite.Steps = append(noRewrite.Steps[:6:6], noRewrite.Steps[7:]...) // savepoint-dr without its rewrite
	nonRestored := back(nil)
	nonRestored.Steps[7].AllowNonRestoredState = true
	for _, c := range []struct {
		name string
		plan runbook.Plan
		want string
	}{
		{"restore in DR", back(func(fb *runbook.FlinkBack) { fb.Restore.FlinkTarget = "flink-dr" }), "a failback restores the job on the primary"},
		{"savepoint on the primary", back(func(fb *runbook.FlinkBack) { fb.DRTarget = "flink-primary" }), "the job to stop runs in DR"},
		{"no jar", back(func(fb *runbook.FlinkBack) { fb.Restore.JarID = "" }), "name the uploaded jar"},
		{"outside the savepoint dirs", back(func(fb *runbook.FlinkBack) { fb.RewriteTo = "/tmp/back" }), "not inside a configured savepoint directory"},
		{"a DR savepoint as is", withDRSavepoint, "holds DR offsets, which are not the primary's"},
		{"savepoint without rewrite", noRewrite, "the Flink steps are"},
		{"allowNonRestoredState", nonRestored, "allowNonRestoredState must stay off"},
	} {
		if err := c.plan.Validate(cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
