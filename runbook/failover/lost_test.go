package failover

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/kafka/kafkatest"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/runbooktest"
	"github.com/drconsole/drconsole/storage"
)

// lostEnv is a flow whose failover run completed, with an old primary on
// kfake and a cut stored as the stop-mirror step would have stored it.
type lostEnv struct {
	rb      *runbook.Runbook
	primary *kfake.Cluster
	cl      *kgo.Client
	run     int64
	// after holds the values produced on the primary after the cut, by
	// partition, in offset order, with their timestamps.
	after map[model.TP][]string
	ts    map[string]int64
}

func tpOf(topic string, p int32) model.TP { return model.TP{Topic: topic, Partition: p} }

// newLostEnv: ten records in every partition before the cut, and a cut per
// partition that knows a different amount of what reached DR:
//
//	events/0  exact (a sync at DR's last record), 5 records after the cut
//	events/1  exact, nothing after the cut
//	orders/0  a sync 3 records below DR's end, 2 records after the cut
//	orders/1  nothing known (no sync, no connect offset), 4 after the cut
//	users/0   only MM2's connect offset, 3 after the cut
//	users/1   DR held nothing: all 10 + 1 are lost
func newLostEnv(t *testing.T) *lostEnv {
	t.Helper()
	ctx := context.Background()
	primary, cl := kafkatest.NewCluster(t, "primary", "events", "orders", "users")
	e := &lostEnv{primary: primary, cl: cl, after: map[model.TP][]string{}, ts: map[string]int64{}}
	base := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	produce := func(tp model.TP, value string, ts time.Time) {
		e.ts[value] = ts.UnixMilli()
		kafkatest.Produce(t, cl, &kgo.Record{Topic: tp.Topic, Partition: tp.Partition, Key: []byte("k-" + value), Value: []byte(value), Timestamp: ts,
			Headers: []kgo.RecordHeader{{Key: "origin", Value: []byte{0xff, 0x00, 'p'}}}})
	}
	tps := []model.TP{tpOf("events", 0), tpOf("events", 1), tpOf("orders", 0), tpOf("orders", 1), tpOf("users", 0), tpOf("users", 1)}
	for _, tp := range tps {
		for i := range 10 {
			produce(tp, fmt.Sprintf("before-%s-%d-%d", tp.Topic, tp.Partition, i), base.Add(time.Duration(i)*time.Second))
		}
	}
	cut := []model.CutPosition{
		{Topic: "events", Partition: 0, DREnd: runbooktest.I64(10), SyncUp: runbooktest.I64(9), SyncDown: runbooktest.I64(9)},
		{Topic: "events", Partition: 1, DREnd: runbooktest.I64(10), SyncUp: runbooktest.I64(9), SyncDown: runbooktest.I64(9)},
		{Topic: "orders", Partition: 0, DREnd: runbooktest.I64(10), SyncUp: runbooktest.I64(6), SyncDown: runbooktest.I64(6)},
		{Topic: "orders", Partition: 1, DREnd: runbooktest.I64(10)},
		{Topic: "users", Partition: 0, DREnd: runbooktest.I64(10), ConnectLast: runbooktest.I64(9)},
		{Topic: "users", Partition: 1, DREnd: runbooktest.I64(0)},
	}
	for i := range cut {
		cut[i].RemoteTopic = cut[i].Topic
	}
	// After the cut: timestamps out of order, so first and last are the
	// oldest and newest, not the first and last offsets.
	for tp, n := range map[model.TP]int{tpOf("events", 0): 5, tpOf("orders", 0): 2, tpOf("orders", 1): 4, tpOf("users", 0): 3, tpOf("users", 1): 1} {
		for j := range n {
			v := fmt.Sprintf("after-%s-%d-%d", tp.Topic, tp.Partition, j)
			produce(tp, v, base.Add(time.Hour+time.Duration((j*7)%5)*time.Minute))
			e.after[tp] = append(e.after[tp], v)
		}
	}
	cfg := &config.Config{
		Clusters: map[string]*config.Cluster{"primary": {Bootstrap: primary.ListenAddrs()}, "dr": {Bootstrap: []string{"127.0.0.1:1"}}},
		Flows:    []*config.Flow{{Source: "primary", Target: "dr", ReplicationPolicy: "identity", Topics: config.Topics{Include: []string{"events", "orders", "users"}}}},
		Failover: config.Failover{ApprovalsRequired: 1},
	}
	if err := cfg.Normalize("test"); err != nil {
		t.Fatal(err)
	}
	store, err := storage.Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	e.rb = &runbook.Runbook{Store: store, Config: cfg, Audit: runbooktest.Audit{StoreAuditor: runbook.StoreAuditor{Store: store}}, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		LostLimits: runbook.LostLimits{Idle: 2 * time.Second}}
	e.run = runbooktest.CompleteRun(t, store, runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: KindPreflight}, {Kind: KindStopMirror}}}, base.Add(30*time.Minute).UnixMilli())
	if err := store.SaveFailoverCut(ctx, e.run, cut); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *lostEnv) partition(t *testing.T, l *model.LostToDR, tp model.TP) model.LostPartition {
	t.Helper()
	for _, p := range l.Partitions {
		if p.TP() == tp {
			return p
		}
	}
	t.Fatalf("no partition %v in %+v", tp, l.Partitions)
	return model.LostPartition{}
}

