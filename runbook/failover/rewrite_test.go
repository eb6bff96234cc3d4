package failover

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/flink/rewritetest"
	"github.com/drconsole/drconsole/flink/s3"
	"github.com/drconsole/drconsole/flink/s3/s3test"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/runbooktest"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/translation"
)

// rewriteEnv is a sandbox flow with a savepoint directory holding a source
// savepoint in the catalog: the real fixture with "users" renamed "clicks"
// (a topic the sandbox does not mirror: no offset sync will ever
// translate it), "orders" kept (mirrored: its offsets translate).
func rewriteEnv(t *testing.T) (*runbooktest.Env, string) {
	t.Helper()
	e := runbooktest.NewEnv(t, 1)
	dir := t.TempDir()
	e.Cfg.SavepointDirs = []string{dir}
	envOf(e.RB).Catalog = &catalog.Catalog{Store: e.Store, Config: e.Cfg, Monitor: e.Mon}
	rewritetest.RenamedCopy(t, runbooktest.RewriteFixture, filepath.Join(dir, "src"), "orders-users-source", map[string]string{"users": "clicks"})
	if _, err := envOf(e.RB).Catalog.Register(context.Background(), filepath.Join(dir, "src")); err != nil {
		t.Fatal(err)
	}
	return e, dir
}

func rewritePlan(dir, to string, choices map[string]model.Choice) runbook.Plan {
	return runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{
		{Kind: KindRewriteSavepoint, RewriteFrom: "file:" + dir + "/src", SourceUID: "orders-users-source", RewriteTo: "file:" + dir + "/" + to, Choices: choices},
		{Kind: KindRestoreFlink, FlinkTarget: "flink-dr", JarID: "job.jar", SavepointPath: "file:" + dir + "/" + to},
	}}
}

// approvedRun is plan as alice created it and bob approved it.
func approvedRun(t *testing.T, e *runbooktest.Env, plan runbook.Plan) int64 {
	t.Helper()
	ctx := context.Background()
	id, err := e.RB.Create(ctx, runbooktest.Alice, plan, "drill")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := e.RB.Get(ctx, id)
	if err := e.RB.Approve(ctx, runbooktest.Bob, id, r.PlanHash, ""); err != nil {
		t.Fatal(err)
	}
	return id
}

// run begins and runs step idx of run id as who, recovering a simulated
// crash (a panic from the crash hook).
func runStep(ctx context.Context, rb *runbook.Runbook, who runbook.Actor, id int64, idx int) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = v.(error)
		}
	}()
	x, err := rb.Begin(ctx, who, id, idx, "primary->dr", "")
	if err != nil {
		return err
	}
	return x.Perform(ctx)
}

