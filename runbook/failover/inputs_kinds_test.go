package failover

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/drconsole/drconsole/model"
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
	tr := e.Mon.Translator("primary->dr")
	translated := tr.Index.Translate(model.TP{Topic: "orders", Partition: 0}, 7)
	if !translated.Translated() {
		t.Fatalf("orders-0 at 7 does not translate: %+v", translated)
	}
	p := drillPlan()
	p.Steps[1].FromSavepoint = path
	id := approvedRun(t, e.Env, p)
	del := kadm.Offsets{}
	del.Add(kadm.Offset{Topic: "orders", Partition: 0, At: translated.Offset + 1})
	if res, err := kadm.NewClient(runbooktest.DRClient(e.Mon, "primary->dr")).DeleteRecords(ctx, del); err != nil || res.Error() != nil {
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
