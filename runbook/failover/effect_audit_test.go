package failover

import (
	"context"
	"testing"

	"github.com/drconsole/drconsole/runbook/runbooktest"
	"github.com/drconsole/drconsole/storage/storagetest"
)

// An effect whose audit record cannot be written does not happen: with the
// store refusing audit inserts, claiming the stop, translate and restore
// steps fails, and Connect, Kafka and Flink are asked nothing. The same
// steps then run once the chain takes records again.
func TestNoEffectWithoutAuditRecord(t *testing.T) {
	t.Parallel()
	e := runbooktest.NewEnv(t, 1)
	catalogued(t, e, "file:/sp/1")
	ctx := context.Background()
	fc := e.OnConnect(t)
	id, err := e.RB.Create(ctx, runbooktest.Alice, fullPlan(), "drill")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := e.RB.Get(ctx, id)
	if err := e.RB.Approve(ctx, runbooktest.Bob, id, r.PlanHash, ""); err != nil {
		t.Fatal(err)
	}
	step := func(idx int) error {
		x, err := e.RB.Begin(ctx, runbooktest.Alice, id, idx, "primary->dr", "")
		if err != nil {
			return err
		}
		return x.Perform(ctx)
	}
	if err := step(0); err != nil {
		t.Fatal(err)
	}
	refused := func(idx int, nothing func() bool) {
		t.Helper()
		storagetest.FailAuditWrites(t, e.Path, true)
		if err := step(idx); err == nil {
			t.Fatalf("step %d ran without its audit record", idx+1)
		}
		storagetest.FailAuditWrites(t, e.Path, false)
		if !nothing() {
			t.Fatalf("step %d's effect happened without its audit record", idx+1)
		}
		if r, _ := e.RB.Get(ctx, id); r.Steps[idx].Status != "pending" {
			t.Fatalf("step %d is %s after a refused claim", idx+1, r.Steps[idx].Status)
		}
		if err := step(idx); err != nil {
			t.Fatalf("step %d with the chain back: %v", idx+1, err)
		}
	}
	refused(1, func() bool { fc.Mu.Lock(); defer fc.Mu.Unlock(); return len(fc.Stops) == 0 })
	if fc.Stops["MirrorSourceConnector"] != 1 {
		t.Fatalf("stops %v", fc.Stops)
	}
	refused(2, func() bool {
		cs, err := e.Store.GroupChanges(ctx, "primary->dr", "billing")
		return err == nil && len(cs) == 0
	})
	refused(3, func() bool { e.Flink.Mu.Lock(); defer e.Flink.Mu.Unlock(); return e.Flink.Runs == 0 })
	if e.Flink.Runs != 1 {
		t.Fatalf("RunJar called %d times", e.Flink.Runs)
	}
}