func TestLostToDRCountsWhatNeverReachedDR(t *testing.T) {
	t.Parallel()
	e := newLostEnv(t)
	l, err := book(e.rb).LostToDR(context.Background(), "primary->dr")
	if err != nil {
		t.Fatal(err)
	}
	if !l.Recorded || l.PrimaryErr != "" || l.Active.Run != e.run || l.Active.Side != model.SideDR {
		t.Fatalf("%+v", l)
	}
	if got, want := l.Totals().Text(), "at most 24; at least 18, and 1 partition(s) unknown, which may hold any number"; got != want {
		t.Errorf("totals %q, want %q", got, want)
	}
	for _, c := range []struct {
		tp      model.TP
		figure  string
		records int64
		values  []string // the records counted: their time range is checked
	}{
		{tpOf("events", 0), "5", 5, e.after[tpOf("events", 0)]},
		{tpOf("events", 1), "0", 0, nil},
		// Offsets 7-9 are counted: DR's 3 records past the sync may be them.
		{tpOf("orders", 0), "at most 5; at least 2", 5, append([]string{"before-orders-0-7", "before-orders-0-8", "before-orders-0-9"}, e.after[tpOf("orders", 0)]...)},
		{tpOf("orders", 1), "unknown", 0, nil},
		{tpOf("users", 0), "up to 3, some may already be in DR", 3, e.after[tpOf("users", 0)]},
		{tpOf("users", 1), "11", 11, nil},
	} {
		p := e.partition(t, l, c.tp)
		if got := p.Figure(); got != c.figure || p.Records != c.records {
			t.Errorf("%v: figure %q (%d records), want %q (%d); %s", c.tp, got, p.Records, c.figure, c.records, p.Reached.How)
		}
		if len(c.values) > 0 {
			var ts []int64
			for _, v := range c.values {
				ts = append(ts, e.ts[v])
			}
			if p.FirstMs != slices.Min(ts) || p.LastMs != slices.Max(ts) {
				t.Errorf("%v: time range %d-%d, want %d-%d", c.tp, p.FirstMs, p.LastMs, slices.Min(ts), slices.Max(ts))
			}
		}
	}
}

// exportLines runs an export of only (nil: all) into lines, the last one
// decoded as the end line.
func (e *lostEnv) export(t *testing.T, only *model.TP, w io.Writer) (records []LostRecordLine, end LostEnd, err error) {
	t.Helper()
	x, err := book(e.rb).PrepareLostExport(context.Background(), runbooktest.Alice, "primary->dr", only)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if w == nil {
		w = &buf
	} else {
		w = io.MultiWriter(w, &buf)
	}
	err = x.WriteTo(context.Background(), w)
	sc := bufio.NewScanner(&buf)
	sc.Buffer(nil, 1<<20)
	var last string
	for sc.Scan() {
		if last != "" {
			var r LostRecordLine
			if jerr := json.Unmarshal([]byte(last), &r); jerr != nil {
				t.Fatalf("line %q: %v", last, jerr)
			}
			records = append(records, r)
		}
		last = sc.Text()
	}
	var el LostEndLine
	if jerr := json.Unmarshal([]byte(last), &el); jerr != nil || el.End.Flow == "" {
		t.Fatalf("last line %q is no end line: %v", last, jerr)
	}
	return records, el.End, err
}