// The rewrite through the runbook with two operators: the plan form's
// preview lists the partitions needing a choice; without them the step is
// refused (on record, nothing written); with alice's choices, approved by
// bob, it writes the savepoint with exactly the previewed targets,
// survives a crash between writing and registering, registers it as
// rewritten, and the restore starts the job from it with the same uid and
// without allowNonRestoredState.
func TestRewriteSavepointStepThroughTheRunbook(t *testing.T) {
	e, dir := rewriteEnv(t)
	ctx := context.Background()
	e.SB.SetMirrorRunning(false) // the translation holds still

	// Plan validation.
	bad := rewritePlan(dir, "dr", nil)
	bad.Steps[1].AllowNonRestoredState = true
	if _, err := e.RB.Create(ctx, runbooktest.Alice, bad, "drill"); err == nil || !strings.Contains(err.Error(), "allowNonRestoredState must stay off") {
		t.Fatalf("restore of a rewritten savepoint with allowNonRestoredState: %v", err)
	}
	bad = rewritePlan(dir, "dr", nil)
	bad.Steps[0], bad.Steps[1] = bad.Steps[1], bad.Steps[0]
	if _, err := e.RB.Create(ctx, runbooktest.Alice, bad, "drill"); err == nil || !strings.Contains(err.Error(), "writes later") {
		t.Fatalf("restore before the rewrite: %v", err)
	}
	bad = rewritePlan(dir, "dr", nil)
	bad.Steps[0].RewriteTo = "file:" + t.TempDir() + "/dr"
	if _, err := e.RB.Create(ctx, runbooktest.Alice, bad, "drill"); err == nil || !strings.Contains(err.Error(), "not inside a configured savepoint directory") {
		t.Fatalf("a destination outside the savepoint directories: %v", err)
	}
	bad = rewritePlan(dir, "src/dr", nil)
	if _, err := e.RB.Create(ctx, runbooktest.Alice, bad, "drill"); err == nil || !strings.Contains(err.Error(), "neither the source") {
		t.Fatalf("a destination inside the source: %v", err)
	}

	// The preview before planning: clicks never translates.
	plan := rewritePlan(dir, "dr", nil)
	pv, err := book(e.RB).PreviewRewrite(ctx, plan.Flow, plan.Steps[0])
	if err != nil {
		t.Fatal(err)
	}
	choices := map[string]model.Choice{}
	for _, r := range pv.Targets.Rows {
		if r.Target == nil {
			choices[r.Key] = model.Choice{Kind: model.ChoiceEarliest}
		}
	}
	for _, key := range []string{"clicks-0", "clicks-1", "clicks-2"} {
		if _, ok := choices[key]; !ok {
			t.Fatalf("%s needs no choice: %+v", key, pv.Targets.Rows)
		}
	}
	choices["clicks-1"] = model.Choice{Kind: model.ChoiceLatest}

	// Without choices the step is refused before it starts.
	id := approvedRun(t, e, plan)
	if err := runStep(ctx, e.RB, runbooktest.Alice, id, 0); !errors.Is(err, runbook.ErrRuleViolation) || !strings.Contains(err.Error(), "clicks-0") {
		t.Fatalf("rewrite without choices: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "dr")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused rewrite wrote its destination: %v", err)
	}
	if n := e.Audit.Count("failover.step-refused"); n != 1 {
		t.Fatalf("%d refusals on record, want 1", n)
	}

	// Alice plans again with her choices; bob approves.
	if err := e.RB.Cancel(ctx, runbooktest.Alice, id, "choices missing"); err != nil {
		t.Fatal(err)
	}
	plan.Steps[0].Choices = choices
	id = approvedRun(t, e, plan)
	r, _ := e.RB.Get(ctx, id)
	if c := r.Plan.Steps[0].Choices["clicks-1"]; c.By != "alice" || c.Kind != model.ChoiceLatest {
		t.Fatalf("stored choice %+v", c)
	}

	// A crash after the savepoint is written, before it is registered.
	crashed := errors.New("crash")
	e.RB.CrashHook = func(p string) {
		if p == "rewrite-written" {
			panic(crashed)
		}
	}
	if err := runStep(ctx, e.RB, runbooktest.Alice, id, 0); !errors.Is(err, crashed) {
		t.Fatalf("crash did not happen: %v", err)
	}
	if _, err := e.Store.SavepointByPath(ctx, "file:"+dir+"/dr"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("registered before the crash point: %v", err)
	}
	runbook.Restarted()
	e.RB.CrashHook = nil
	// The restore cannot run before the rewrite is done.
	if err := runStep(ctx, e.RB, runbooktest.Alice, id, 1); !errors.Is(err, runbook.ErrOrder) {
		t.Fatalf("restore before the rewrite finished: %v", err)
	}
	if err := runStep(ctx, e.RB, runbooktest.Alice, id, 0); err != nil {
		t.Fatalf("resumed rewrite: %v", err)
	}
	r, _ = e.RB.Get(ctx, id)
	var res map[string]any
	if err := json.Unmarshal([]byte(r.Steps[0].Result), &res); err != nil || !strings.Contains(res["note"].(string), "earlier attempt") {
		t.Fatalf("resumed rewrite result %s %v", r.Steps[0].Result, err)
	}

	// The new savepoint holds exactly the previewed targets.
	got, err := envOf(e.RB).Catalog.KafkaSplits(ctx, filepath.Join(dir, "dr"), "orders-users-source")
	if err != nil {
		t.Fatal(err)
	}
	pv, err = book(e.RB).PreviewRewrite(ctx, plan.Flow, plan.Steps[0])
	if err != nil || !pv.Targets.Complete() {
		t.Fatalf("preview with choices: %v %v", err, pv.Targets.Err())
	}
	if pv.Check == nil || pv.CheckErr != "" || !strings.Contains(strings.Join(pv.Lines(plan.Flow, plan.Steps[0]), "\n"), "The rewriter's dry run accepts it: 0 state file(s)") {
		t.Fatalf("the rewriter's dry run in the preview: %+v %q", pv.Check, pv.CheckErr)
	}
	for key, want := range pv.Targets.Targets() {
		tp, _ := flinkKey(key)
		if g := got.Partitions[want.Topic+"-"+tp]; g.Next != want.Offset {
			t.Errorf("%s: rewritten at %d, want %d (%s)", key, g.Next, want.Offset, want.Why)
		}
	}
	if got.Partitions["clicks-0"].Next != flink.OffsetEarliest || got.Partitions["clicks-1"].Next != flink.OffsetLatest || len(got.Partitions) != 5 {
		t.Fatalf("rewritten splits %+v", got.Partitions)
	}
	sp, err := e.Store.SavepointByPath(ctx, "file:"+dir+"/dr")
	if err != nil || sp.Origin != model.OriginRewritten || sp.RewrittenFrom != "file:"+dir+"/src" || sp.RewrittenFlow != "primary->dr" {
		t.Fatalf("catalog entry %+v %v", sp, err)
	}

	// A rewritten copy is never rewritten again: its offsets are DR's.
	again := rewritePlan(dir, "dr-again", choices).Steps[0]
	again.RewriteFrom = "file:" + dir + "/dr"
	if _, err := book(e.RB).PreviewRewrite(ctx, plan.Flow, again); err == nil || !strings.Contains(err.Error(), "itself a rewritten copy") {
		t.Fatalf("rewriting a rewritten savepoint: %v", err)
	}

	// The restore: same uid (nothing to change), allowNonRestoredState off.
	if err := runStep(ctx, e.RB, runbooktest.Alice, id, 1); err != nil {
		t.Fatal(err)
	}
	if len(e.Flink.Jobs) != 1 {
		t.Fatalf("%d jobs started", len(e.Flink.Jobs))
	}
	for _, req := range e.Flink.Jobs {
		if req.SavepointPath != "file:"+dir+"/dr" || req.AllowNonRestoredState {
			t.Fatalf("restore request %+v", req)
		}
	}
	// The choices and who made them are on record with the step.
	starts, _ := e.Store.AuditEntries(ctx, storage.AuditFilter{Action: "failover.step-start"})
	if found := false; !found {
		for _, s := range starts {
			found = found || strings.Contains(string(s.Details), `"clicks-1":{"kind":"latest","by":"alice"}`)
		}
		if !found {
			t.Fatal("the step's start record does not hold alice's choice")
		}
	}
}

