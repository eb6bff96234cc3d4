package failover

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/runbooktest"
)

// Issue 28 follow-up: a DR drill's steps re-check at their start what they
// rest on, as a failover's do. A drill translating a group from a
// savepoint whose translated position DR's retention deleted after the
// approval fails at that step, saying so; no temporary group is written
// and no job copy is started.
func TestDrillStepStartRefusesSavepointPositionsDRDeleted(t *testing.T) {
	t.Parallel()
	e := newDrillEnv(t)
	ctx := context.Background()
	const path = "file:/savepoints/savepoint-drill-1"
	catalogued(t, e.Env, path)
	tr := e.RB.Monitor.Translator("primary->dr")
	translated := tr.Index.Translate(model.TP{Topic: "orders", Partition: 0}, 7)
	if !translated.Translated() {
		t.Fatalf("orders-0 at 7 does not translate: %+v", translated)
	}
	p := drillPlan()
	p.Steps[1].FromSavepoint = path
	id := approvedRun(t, e.Env, p)
	del := kadm.Offsets{}
	del.Add(kadm.Offset{Topic: "orders", Partition: 0, At: translated.Offset + 1})
	if res, err := kadm.NewClient(runbooktest.DRClient(e.RB.Monitor, "primary->dr")).DeleteRecords(ctx, del); err != nil || res.Error() != nil {
		t.Fatalf("deleting DR records: %v %v", err, res.Error())
	}
	if err := (&Worker{Runbook: e.RB}).RunDrill(ctx, runbooktest.Alice, id, "primary->dr"); err != nil {
		t.Fatal(err)
	}
	d := e.waitDrill(t, id)
	if d.Succeeded() || !strings.Contains(d.Error, "step 2") || !strings.Contains(d.Error, "data deleted in DR: orders-0: log start") {
		t.Fatalf("a drill step whose savepoint positions DR deleted: %+v", d)
	}
	if len(e.fl.Jobs()) != 0 {
		t.Fatalf("jobs submitted after a refused step: %v", e.fl.Jobs())
	}
	if offs, err := e.drAdmin().FetchOffsets(ctx, DrillGroup(id, "billing")); len(offs) != 0 || (err != nil && !errors.Is(err, kerr.GroupIDNotFound)) {
		t.Fatalf("the temporary group was written: %v %v", offs, err)
	}
}

// A failback's restore of its rewritten-back savepoint is checked against
// the PRIMARY's current log start (positions move back there), not DR's:
// retention on the primary past a position fails the check, retention in
// DR does not. Its rewrite-savepoint-back with no savepoint to read is
// unknown, and unknown fails.
func TestFailbackStepInputsCheckedOnThePrimary(t *testing.T) {
	t.Parallel()
	e := runbooktest.NewEnv(t, 1)
	ctx := context.Background()
	e.RB.Catalog = &catalog.Catalog{Store: e.Store, Config: e.Cfg, Monitor: e.RB.Monitor}
	const back = "file:/savepoints/back-1"
	id, err := e.Store.UpsertSavepoint(ctx, model.Savepoint{Path: catalog.CanonicalPath(back), Kind: model.KindSavepoint,
		Origin: model.OriginRewritten, Status: model.SavepointCompleted}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Store.SetSavepointOffsets(ctx, id, `{"orders-0":2}`, "kafka-source", 1, ""); err != nil {
		t.Fatal(err)
	}
	r := &runbook.Run{Run: model.Run{ID: 9, Flow: "primary->dr"}, Plan: runbook.Plan{Flow: "primary->dr", Kind: runbook.PlanFailback, Steps: []runbook.Step{
		{Kind: KindSavepointDR, FlinkTarget: "flink-dr", JobID: "j"},
		{Kind: KindRewriteBack, RewriteTo: back},
		{Kind: KindRestoreFlink, FlinkTarget: "flink-primary", JarID: "job.jar", SavepointPath: back},
	}}}
	check := func(idx int, want string) {
		t.Helper()
		rules := e.RB.InputChecks(ctx, r, idx)
		for _, f := range runbook.Failed(rules) {
			if strings.Contains(f, want) {
				return
			}
		}
		t.Fatalf("step %d: no failed input check saying %q: %+v", idx+1, want, rules)
	}
	check(1, "unknown: savepoint-dr has not recorded a savepoint")
	if rules := e.RB.InputChecks(ctx, r, 2); len(runbook.Failed(rules)) != 0 || len(rules) == 0 {
		t.Fatalf("the primary holds the positions: %+v", rules)
	}
	del := kadm.Offsets{}
	del.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 3})
	if res, err := kadm.NewClient(runbooktest.DRClient(e.RB.Monitor, "primary->dr")).DeleteRecords(ctx, del); err != nil || res.Error() != nil {
		t.Fatalf("deleting DR records: %v %v", err, res.Error())
	}
	if rules := e.RB.InputChecks(ctx, r, 2); len(runbook.Failed(rules)) != 0 {
		t.Fatalf("a failback restore judged against DR's log: %+v", rules)
	}
	if res, err := kadm.NewClient(runbooktest.PrimaryClient(e.RB.Monitor, "primary->dr")).DeleteRecords(ctx, del); err != nil || res.Error() != nil {
		t.Fatalf("deleting primary records: %v %v", err, res.Error())
	}
	check(2, "data deleted on the primary: orders-0: log start 3 is past the position 2")
}
