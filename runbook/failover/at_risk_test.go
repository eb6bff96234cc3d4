package failover

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/runbooktest"
	"github.com/drconsole/drconsole/storage"
)

// The figures of a read made before the primary went away are lower
// bounds, said with "≥" and the age of that read.
func TestAtRiskOfAStaleReadIsALowerBoundWithItsAge(t *testing.T) {
	t.Parallel()
	read := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	now := read.Add(21 * time.Second)
	rpo, offs := int64(53_600), int64(11_829)
	s := &flowstate.FlowSnapshot{At: now, RPOMs: &rpo, TotalLagMessages: &offs,
		Source:     model.Reachability{Checked: true, OK: false, Since: read.Add(2 * time.Second)},
		Target:     model.Reachability{Checked: true, OK: true},
		Partitions: []model.PartitionLag{{Topic: model.Intern("events"), AsOf: model.StampOf(read)}, {Topic: model.Intern("events"), Partition: 1, AsOf: model.StampOf(read)}}, FiguresStale: true}
	a := AtRiskOf(s)
	if !a.AtLeast || !a.AsOf.Equal(read) {
		t.Fatalf("%+v: want a lower bound read at %s", a, read)
	}
	got := a.Text(now)
	if want := "≥ 11,829 offsets / ≥ 53.6s not in DR (read 2026-12-04T10:00:00Z, 21s before"; !strings.HasPrefix(got, want) || !strings.Contains(got, "primary is unreachable") {
		t.Fatalf("%q, want it to begin %q and say the primary is unreachable", got, want)
	}
	// Both clusters answer but the figures are still an earlier read's
	// (the snapshot says so, not each row): a lower bound all the same.
	held := *s
	held.Source = model.Reachability{Checked: true, OK: true}
	if a := AtRiskOf(&held); !a.AtLeast || !slices.Contains(a.Why, "2 partition(s) show figures of an earlier read") {
		t.Fatalf("stale figures of reachable clusters: %+v", a)
	}
	// Every partition read now, both clusters answering: exact.
	fresh := &flowstate.FlowSnapshot{At: now, RPOMs: &rpo, TotalLagMessages: &offs, Source: model.Reachability{Checked: true, OK: true},
		Target: model.Reachability{Checked: true, OK: true}, Partitions: []model.PartitionLag{{Topic: model.Intern("events"), AsOf: model.StampOf(now)}}}
	if a := AtRiskOf(fresh); a.AtLeast || strings.Contains(a.Text(now), "≥") {
		t.Fatalf("a fresh exact read stated as a bound: %q", a.Text(now))
	}
}