// A destination holding anything but this step's exact rewrite is neither
// overwritten nor used: the step fails and leaves it as it was.
func TestRewriteSavepointRefusesForeignDestination(t *testing.T) {
	t.Parallel()
	e, dir := rewriteEnv(t)
	ctx := context.Background()
	e.SB.SetMirrorRunning(false)
	all := func(kind string) map[string]model.Choice {
		c := map[string]model.Choice{}
		for _, key := range []string{"orders-0", "orders-1", "clicks-0", "clicks-1", "clicks-2"} {
			c[key] = model.Choice{Kind: kind}
		}
		return c
	}
	// "taken" is the rewrite with every partition at latest...
	plan := rewritePlan(dir, "taken", all(model.ChoiceLatest))
	pv, err := book(e.RB).PreviewRewrite(ctx, plan.Flow, plan.Steps[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range pv.Targets.Rows {
		if r.Translated() {
			delete(plan.Steps[0].Choices, r.Key) // a choice is only for what does not translate
		}
	}
	if _, err := flink.Rewrite(ctx, flink.RewriteRequest{Source: filepath.Join(dir, "src"), Dest: filepath.Join(dir, "taken"),
		SourceUID: "orders-users-source", Targets: mustTargets(t, e, plan)}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "taken", flink.MetadataFileName))
	// ... and the plan wants earliest where it holds latest.
	for key := range plan.Steps[0].Choices {
		plan.Steps[0].Choices[key] = model.Choice{Kind: model.ChoiceEarliest}
	}
	id := approvedRun(t, e, plan)
	err = runStep(ctx, e.RB, runbooktest.Alice, id, 0)
	if err == nil || !strings.Contains(err.Error(), "exists already and is not this step's rewrite") || !strings.Contains(err.Error(), "clicks-0 at -1, not -2") {
		t.Fatalf("foreign destination: %v", err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "taken", flink.MetadataFileName))
	if string(before) != string(after) {
		t.Fatal("the foreign destination was changed")
	}
	if _, err := e.Store.SavepointByPath(ctx, "file:"+dir+"/taken"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("a foreign destination was registered: %v", err)
	}
	// The restore depending on it refuses too (its rule: the rewrite did not succeed).
	r, _ := e.RB.Get(ctx, id)
	if r.Steps[0].Status != model.StepFailed {
		t.Fatalf("rewrite step %s", r.Steps[0].Status)
	}
	if ok, why := book(e.RB).rewriteDone(ctx, r, 0); ok || !strings.Contains(why, "has not succeeded") {
		t.Fatalf("rewriteDone after a failed rewrite: %v %s", ok, why)
	}
	// Both restore paths (Flink REST and Kubernetes) pass the same gate.
	restore := runbook.Step{Kind: KindRestoreFlink, FlinkTarget: "flink-dr", SavepointPath: plan.Steps[0].RewriteTo}
	if err := book(e.RB).RewrittenReady(ctx, r, restore); err == nil || !strings.Contains(err.Error(), "not restoring the rewritten savepoint") {
		t.Fatalf("restore gate after a failed rewrite: %v", err)
	}
}

func mustTargets(t *testing.T, e *runbooktest.Env, p runbook.Plan) map[string]flink.SplitTarget {
	t.Helper()
	pv, err := book(e.RB).PreviewRewrite(context.Background(), p.Flow, p.Steps[0])
	if err != nil || !pv.Targets.Complete() {
		t.Fatalf("%v %v", err, pv.Targets.Err())
	}
	return pv.Targets.Targets()
}

// flinkKey splits "topic-partition" into its partition number as text.
func flinkKey(key string) (string, string) {
	i := strings.LastIndexByte(key, '-')
	return key[i+1:], key[:i]
}

// The run page's preview of a rewrite: per split the old and the new
// position (or why there is none), the re-read bound, the refusal to
// come; the restore names its dependency. Cached like every preview, it
// says when the catalog changed under it.
func TestRewritePreviewContentAndCache(t *testing.T) {
	t.Parallel()
	e, dir := rewriteEnv(t)
	ctx := context.Background()
	e.SB.SetMirrorRunning(false)
	plan := rewritePlan(dir, "dr", map[string]model.Choice{"clicks-0": {Kind: model.ChoiceEarliest}})
	id, err := e.RB.Create(ctx, runbooktest.Alice, plan, "drill")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := e.RB.Get(ctx, id)
	pv := e.RB.Previews(ctx, r)
	text := strings.Join(pv[0].Lines, "\n")
	for _, want := range []string{
		"Reads the KafkaSource state (uid orders-users-source, 5 split(s)) of catalog savepoint",
		"Writes a new savepoint at file:" + dir + "/dr",
		"Topic names stay the same in DR.",
		"clicks-0 (subtask 0) primary 200 → clicks-0 earliest: earliest (chosen by alice: no offset sync known for this partition)",
		"clicks-1 (subtask 0) primary 270: NO TRANSLATION, NO CHOICE",
		"orders-0 (subtask 0) primary 300",
		"record(s) in all may be processed twice on translated partitions",
		"THE STEP WILL BE REFUSED: 2 partition(s) have no translation",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("rewrite preview lacks %q:\n%s", want, text)
		}
	}
	if len(pv[0].Rules) != 1 || pv[0].Rules[0].OK || pv[0].Rules[0].Overridable {
		t.Errorf("rewrite rules %+v", pv[0].Rules)
	}
	restore := strings.Join(pv[1].Lines, "\n")
	if !strings.Contains(restore, "This is the savepoint step 1 rewrites") || len(pv[1].Rules) != 1 || pv[1].Rules[0].OK ||
		!strings.Contains(pv[1].Rules[0].Evidence, "step 1 has not succeeded") {
		t.Errorf("restore preview %s %+v", restore, pv[1].Rules)
	}
	// Something appears at the destination: the cached preview says its
	// input changed (and is not recomputed behind the operator's back).
	if _, err := flink.Rewrite(ctx, flink.RewriteRequest{Source: filepath.Join(dir, "src"), Dest: filepath.Join(dir, "dr"),
		SourceUID: "orders-users-source", Targets: mustTargets(t, e, rewritePlan(dir, "dr", map[string]model.Choice{
			"clicks-0": {Kind: model.ChoiceLatest}, "clicks-1": {Kind: model.ChoiceLatest}, "clicks-2": {Kind: model.ChoiceLatest},
			"orders-0": {Kind: model.ChoiceLatest}, "orders-1": {Kind: model.ChoiceLatest}}))}); err != nil {
		t.Fatal(err)
	}
	if _, err := envOf(e.RB).Catalog.Register(ctx, filepath.Join(dir, "dr")); err != nil {
		t.Fatal(err)
	}
	again := e.RB.Previews(ctx, r)
	if !again[0].At.Equal(pv[0].At) || len(again[0].Changed) == 0 || !strings.Contains(strings.Join(again[0].Changed, ";"), "new savepoint in the catalog") {
		t.Fatalf("cached preview after the destination appeared: at %v (was %v), changed %q", again[0].At, pv[0].At, again[0].Changed)
	}
}

