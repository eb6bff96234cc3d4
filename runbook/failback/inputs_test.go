package failback

import (
	"context"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/runbook/runbooktest"
)

// A failback's restore of its rewritten-back savepoint is checked against
// the PRIMARY's current log start (positions move back there), not DR's:
// retention on the primary past a position fails the check, retention in
// DR does not. Its rewrite-savepoint-back with no savepoint to read is
// unknown, and unknown fails.
func TestFailbackStepInputsCheckedOnThePrimary(t *testing.T) {
	t.Parallel()
	e := runbooktest.NewEnv(t, 1)
	ctx := context.Background()
	book(e.RB).Catalog = &catalog.Catalog{Store: e.Store, Config: e.Cfg, Monitor: e.Mon}
	const back = "file:/savepoints/back-1"
	id, err := e.Store.UpsertSavepoint(ctx, model.Savepoint{Path: flink.CanonicalPath(back), Kind: model.KindSavepoint,
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
		{Kind: failover.KindRestoreFlink, FlinkTarget: "flink-primary", JarID: "job.jar", SavepointPath: back},
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
	if res, err := kadm.NewClient(runbooktest.DRClient(e.Mon, "primary->dr")).DeleteRecords(ctx, del); err != nil || res.Error() != nil {
		t.Fatalf("deleting DR records: %v %v", err, res.Error())
	}
	if rules := e.RB.InputChecks(ctx, r, 2); len(runbook.Failed(rules)) != 0 {
		t.Fatalf("a failback restore judged against DR's log: %+v", rules)
	}
	if res, err := kadm.NewClient(runbooktest.PrimaryClient(e.Mon, "primary->dr")).DeleteRecords(ctx, del); err != nil || res.Error() != nil {
		t.Fatalf("deleting primary records: %v %v", err, res.Error())
	}
	check(2, "data deleted on the primary: orders-0: log start 3 is past the position 2")
}