// Issue 28: the data at risk is stated in pre-flight, in the approval box
// and its audit record, before and in the stop step's records, and in the
// run's summary ("lost at the cut"), as a lower bound while the primary
// is down.
func TestDataAtRiskStatedWhereTheFailoverIsDecided(t *testing.T) {
	t.Parallel()
	e := runbooktest.NewEnv(t, 1)
	ctx := context.Background()
	e.SB.SetMirrorRate(5) // let lag build up
	deadline := time.Now().Add(30 * time.Second)
	for s := e.Mon.Snapshot("primary->dr"); s.TotalLagMessages == nil || *s.TotalLagMessages < 20; s = e.Mon.Snapshot("primary->dr") {
		if time.Now().After(deadline) {
			t.Fatalf("no lag built up: %+v", s.TotalLagMessages)
		}
		time.Sleep(100 * time.Millisecond)
	}
	e.SB.SetPrimaryDown(true)
	e.SB.SetMirrorRunning(false)
	for s := e.Mon.Snapshot("primary->dr"); !s.Source.Checked || s.Source.OK; s = e.Mon.Snapshot("primary->dr") {
		if time.Now().After(deadline.Add(30 * time.Second)) {
			t.Fatal("the primary never read as unreachable")
		}
		time.Sleep(100 * time.Millisecond)
	}
	lastRead := *e.Mon.Snapshot("primary->dr").TotalLagMessages
	e.Now = time.Now()
	id, err := e.RB.Create(ctx, runbooktest.Alice, runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: KindPreflight}, {Kind: KindStopMirror}}}, "primary region down")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := e.RB.Get(ctx, id)
	if got := book(e.RB).RunAtRisk(r); !strings.HasPrefix(got, "≥ ") || !strings.Contains(got, "offsets") {
		t.Fatalf("the run page's data at risk: %q", got)
	}
	if err := e.RB.Approve(ctx, runbooktest.Bob, id, r.PlanHash, "accepting the loss"); err != nil {
		t.Fatal(err)
	}
	riskIn := func(action string) map[string]any {
		t.Helper()
		es, err := e.Store.AuditEntries(ctx, storage.AuditFilter{Action: action})
		if err != nil || len(es) == 0 {
			t.Fatalf("%s: %v %d", action, err, len(es))
		}
		var d struct {
			Evidence struct {
				AtRisk map[string]any `json:"at_risk"`
			} `json:"evidence"`
		}
		if err := json.Unmarshal([]byte(es[len(es)-1].Details), &d); err != nil {
			t.Fatal(err)
		}
		return d.Evidence.AtRisk
	}
	check := func(where string, ar map[string]any) {
		t.Helper()
		offs, _ := ar["offsets"].(float64)
		if ar["at_least"] != true || int64(offs) < lastRead || !strings.HasPrefix(ar["text"].(string), "≥ ") {
			t.Fatalf("%s: data at risk %v, want a lower bound ≥ %d offsets", where, ar, lastRead)
		}
	}
	check("approve record", riskIn("failover.approve"))

	x, err := e.RB.Begin(ctx, runbooktest.Alice, id, 0, "", "")
	if err != nil {
		t.Fatal(err)
	}
	stated := false
	for _, rule := range x.Rules {
		if rule.Name == "data at risk stated" {
			stated = strings.Contains(rule.Evidence, "≥ ")
		}
	}
	if !stated {
		t.Fatalf("pre-flight does not state the data at risk: %+v", x.Rules)
	}
	if err := x.Perform(ctx); err != nil {
		t.Fatal(err)
	}
	x, err = e.RB.Begin(ctx, runbooktest.Alice, id, 1, "primary->dr", "")
	if err != nil {
		t.Fatal(err)
	}
	check("stop step's start record", riskIn("failover.step-start"))
	if err := x.Perform(ctx); err != nil {
		t.Fatal(err)
	}
	check("stop step's outcome record", riskIn("failover.step-done"))
	r, _ = e.RB.Get(ctx, id)
	if r.Status != model.RunCompleted {
		t.Fatalf("run %s", r.Status)
	}
	if got := LostAtCut(r); !strings.HasPrefix(got, "≥ ") {
		t.Fatalf("the run's summary of what it lost at the cut: %q", got)
	}
	if got := book(e.RB).RunAtRisk(r); got != "" {
		t.Fatalf("after the cut the page still speaks of data at risk: %q", got)
	}
}

// The monitor's own bound is named once, with no reason that counts
// nothing ("the age of 0 partition(s)"), and a lower-bound RPO stays a
// lower bound whatever its reason.
func TestAtRiskNamesTheMonitorsBound(t *testing.T) {
	t.Parallel()
	rpo, offs := int64(2_300), int64(801)
	bound := &flowstate.FlowSnapshot{RPOMs: &rpo, TotalLagMessages: &offs, RPOAtLeast: true, Bound: "source cluster unreachable"}
	a := AtRiskOf(bound)
	if !a.AtLeast || strings.Contains(strings.Join(a.Why, "; "), "the age of 0") || !strings.Contains(strings.Join(a.Why, "; "), "source cluster unreachable") {
		t.Fatalf("why %q (at least %v)", a.Why, a.AtLeast)
	}
	bare := &flowstate.FlowSnapshot{RPOMs: &rpo, TotalLagMessages: &offs, RPOAtLeast: true}
	if a := AtRiskOf(bare); !a.AtLeast {
		t.Fatalf("a lower-bound RPO stated as exact: %+v", a)
	}
}