func TestLostExportHoldsExactlyTheRecordsAfterTheCut(t *testing.T) {
	t.Parallel()
	e := newLostEnv(t)
	tp := model.TP{Topic: "events", Partition: 0}
	records, end, err := e.export(t, &tp, nil)
	if err != nil {
		t.Fatal(err)
	}
	var values []string
	for _, r := range records {
		values = append(values, string(r.Value))
		if string(r.Key) != "k-"+string(r.Value) || r.TimestampMs != e.ts[string(r.Value)] || r.Topic != "events" || r.Partition != 0 ||
			len(r.Headers) != 1 || !bytes.Equal(r.Headers[0].Value, []byte{0xff, 0x00, 'p'}) {
			t.Errorf("line %+v", r)
		}
	}
	if !slices.Equal(values, e.after[tp]) {
		t.Fatalf("exported %q, want %q", values, e.after[tp])
	}
	if !end.Complete || end.Records != 5 || len(end.Partitions) != 1 || !end.Partitions[0].Exact || *end.Partitions[0].From != 10 {
		t.Fatalf("end %+v", end)
	}
	// The export is on record, with who asked for it.
	if n := e.rb.Audit.(runbooktest.Audit).Count("failback.lost-export"); n != 1 {
		t.Fatalf("%d export records", n)
	}
	// A viewer may look, not export.
	if _, err := book(e.rb).PrepareLostExport(context.Background(), runbooktest.Vera, "primary->dr", nil); err != runbook.ErrRole {
		t.Fatalf("viewer export: %v", err)
	}
}

func TestLostExportOfEveryPartitionSaysWhatIsUnknown(t *testing.T) {
	t.Parallel()
	e := newLostEnv(t)
	records, end, err := e.export(t, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 5+3+2+3+11 || end.Records != int64(len(records)) {
		t.Fatalf("%d records, end %+v", len(records), end)
	}
	if end.Complete || !strings.Contains(end.Error, "unknown") {
		t.Fatalf("an export missing an unknown partition says complete: %+v", end)
	}
	for _, p := range end.Partitions {
		if (p.Topic == "orders" && p.Partition == 1) != (p.Unknown != "") {
			t.Errorf("partition %+v", p)
		}
	}
}

func TestLostExportStopsAtItsCap(t *testing.T) {
	t.Parallel()
	e := newLostEnv(t)
	e.rb.LostLimits.ExportRecords = 3
	tp := model.TP{Topic: "events", Partition: 0}
	records, end, err := e.export(t, &tp, nil)
	if err == nil || len(records) != 3 || end.Complete || end.Records != 3 || !strings.Contains(end.Error, "cap") {
		t.Fatalf("err %v, %d records, end %+v", err, len(records), end)
	}
	e.rb.LostLimits = runbook.LostLimits{ExportBytes: 60, Idle: 2 * time.Second} // one record is 36 bytes
	if records, end, err = e.export(t, &tp, nil); err == nil || len(records) != 1 || end.Complete {
		t.Fatalf("bytes cap: err %v, %d records, end %+v", err, len(records), end)
	}
}

// closeOnFirstWrite stops the primary once the export has begun to stream.
type closeOnFirstWrite struct {
	c    *kfake.Cluster
	done bool
}

func (w *closeOnFirstWrite) Write(b []byte) (int, error) {
	if !w.done {
		w.done = true
		w.c.Close()
	}
	return len(b), nil
}

func TestLostExportEndsWithAnErrorWhenThePrimaryGoesAway(t *testing.T) {
	t.Parallel()
	e := newLostEnv(t)
	tp := model.TP{Topic: "events", Partition: 0}
	// Far more than one fetch holds (random: compression must not shrink
	// it), so the export is mid-way when the primary goes.
	var recs []*kgo.Record
	for range 8 << 10 {
		v := make([]byte, 1<<10)
		rand.Read(v)
		recs = append(recs, &kgo.Record{Topic: tp.Topic, Partition: tp.Partition, Value: v})
	}
	kafkatest.Produce(t, e.cl, recs...)
	records, end, err := e.export(t, &tp, &closeOnFirstWrite{c: e.primary})
	if err == nil || end.Complete || end.Error == "" || len(records) >= 5+len(recs) {
		t.Fatalf("err %v, %d records, end %+v", err, len(records), end)
	}
	t.Logf("ended after %d records: %s", len(records), end.Error)
}

func TestActiveSideFollowsTheLastCompletedFailoverNotDrills(t *testing.T) {
	t.Parallel()
	e := newLostEnv(t)
	ctx := context.Background()
	store := e.rb.Store
	a, err := ActiveSideOf(ctx, store, "primary->dr")
	if err != nil || a.Side != model.SideDR || a.Run != e.run {
		t.Fatalf("%+v %v", a, err)
	}
	// A drill completing later is no failover.
	runbooktest.CompleteRun(t, store, runbook.Plan{Flow: "primary->dr", Kind: runbook.PlanDrill, Steps: []runbook.Step{{Kind: KindPreflight}}}, time.Now().UnixMilli())
	if a2, _ := ActiveSideOf(ctx, store, "primary->dr"); a2 != a {
		t.Fatalf("after a drill: %+v, want %+v", a2, a)
	}
	// No completed run: the primary.
	if a, _ := ActiveSideOf(ctx, store, "other"); a.Side != model.SidePrimary || a.Run != 0 {
		t.Fatalf("%+v", a)
	}
	// A run that has not completed does not move the flow.
	plan := runbook.Plan{Flow: "other", Steps: []runbook.Step{{Kind: KindPreflight}}}
	body, _ := json.Marshal(plan)
	rec, _ := runbook.AuditEntry(runbooktest.Alice, "failover.plan", "test", nil)
	if _, _, err := store.CreateFailoverRun(ctx, model.Run{Flow: "other", Reason: "x", CreatedBy: "alice", CreatedMs: 1, PlanJSON: string(body),
		PlanHash: plan.Hash(), ApprovalsRequired: 1}, runbook.StepKinds(plan), rec); err != nil {
		t.Fatal(err)
	}
	if a, _ := ActiveSideOf(ctx, store, "other"); a.Side != model.SidePrimary {
		t.Fatalf("pending run moved the flow: %+v", a)
	}
}

func TestLostToDROfARunThatRecordedNoCutIsUnknown(t *testing.T) {
	t.Parallel()
	e := newLostEnv(t)
	run := runbooktest.CompleteRun(t, e.rb.Store, runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: KindPreflight}}}, time.Now().UnixMilli())
	l, err := book(e.rb).LostToDR(context.Background(), "primary->dr")
	if err != nil || l.Active.Run != run || l.Recorded || len(l.Partitions) != 0 {
		t.Fatalf("%+v %v", l, err)
	}
	if _, err := book(e.rb).PrepareLostExport(context.Background(), runbooktest.Alice, "primary->dr", nil); err == nil || !strings.Contains(err.Error(), "unknown") {
		t.Fatalf("export of an unknown cut: %v", err)
	}
}

