package failover

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/runbooktest"
	"github.com/drconsole/drconsole/storage"
)

// Issue 28, item 1: a step re-checks, when it starts, what its plan rested
// on. A savepoint usable at approval whose translated positions DR's
// retention deleted since is refused at step start, with the reason and
// what changed since the approval; the requester cannot override that,
// the second operator can, typed and on record.
func TestStepStartRefusesSavepointPositionsDRDeletedSinceApproval(t *testing.T) {
	t.Parallel()
	e := runbooktest.NewEnv(t, 1)
	ctx := context.Background()
	envOf(e.RB).Catalog = &catalog.Catalog{Store: e.Store, Config: e.Cfg, Monitor: e.Mon}
	tr := e.Mon.Translator("primary->dr")
	const path = "file:/savepoints/savepoint-abc-1"
	id, err := e.Store.UpsertSavepoint(ctx, model.Savepoint{Path: path, Kind: model.KindSavepoint, Origin: model.OriginManual,
		Status: model.SavepointCompleted}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Store.SetSavepointOffsets(ctx, id, `{"orders-0":7}`, "kafka-source", 1, ""); err != nil {
		t.Fatal(err)
	}
	translated := tr.Index.Translate(model.TP{Topic: "orders", Partition: 0}, 7)
	if !translated.Translated() {
		t.Fatalf("orders-0 at 7 does not translate: %+v", translated)
	}
	run, err := e.RB.Create(ctx, runbooktest.Alice, runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: KindTranslateGroup, Group: "sp-group", FromSavepoint: path}}}, "region down")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := e.RB.Get(ctx, run)
	if err := e.RB.Approve(ctx, runbooktest.Bob, run, r.PlanHash, "ok"); err != nil {
		t.Fatal(err)
	}
	// DR's retention passes the translated offset after the approval.
	del := kadm.Offsets{}
	del.Add(kadm.Offset{Topic: "orders", Partition: 0, At: translated.Offset + 1})
	if res, err := kadm.NewClient(runbooktest.DRClient(e.Mon, "primary->dr")).DeleteRecords(ctx, del); err != nil || res.Error() != nil {
		t.Fatalf("deleting DR records: %v %v", err, res.Error())
	}

	_, err = e.RB.Begin(ctx, runbooktest.Alice, run, 0, "primary->dr", "")
	if !errors.Is(err, runbook.ErrRuleViolation) || !strings.Contains(err.Error(), "data deleted in DR: orders-0: log start") ||
		!strings.Contains(err.Error(), "changed since approval") {
		t.Fatalf("a step whose savepoint positions DR deleted started or was refused without the reason: %v", err)
	}
	if _, err := e.RB.BeginWith(ctx, runbooktest.Alice, run, 0, runbook.StepArgs{Confirmation: "primary->dr", InputsOverride: "I accept"}); !errors.Is(err, runbook.ErrInputsOverrideByRequester) {
		t.Fatalf("the requester overrode the check of the step's inputs: %v", err)
	}
	x, err := e.RB.BeginWith(ctx, runbooktest.Bob, run, 0, runbook.StepArgs{Confirmation: "primary->dr", InputsOverride: "reprocessing from the log start is fine"})
	if err != nil {
		t.Fatalf("the second operator's override: %v", err)
	}
	x.Perform(ctx)
	es, err := e.Store.AuditEntries(ctx, storage.AuditFilter{Action: "failover.step-start"})
	if err != nil || len(es) != 1 {
		t.Fatalf("%v %d start records", err, len(es))
	}
	var d struct {
		Override string               `json:"inputs_override"`
		Rules    []runbook.RuleResult `json:"rules"`
		Changed  []string             `json:"changed_since_approval"`
	}
	if err := json.Unmarshal([]byte(es[0].Details), &d); err != nil {
		t.Fatal(err)
	}
	overridden := false
	for _, rule := range d.Rules {
		overridden = overridden || (rule.SecondOperator && strings.Contains(rule.Overridden, "(override by bob)"))
	}
	if d.Override == "" || !overridden || len(d.Changed) == 0 {
		t.Fatalf("the start record does not hold the override and what changed: %+v", d)
	}
}

// A savepoint whose verdict cannot be established (not in the catalog,
// or no catalog) refuses its restore: unknown is not usable.
func TestStepStartRefusesSavepointOfUnknownVerdict(t *testing.T) {
	t.Parallel()
	e := runbooktest.NewEnv(t, 1)
	ctx := context.Background()
	envOf(e.RB).Catalog = &catalog.Catalog{Store: e.Store, Config: e.Cfg, Monitor: e.Mon}
	run, err := e.RB.Create(ctx, runbooktest.Alice, runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{
		{Kind: KindRestoreFlink, FlinkTarget: "flink-dr", JarID: "job.jar", SavepointPath: "file:/sp/unknown"}}}, "region down")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := e.RB.Get(ctx, run)
	if err := e.RB.Approve(ctx, runbooktest.Bob, run, r.PlanHash, "ok"); err != nil {
		t.Fatal(err)
	}
	_, err = e.RB.Begin(ctx, runbooktest.Alice, run, 0, "primary->dr", "")
	if !errors.Is(err, runbook.ErrRuleViolation) || !strings.Contains(err.Error(), "unknown: the savepoint is not in the catalog") {
		t.Fatalf("a restore from a savepoint of unknown verdict: %v", err)
	}
	if e.Flink.Runs != 0 {
		t.Fatalf("%d job(s) started", e.Flink.Runs)
	}
}

// catalogued gives e's runbook a savepoint catalog holding each path as a
// savepoint whose one position (orders-0 at 7) DR still holds, so a
// restore from it passes the step-start check of its verdict.
func catalogued(t testing.TB, e *runbooktest.Env, paths ...string) {
	t.Helper()
	ctx := context.Background()
	envOf(e.RB).Catalog = &catalog.Catalog{Store: e.Store, Config: e.Cfg, Monitor: e.Mon}
	for _, p := range paths {
		id, err := e.Store.UpsertSavepoint(ctx, model.Savepoint{Path: flink.CanonicalPath(p), Kind: model.KindSavepoint, Origin: model.OriginManual,
			Status: model.SavepointCompleted}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Store.SetSavepointOffsets(ctx, id, `{"orders-0":7}`, "kafka-source", 1, ""); err != nil {
			t.Fatal(err)
		}
	}
}