// Renamed topics (the default policy) are listed once each, and each
// split's line says where it goes and why.
func TestRewritePreviewLinesRename(t *testing.T) {
	t.Parallel()
	tg := &translation.RewriteTargets{Renamed: map[string]string{"events": "primary.events"}, RereadMax: 3, Rows: []translation.TargetRow{
		{Key: "events-0", Source: model.TP{Topic: "events"}, DR: model.TP{Topic: "primary.events"}, Subtask: 1, Offset: 100,
			Translation: mm2Translation(90, "conservative", 3), Target: &flink.SplitTarget{Topic: "primary.events", Offset: 90}},
	}}
	p := &RewritePreview{Source: model.Savepoint{ID: 3, Path: "file:/sp/a"}, SourceUID: "src", Splits: 1, Targets: tg}
	text := strings.Join(p.Lines("primary->dr", runbook.Step{RewriteTo: "file:/sp/a-dr"}), "\n")
	for _, want := range []string{"Topic renamed: events → primary.events", "events-0 (subtask 1) primary 100 → primary.events-0 90 (conservative, may re-read ≤ 3)",
		"At most 3 record(s)"} {
		if !strings.Contains(text, want) {
			t.Errorf("lines lack %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "REFUSED") || strings.Contains(text, "stay the same") {
		t.Errorf("lines:\n%s", text)
	}
}

func mm2Translation(off int64, method string, reread int64) mm2.Translation {
	return mm2.Translation{Offset: off, Method: mm2.Method(method), RereadMax: reread}
}

// The same step with the savepoints on S3: the source read from the
// store, the copy written there (flink.Rewrite's S3 destination), found
// again after a crash between writing and registering, and registered
// with its s3:// path.
func TestRewriteSavepointStepOnS3(t *testing.T) {
	e, _, plan, pv := s3RewriteEnv(t)
	ctx := context.Background()
	id := approvedRun(t, e, plan)
	e.RB.CrashHook = func(p string) {
		if p == "rewrite-written" {
			panic(errors.New("crash"))
		}
	}
	if err := runStep(ctx, e.RB, runbooktest.Alice, id, 0); err == nil || err.Error() != "crash" {
		t.Fatalf("crash did not happen: %v", err)
	}
	runbook.Restarted()
	e.RB.CrashHook = nil
	if err := runStep(ctx, e.RB, runbooktest.Alice, id, 0); err != nil {
		t.Fatalf("resumed rewrite on S3: %v", err)
	}
	sp, err := e.Store.SavepointByPath(ctx, "s3://flink/savepoints/dr")
	if err != nil || sp.Origin != model.OriginRewritten || sp.RewrittenFrom != "s3://flink/savepoints/src" {
		t.Fatalf("catalog entry %+v %v", sp, err)
	}
	offs, err := sp.Offsets()
	if err != nil || len(offs) != countRows(pv.Targets, true) || !strings.Contains(sp.ReadError, "clicks-0 (latest)") {
		t.Fatalf("offsets read back from S3: %v %v (%s)", offs, err, sp.ReadError)
	}
	for _, r := range pv.Targets.Rows {
		if r.Translated() && offs[mm2.TPKey(r.DR)] != r.Target.Offset {
			t.Errorf("%s on S3 at %d, want %d", r.Key, offs[mm2.TPKey(r.DR)], r.Target.Offset)
		}
	}
}

// A crash in the middle of writing to S3 leaves state objects without
// `_metadata` at the destination (the rewriter cannot clean up after its
// own death): the step refuses it and says exactly which prefix to delete;
// nothing is registered.
func TestRewriteSavepointStepOnS3Leftover(t *testing.T) {
	e, store, plan, _ := s3RewriteEnv(t)
	ctx := context.Background()
	if err := store.WriteFile(ctx, "s3://flink/savepoints/dr/op-state-1", []byte("half a copy")); err != nil {
		t.Fatal(err)
	}
	id := approvedRun(t, e, plan)
	err := runStep(ctx, e.RB, runbooktest.Alice, id, 0)
	for _, want := range []string{"no _metadata", "delete every object under s3://flink/savepoints/dr/", "aws s3 rm --recursive s3://flink/savepoints/dr/"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("step on a leftover prefix: %v; want it to say %q", err, want)
		}
	}
	if sp, err := e.Store.SavepointByPath(ctx, "s3://flink/savepoints/dr"); err == nil {
		t.Errorf("registered %+v", sp)
	}
}

// s3RewriteEnv is a runbook whose catalog's savepoints are on S3: a
// rewritable source at s3://flink/savepoints/src (registered), and the plan
// rewriting it to s3://flink/savepoints/dr with "latest" for the splits
// without a translation.
func s3RewriteEnv(t *testing.T) (*runbooktest.Env, *s3.Store, runbook.Plan, *RewritePreview) {
	t.Helper()
	e := runbooktest.NewEnv(t, 1)
	ctx := context.Background()
	e.SB.SetMirrorRunning(false)
	fs3 := s3test.Start(t, "flink")
	local := filepath.Join(t.TempDir(), "src")
	rewritetest.RenamedCopy(t, runbooktest.RewriteFixture, local, "orders-users-source", map[string]string{"users": "clicks"})
	meta, err := os.ReadFile(filepath.Join(local, flink.MetadataFileName))
	if err != nil {
		t.Fatal(err)
	}
	fs3.Put(t, "savepoints/src/_metadata", meta)
	e.Cfg.SavepointDirs, e.Cfg.S3 = []string{"s3://flink/savepoints"}, fs3.Config
	store, err := s3.New(fs3.Config)
	if err != nil {
		t.Fatal(err)
	}
	envOf(e.RB).Catalog = &catalog.Catalog{Store: e.Store, Config: e.Cfg, Monitor: e.Mon, S3: store}
	if _, err := envOf(e.RB).Catalog.Register(ctx, "s3://flink/savepoints/src"); err != nil {
		t.Fatal(err)
	}
	plan := runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: KindRewriteSavepoint, RewriteFrom: "s3://flink/savepoints/src", RewriteTo: "s3://flink/savepoints/dr"}}}
	pv, err := book(e.RB).PreviewRewrite(ctx, plan.Flow, plan.Steps[0])
	if err != nil {
		t.Fatal(err)
	}
	plan.Steps[0].Choices = map[string]model.Choice{}
	for _, r := range pv.Targets.Rows {
		if r.Target == nil {
			plan.Steps[0].Choices[r.Key] = model.Choice{Kind: model.ChoiceLatest}
		}
	}
	return e, store, plan, pv
}