// lineWriter decodes exported record lines as they are written (a line
// may span writes).
type lineWriter struct {
	partial []byte
	each    func(LostRecordLine)
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.partial = append(w.partial, b...)
	for {
		line, rest, ok := bytes.Cut(w.partial, []byte("\n"))
		if !ok {
			return len(b), nil
		}
		var r LostRecordLine
		if json.Unmarshal(line, &r) == nil && r.Topic != "" {
			w.each(r)
		}
		w.partial = rest
	}
}

// Syncs the console ingests after the cut was recorded (MM2 writes its
// delayed syncs as it stops) sharpen the figure, if they name a record
// that was in DR at the cut; later ones say nothing about it.
func TestLostToDRUsesSyncsIngestedAfterTheCut(t *testing.T) {
	t.Parallel()
	e := newLostEnv(t)
	ctx := context.Background()
	if err := e.rb.Store.Apply(ctx, storage.Batch{Flow: "primary->dr", Topic: "mm2-offset-syncs.dr.internal", NextOffset: 2, Syncs: []model.OffsetSync{
		{Topic: "orders", Partition: 0, Upstream: 9, Downstream: 9, LogOffset: 0},
		{Topic: "orders", Partition: 1, Upstream: 11, Downstream: 10, LogOffset: 1}, // at DR's end: copied after the cut
	}}); err != nil {
		t.Fatal(err)
	}
	mon, err := monitor.NewMonitor(ctx, e.rb.Config, e.rb.Store, e.rb.Log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mon.Close)
	envOf(e.rb).Monitor = mon
	l, err := book(e.rb).LostToDR(ctx, "primary->dr")
	if err != nil {
		t.Fatal(err)
	}
	if p := e.partition(t, l, tpOf("orders", 0)); p.Figure() != "2" {
		t.Errorf("orders/0: %s (%s)", p.Figure(), p.Reached.How)
	}
	if p := e.partition(t, l, tpOf("orders", 1)); p.Figure() != "unknown" {
		t.Errorf("orders/1: %s (%s)", p.Figure(), p.Reached.How)
	}
}

