package failover

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/runbooktest"
)

// values reads every record value of the given topics' partitions on a
// cluster, by partition (topic names as the source side names them).
func values(t *testing.T, seeds []string, topics []string) map[model.TP]map[string]bool {
	t.Helper()
	ctx := context.Background()
	opts := []kgo.Opt{kgo.SeedBrokers(seeds...)}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	bounds, err := kafka.ListBounds(ctx, cl, topics...)
	if err != nil {
		t.Fatal(err)
	}
	var ranges []kafka.Range
	for tp, b := range bounds {
		ranges = append(ranges, kafka.Range{TP: tp, From: b.Start, To: b.End})
	}
	out := map[model.TP]map[string]bool{}
	err = kafka.ReadRecords(ctx, opts, ranges, kafka.ReadLimits{Idle: 5 * time.Second}, func(r *kgo.Record) error {
		tp := model.TP{Topic: r.Topic, Partition: r.Partition}
		if out[tp] == nil {
			out[tp] = map[string]bool{}
		}
		out[tp][string(r.Value)] = true
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A failover of the sandbox flow (the mirror stopped mid-traffic, the
// primary written to after the cut): the stop-mirror step records the cut,
// DR becomes the active side, and the records lost to DR, judged against
// both clusters' contents by payload, are never undercounted, and all are
// in the export.
func TestFailoverRecordsTheCutAndNeverUndercountsTheLost(t *testing.T) {
	t.Parallel()
	e := runbooktest.NewEnv(t, 1)
	ctx := context.Background()
	e.OnConnect(t)
	e.SB.SetMirrorRunning(false) // what the Connect stop does to a real MM2
	time.Sleep(2 * time.Second)  // the last copies land, the monitor ingests their syncs
	id, err := e.RB.Create(ctx, runbooktest.Alice, runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: KindPreflight}, {Kind: KindStopMirror}}}, "failover")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := e.RB.Get(ctx, id)
	if err := e.RB.Approve(ctx, runbooktest.Bob, id, r.PlanHash, ""); err != nil {
		t.Fatal(err)
	}
	for idx := range 2 {
		x, err := e.RB.Begin(ctx, runbooktest.Alice, id, idx, "primary->dr", "the mirror is stopped on purpose")
		if err != nil {
			t.Fatal(err)
		}
		if err := x.Perform(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if a, err := ActiveSideOf(ctx, e.Store, "primary->dr"); err != nil || a.Side != model.SideDR || a.Run != id {
		t.Fatalf("active side %+v %v", a, err)
	}
	// The run's completion marked the flow failed over, with what its stop
	// step saw not replicated at the cut.
	if s := e.Mon.Snapshot("primary->dr"); s.FailedOver == nil || s.FailedOver.Run != id || s.FailedOver.CutAtMs == 0 ||
		(s.FailedOver.CutLagOffsets == nil && s.FailedOver.CutRPOMs == nil) {
		t.Fatalf("after the failover: %s %+v", s.Status, s.FailedOver)
	}
	cut, err := e.Store.FailoverCut(ctx, id)
	if err != nil || len(cut) == 0 {
		t.Fatalf("cut %v %v", cut, err)
	}
	drNow := values(t, e.SB.DRBootstrap(), []string{"events", "orders", "users"})
	for _, c := range cut {
		if c.DREnd == nil {
			t.Fatalf("%s/%d: DR's end unread", c.Topic, c.Partition)
		}
		if c.SyncDown != nil && *c.SyncDown >= *c.DREnd {
			t.Fatalf("%s/%d: sync %d not below DR's end %d", c.Topic, c.Partition, *c.SyncDown, *c.DREnd)
		}
	}
	// Records the primary takes after the cut (writers not yet moved).
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.SB.PrimaryBootstrap()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	late := []string{"late-1", "late-2", "late-3"}
	for _, v := range late {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "events", Partition: 0, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	l, err := book(e.RB).LostToDR(ctx, "primary->dr")
	if err != nil || l.PrimaryErr != "" {
		t.Fatalf("%v %s", err, l.PrimaryErr)
	}
	// Traffic goes on: read before the export reads the primary's ends,
	// so the export must hold every lost record of this read.
	primaryNow := values(t, e.SB.PrimaryBootstrap(), []string{"events", "orders", "users"})
	x, err := book(e.RB).PrepareLostExport(ctx, runbooktest.Alice, "primary->dr", nil)
	if err != nil {
		t.Fatal(err)
	}
	exported := map[model.TP]map[string]bool{}
	w := &lineWriter{each: func(line LostRecordLine) {
		tp := model.TP{Topic: line.Topic, Partition: line.Partition}
		if exported[tp] == nil {
			exported[tp] = map[string]bool{}
		}
		exported[tp][string(line.Value)] = true
	}}
	if err := x.WriteTo(ctx, w); err != nil {
		t.Fatal(err)
	}
	for _, p := range l.Partitions {
		if !p.Known() {
			if p.Figure() == "0" {
				t.Errorf("%v: unknown shown as 0", p.TP())
			}
			continue
		}
		// Truly lost: records the primary held at the count that DR lacks.
		var lost []string
		for v := range primaryNow[p.TP()] {
			if !drNow[p.TP()][v] {
				lost = append(lost, v)
			}
		}
		for _, v := range lost {
			if !exported[p.TP()][v] {
				t.Errorf("%v: lost record %s is not in the export", p.TP(), v)
			}
		}
		inDR := 0
		for v := range exported[p.TP()] {
			if drNow[p.TP()][v] {
				inDR++
			}
		}
		if p.Reached.InDRAtMost >= 0 && int64(inDR) > p.Reached.InDRAtMost {
			t.Errorf("%v: %d exported records are in DR, bound %d (%s)", p.TP(), inDR, p.Reached.InDRAtMost, p.Reached.How)
		}
		t.Logf("%v: %s; truly lost now %d; %s", p.TP(), p.Figure(), len(lost), p.Reached.How)
	}
	for _, v := range late {
		if !exported[model.TP{Topic: "events", Partition: 0}][v] {
			t.Errorf("record %s produced after the cut is not exported", v)
		}
	}
}