// The page's count stops at its cap: a partition it did not finish shows
// its offset span as an upper bound, never the part it counted.
func TestLostToDRCountCapShowsAnUpperBound(t *testing.T) {
	t.Parallel()
	e := newLostEnv(t)
	e.rb.LostLimits.CountRecords = 1
	l, err := book(e.rb).LostToDR(context.Background(), "primary->dr")
	if err != nil || l.PrimaryErr != "" {
		t.Fatalf("%v %s", err, l.PrimaryErr)
	}
	uncounted := 0
	for _, p := range l.Partitions {
		if p.Known() && !p.Counted {
			uncounted++
			if want := fmt.Sprintf("at most %d (offsets %d–%d;", p.End-p.From, p.From, p.End-1); !strings.HasPrefix(p.Figure(), want) {
				t.Errorf("%v: %q, want it to begin %q", p.TP(), p.Figure(), want)
			}
		}
	}
	if uncounted < 3 {
		t.Fatalf("%d partitions left uncounted by a cap of 1 record", uncounted)
	}
	if tot := l.Totals(); tot.AtMost < 24 {
		t.Fatalf("totals %+v understate the 24 counted without a cap", tot)
	}
}

// Issue 28: the headline is never less than what its rows add up to,
// offsets retention deleted on the primary before the mirror copied them
// included (they are lost to DR too).
func TestLostToDRTotalCountsRetentionDeletions(t *testing.T) {
	t.Parallel()
	e := newLostEnv(t)
	ctx := context.Background()
	del := kadm.Offsets{}
	del.Add(kadm.Offset{Topic: "users", Partition: 1, At: 4})
	if _, err := kadm.NewClient(e.cl).DeleteRecords(ctx, del); err != nil {
		t.Fatal(err)
	}
	l, err := book(e.rb).LostToDR(ctx, "primary->dr")
	if err != nil || l.PrimaryErr != "" {
		t.Fatalf("%v %+v", err, l)
	}
	if p := e.partition(t, l, tpOf("users", 1)); p.Deleted != 4 || p.Figure() != "7" {
		t.Fatalf("users/1: %d deleted, figure %q; want 4 and 7", p.Deleted, p.Figure())
	}
	var rows int64
	for _, p := range l.Partitions {
		if p.Known() {
			rows += p.Records + p.Deleted
		}
	}
	tot := l.Totals()
	if tot.AtMost < rows || tot.Deleted != 4 {
		t.Fatalf("headline %q (%+v) is less than its rows and the retention deletions: %d", tot.Text(), tot, rows)
	}
	if want := "at most 24; at least 14 (the most counts 4 offsets retention deleted"; !strings.HasPrefix(tot.Text(), want) {
		t.Errorf("headline %q, want it to begin %q", tot.Text(), want)
	}
}

// Issue 28: while the old primary cannot be read, the page shows the last
// known bounds with their age, not "0, and N partition(s) unknown".
func TestLostToDRKeepsLastKnownBoundsWhileThePrimaryIsDown(t *testing.T) {
	t.Parallel()
	e := newLostEnv(t)
	ctx := context.Background()
	first, err := book(e.rb).LostToDR(ctx, "primary->dr")
	if err != nil || first.PrimaryErr != "" {
		t.Fatalf("%v %+v", err, first)
	}
	want := first.Totals()
	e.primary.Close()
	later := time.UnixMilli(first.AtMs).Add(40 * time.Second)
	e.rb.Clock = func() time.Time { return later }
	l, err := book(e.rb).LostToDR(ctx, "primary->dr")
	if err != nil {
		t.Fatal(err)
	}
	if l.PrimaryErr == "" {
		t.Fatal("the primary is down and no error says so")
	}
	got := l.Totals()
	if got.AtMost != want.AtMost || got.AtLeast != want.AtLeast || got.Unknown != want.Unknown {
		t.Fatalf("while the primary is down: %q, want the last known %q", got.Text(), want.Text())
	}
	if got.LastKnownMs != first.AtMs || !strings.Contains(got.AgeText(later), "(40s ago)") {
		t.Fatalf("age: %d (%q), want the read at %d, 40s ago", got.LastKnownMs, got.AgeText(later), first.AtMs)
	}
	if p := e.partition(t, l, tpOf("events", 0)); p.Figure() != "5" || p.AsOfMs != first.AtMs {
		t.Errorf("events/0 while the primary is down: %q as of %d", p.Figure(), p.AsOfMs)
	}
}
