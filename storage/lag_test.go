package storage

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func i64(v int64) *int64 { return &v }

func openTestStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func countRows(t *testing.T, s *Store, table string) int {
	t.Helper()
	var n int
	if err := s.r.QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

const t0 = int64(1_764_000_000_000) // a whole minute

// minute is one saved minute of topics a (3 partitions) and b (1): a-0
// lagging, a-1 caught up, a-2 of unknown lag, b-0 behind with only a lower
// bound on its age.
func minute(at int64, a0Lag int64) []PartitionSample {
	lagMs := int64(0)
	if a0Lag > 0 {
		lagMs = 4_000
	}
	return []PartitionSample{
		{Topic: "a", Partition: 0, SourceEnd: i64(100 + a0Lag), Replicated: i64(100), LagMessages: i64(a0Lag), LagMs: i64(lagMs)},
		{Topic: "a", Partition: 1, SourceEnd: i64(50), Replicated: i64(50), LagMessages: i64(0), LagMs: i64(0)},
		{Topic: "a", Partition: 2, SourceEnd: i64(70)},
		{Topic: "b", Partition: 0, SourceEnd: i64(9), Replicated: i64(2), LagMessages: i64(7), LagMsAtLeast: i64(9_000)},
	}
}

// A caught-up partition costs no row; its topic's row says the minute was
// saved, so it reads as 0; a minute nothing was saved at reads as nothing;
// unknown figures stay nil.
func TestPartitionMinuteSparse(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	for i, lag := range map[int64]int64{0: 5, 1: 0, 3: 5} { // nothing saved at minute 2
		if err := s.AddPartitionMinute(ctx, "f", t0+i*MinuteMs, minute(t0+i*MinuteMs, lag)); err != nil {
			t.Fatal(err)
		}
	}
	if n := countRows(t, s, "partition_lag"); n != 3+2+3 {
		t.Fatalf("%d partition rows, want 8 (caught-up partitions write none)", n)
	}
	if n := countRows(t, s, "topic_lag"); n != 2*3 {
		t.Fatalf("%d topic rows, want 6", n)
	}

	a0, err := s.PartitionSamples(ctx, "f", "a", 0, t0)
	if err != nil {
		t.Fatal(err)
	}
	if len(a0) != 3 || a0[0].AtMs != t0 || a0[1].AtMs != t0+MinuteMs || a0[2].AtMs != t0+3*MinuteMs {
		t.Fatalf("a-0 minutes %+v", a0)
	}
	if a0[0].CaughtUp || *a0[0].LagMessages != 5 || *a0[0].LagMs != 4_000 || *a0[0].SourceEnd != 105 {
		t.Fatalf("a-0 lagging minute %+v", a0[0])
	}
	if !a0[1].CaughtUp || *a0[1].LagMessages != 0 || *a0[1].LagMs != 0 || a0[1].SourceEnd != nil {
		t.Fatalf("a-0 caught-up minute %+v", a0[1])
	}
	a2, _ := s.PartitionSamples(ctx, "f", "a", 2, t0)
	if len(a2) != 3 || a2[0].CaughtUp || a2[0].LagMessages != nil || a2[0].LagMs != nil || *a2[0].SourceEnd != 70 {
		t.Fatalf("a-2 (unknown) %+v", a2)
	}
	b0, _ := s.PartitionSamples(ctx, "f", "b", 0, t0+MinuteMs)
	if len(b0) != 2 || b0[0].LagMs != nil || *b0[0].LagMsAtLeast != 9_000 {
		t.Fatalf("b-0 (lower bound) %+v", b0)
	}
	if xs, _ := s.PartitionSamples(ctx, "f", "a", 3, t0); len(xs) != 0 {
		t.Fatalf("a-3 never existed, got %+v", xs)
	}
	if xs, err := s.PartitionSamples(ctx, "f", "nope", 0, t0); err != nil || len(xs) != 0 {
		t.Fatalf("unknown topic %+v %v", xs, err)
	}

	tm, err := s.TopicMinutes(ctx, "f", "a", t0)
	if err != nil || len(tm) != 3 {
		t.Fatalf("topic minutes %+v %v", tm, err)
	}
	// Max lag counts no lower bound here, but a-2 is unknown: at least.
	if x := tm[0]; x.Partitions != 3 || x.Lagging != 1 || x.Unknown != 1 || *x.MaxLagMs != 4_000 || !x.MaxLagAtLeast ||
		*x.TotalLagMessages != 5 || *x.MaxLagMessages != 5 {
		t.Fatalf("topic a minute 0 %+v", x)
	}
	tb, _ := s.TopicMinutes(ctx, "f", "b", t0)
	if x := tb[0]; x.Lagging != 1 || x.Unknown != 1 || *x.MaxLagMs != 9_000 || !x.MaxLagAtLeast {
		t.Fatalf("topic b: the lower bound must count %+v", x)
	}
}

// Start-up reads the newest minute's figures of every partition from one
// row; unknowns stay unknown.
func TestLatestPartitionSamplesSnapshot(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	if xs, err := s.LatestPartitionSamples(ctx, "f"); err != nil || len(xs) != 0 {
		t.Fatalf("empty store %+v %v", xs, err)
	}
	if err := s.AddPartitionMinute(ctx, "f", t0, minute(t0, 5)); err != nil {
		t.Fatal(err)
	}
	newest := minute(t0+MinuteMs, 0)
	newest = append(newest, PartitionSample{Topic: "c", Partition: 1 << 20, SourceEnd: i64(-1)})
	if err := s.AddPartitionMinute(ctx, "f", t0+MinuteMs, newest); err != nil {
		t.Fatal(err)
	}
	got, err := s.LatestPartitionSamples(ctx, "f")
	if err != nil || len(got) != len(newest) {
		t.Fatalf("%+v %v", got, err)
	}
	for i, x := range got {
		w := newest[i]
		if x.Topic != w.Topic || x.Partition != w.Partition || x.AtMs != t0+MinuteMs ||
			figures(x) != figures(w) {
			t.Errorf("partition %d: got %+v want %+v", i, x, w)
		}
	}
	if n := countRows(t, s, "partition_last_known"); n != 1 {
		t.Fatalf("%d snapshot rows, want 1 per flow", n)
	}
	if _, err := decodeLastKnown(encodeLastKnown(newest)[:20], 0); err == nil {
		t.Fatal("a cut snapshot decoded")
	}
}

// figures are a sample's figures by value, "nil" for an unknown one.
func figures(x PartitionSample) (out [5]string) {
	for i, f := range lastKnownFigures(&x) {
		out[i] = "nil"
		if f != nil {
			out[i] = strconv.FormatInt(*f, 10)
		}
	}
	return out
}

// The minute rollup counts every sample, keeps the worst figures, and
// never turns an unknown into 0.
func TestFlowMinutesRollup(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	add := func(at int64, rpo *int64, atLeast bool, maxLag, total *int64, status string) {
		t.Helper()
		if err := s.AddFlowSample(ctx, "f", FlowSample{AtMs: at, RPOMs: rpo, RPOAtLeast: atLeast, MaxLagMessages: maxLag,
			LagMessages: total, Status: status}); err != nil {
			t.Fatal(err)
		}
	}
	// Minute 0: two exact samples.
	add(t0, i64(1_000), false, i64(3), i64(4), "OK")
	add(t0+5_000, i64(2_000), false, i64(5), i64(6), "WARNING")
	add(t0+5_000, i64(2_500), false, i64(5), i64(6), "WARNING") // the same refresh again: replaced, counted once
	// Minute 1: an unknown RPO, then a lower bound.
	add(t0+MinuteMs, nil, false, nil, nil, "UNKNOWN")
	add(t0+MinuteMs+5_000, i64(700), true, i64(1), i64(1), "OK")
	// Minute 2: only unknowns.
	add(t0+2*MinuteMs, nil, false, nil, nil, "BROKEN")
	if ms, _ := s.FlowMinutes(ctx, "f", t0); len(ms) != 2 {
		t.Fatalf("minute 2 is not complete yet, rolled up %+v", ms)
	}
	// Minute 3's first sample closes minute 2.
	add(t0+3*MinuteMs, i64(1), false, i64(0), i64(0), "OK")

	ms, err := s.FlowMinutes(ctx, "f", t0)
	if err != nil || len(ms) != 3 {
		t.Fatalf("%+v %v", ms, err)
	}
	if m := ms[0]; m.Samples != 2 || m.Unknown != 0 || m.AtLeast != 0 || *m.MaxRPOMs != 2_500 || *m.MaxLagMessages != 5 ||
		*m.MaxTotalLagMessages != 6 || m.WorstStatus != "WARNING" {
		t.Fatalf("minute 0 %+v", m)
	}
	if m := ms[1]; m.Samples != 2 || m.Unknown != 1 || m.AtLeast != 1 || *m.MaxRPOMs != 700 || m.WorstStatus != "UNKNOWN" {
		t.Fatalf("minute 1 %+v", m)
	}
	if m := ms[2]; m.Samples != 1 || m.Unknown != 1 || m.MaxRPOMs != nil || m.MaxLagMessages != nil || m.WorstStatus != "BROKEN" {
		t.Fatalf("minute 2: unknown must stay unknown %+v", m)
	}
	// A sample stored late into a minute already rolled up counts there.
	add(t0+MinuteMs+10_000, i64(90_000), false, nil, nil, "CRITICAL")
	if ms, _ := s.FlowMinutes(ctx, "f", t0); ms[1].Samples != 3 || *ms[1].MaxRPOMs != 90_000 || ms[1].WorstStatus != "CRITICAL" {
		t.Fatalf("minute 1 after a late sample %+v", ms[1])
	}
	raw, _ := s.FlowSamples(ctx, "f", t0)
	if len(raw) != 7 || *raw[1].RPOMs != 2_500 || raw[2].RPOMs != nil || raw[2].RPOAtLeast || !raw[3].RPOAtLeast {
		t.Fatalf("raw samples %+v", raw)
	}
}

// Retention deletes by index range, in batches, and nothing at or after the
// cut: the count of rows deleted is exactly the rows before it.
func TestPruneByRange(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	defer func(n int) { pruneBatch = n }(pruneBatch)
	pruneBatch = 4 // several transactions per table
	for _, flow := range []string{"f", "g"} {
		for i := range int64(10) {
			at := t0 + i*MinuteMs
			if err := s.AddPartitionMinute(ctx, flow, at, minute(at, 5)); err != nil {
				t.Fatal(err)
			}
			if err := s.AddFlowSample(ctx, flow, FlowSample{AtMs: at, RPOMs: i64(1), Status: "OK"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	before := map[string]int{}
	for _, tb := range []string{"partition_lag", "topic_lag", "flow_lag_samples", "flow_rpo_minutes"} {
		before[tb] = countRows(t, s, tb)
	}
	lagCut, rpoCut := t0+6*MinuteMs, t0+2*MinuteMs // 6 minutes of detail and 2 of rollups go
	n, err := s.PruneLagSamples(ctx, lagCut, rpoCut)
	if err != nil {
		t.Fatal(err)
	}
	// Per flow and minute: 3 partition rows, 2 topic rows, 1 sample, 1 rollup.
	if want := int64(2 * (6*(3+2+1) + 2*1)); n != want {
		t.Fatalf("deleted %d rows, want %d", n, want)
	}
	for tb, per := range map[string]int{"partition_lag": 3 * 6, "topic_lag": 2 * 6, "flow_lag_samples": 6, "flow_rpo_minutes": 2} {
		if got := countRows(t, s, tb); got != before[tb]-2*per {
			t.Errorf("%s: %d rows left of %d, want %d", tb, got, before[tb], before[tb]-2*per)
		}
	}
	for _, flow := range []string{"f", "g"} {
		xs, _ := s.PartitionSamples(ctx, flow, "a", 0, 0)
		if len(xs) != 4 || xs[0].AtMs != lagCut || *xs[0].LagMessages != 5 {
			t.Fatalf("%s: kept %+v", flow, xs)
		}
		ms, _ := s.FlowMinutes(ctx, flow, 0)
		if len(ms) != 7 || ms[0].MinuteMs != rpoCut { // minute 9 is not complete: not rolled up yet
			t.Fatalf("%s: rollups kept %+v", flow, ms)
		}
	}
	if n, err := s.PruneLagSamples(ctx, lagCut, rpoCut); err != nil || n != 0 {
		t.Fatalf("second prune deleted %d, %v", n, err)
	}
	// Each delete is a search on the key prefix, not a scan.
	for _, tb := range []string{"partition_lag", "topic_lag", "flow_lag_samples"} {
		plan := queryPlan(t, s, `DELETE FROM `+tb+` WHERE flow_id=1 AND at_ms < 5`)
		if !strings.Contains(plan, "SEARCH") || !strings.Contains(plan, "at_ms<") {
			t.Errorf("%s: prune plan %q", tb, plan)
		}
	}
	if plan := queryPlan(t, s, `DELETE FROM flow_rpo_minutes WHERE flow_id=1 AND minute_ms < 5`); !strings.Contains(plan, "minute_ms<") {
		t.Errorf("rollup prune plan %q", plan)
	}
}

func queryPlan(t *testing.T, s *Store, q string) string {
	t.Helper()
	rows, err := s.r.Query(`EXPLAIN QUERY PLAN ` + q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		out = append(out, detail)
	}
	return strings.Join(out, "; ")
}

// A minute saved again replaces its topics' partition rows (a partition
// caught up the second time reads caught up, not the first time's lag),
// and a minute saved late never replaces the newest as start-up's figures.
func TestPartitionMinuteSavedAgainOrLate(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	add := func(at, a0Lag int64) {
		t.Helper()
		if err := s.AddPartitionMinute(ctx, "f", at, minute(at, a0Lag)); err != nil {
			t.Fatal(err)
		}
	}
	add(t0, 5)
	add(t0, 0) // the same minute again, a-0 caught up now
	if xs, _ := s.PartitionSamples(ctx, "f", "a", 0, 0); len(xs) != 1 || !xs[0].CaughtUp {
		t.Fatalf("a-0 saved again caught up reads %+v", xs)
	}
	if tm, _ := s.TopicMinutes(ctx, "f", "a", 0); len(tm) != 1 || tm[0].Lagging != 0 {
		t.Fatalf("topic a %+v", tm)
	}
	if n := countRows(t, s, "partition_lag"); n != 2 { // a-2 and b-0, still not caught up
		t.Fatalf("%d partition rows, want 2", n)
	}

	add(t0+2*MinuteMs, 5)
	add(t0+MinuteMs, 0) // late
	last, err := s.LatestPartitionSamples(ctx, "f")
	if err != nil || len(last) != 4 || last[0].AtMs != t0+2*MinuteMs || *last[0].LagMessages != 5 {
		t.Fatalf("last known after a late minute %+v %v", last, err)
	}
}

// A sample stored late into a minute whose other samples retention already
// deleted counts into the minute's rollup: it must not replace it (the RPO
// report would read the minute's worst RPO as the late sample's).
func TestFlowSampleLateIntoPrunedMinute(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	add := func(at int64, rpo *int64, status string) {
		t.Helper()
		if err := s.AddFlowSample(ctx, "f", FlowSample{AtMs: at, RPOMs: rpo, Status: status}); err != nil {
			t.Fatal(err)
		}
	}
	add(t0, i64(90_000), "CRITICAL")
	add(t0+10_000, i64(80_000), "WARNING")
	add(t0+5*MinuteMs, i64(1), "OK")
	// The cut falls inside minute 3: minutes 0-2 go, the whole of minute 3 stays.
	if _, err := s.PruneLagSamples(ctx, t0+3*MinuteMs+30_000, 0); err != nil {
		t.Fatal(err)
	}
	if raw, _ := s.FlowSamples(ctx, "f", 0); len(raw) != 1 {
		t.Fatalf("raw samples after the prune %+v", raw)
	}
	add(t0+20_000, i64(1), "OK")       // late into minute 0
	add(t0+30_000, nil, "UNKNOWN")     // and an unknown one
	add(t0+MinuteMs+1, i64(5), "OK")   // late into minute 1, which had no sample
	add(t0+5*MinuteMs+1, i64(2), "OK") // the newest minute, still open
	add(t0+6*MinuteMs, i64(3), "OK")   // closes it
	ms, err := s.FlowMinutes(ctx, "f", 0)
	if err != nil || len(ms) != 3 {
		t.Fatalf("%+v %v", ms, err)
	}
	if m := ms[0]; m.Samples != 4 || m.Unknown != 1 || *m.MaxRPOMs != 90_000 || m.WorstStatus != "CRITICAL" {
		t.Fatalf("minute 0 after late samples %+v", m)
	}
	if m := ms[1]; m.MinuteMs != t0+MinuteMs || m.Samples != 1 || *m.MaxRPOMs != 5 {
		t.Fatalf("minute 1 %+v", m)
	}
	if m := ms[2]; m.MinuteMs != t0+5*MinuteMs || m.Samples != 2 || *m.MaxRPOMs != 2 {
		t.Fatalf("minute 5 %+v", m)
	}
	// Behind the cut, the late sample is counted, not kept (minute 1 had
	// none: it is kept until the next prune).
	if raw, _ := s.FlowSamples(ctx, "f", 0); len(raw) != 4 || raw[0].AtMs != t0+MinuteMs+1 {
		t.Fatalf("raw samples %+v", raw)
	}
	if _, err := s.PruneLagSamples(ctx, t0+3*MinuteMs, 0); err != nil {
		t.Fatal(err)
	}
	if ms2, _ := s.FlowMinutes(ctx, "f", 0); len(ms2) != 3 || ms2[0].Samples != 4 || *ms2[0].MaxRPOMs != 90_000 || ms2[1].Samples != 1 {
		t.Fatalf("after the second prune %+v", ms2)
	}
}

// A minute of more partitions than one INSERT carries (two full
// statements and a shorter one) saves every row, each with its own
// figures, unknown ones as unknown.
func TestPartitionMinuteManyRows(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	n := 2*rowsPerInsert + 44
	var xs []PartitionSample
	for p := range int32(n) {
		x := PartitionSample{Topic: "t", Partition: p, SourceEnd: i64(1000 + int64(p))}
		switch p % 4 {
		case 0: // behind, known
			x.Replicated, x.LagMessages, x.LagMs = i64(900+int64(p)), i64(100), i64(int64(p)*10)
		case 1: // caught up: no row, reads 0
			x.Replicated, x.LagMessages, x.LagMs = i64(1000+int64(p)), i64(0), i64(0)
		case 2: // age only a lower bound
			x.Replicated, x.LagMessages, x.LagMsAtLeast = i64(990), i64(10+int64(p)), i64(5_000+int64(p))
		} // 3: only the source end known
		xs = append(xs, x)
	}
	if err := s.AddPartitionMinute(ctx, "f", t0, xs); err != nil {
		t.Fatal(err)
	}
	if got, want := countRows(t, s, "partition_lag"), n-n/4; got != want {
		t.Fatalf("%d partition rows, want %d (every partition not caught up)", got, want)
	}
	str := func(p *int64) string {
		if p == nil {
			return "unknown"
		}
		return strconv.FormatInt(*p, 10)
	}
	for _, want := range xs {
		got, err := s.PartitionSamples(ctx, "f", "t", want.Partition, t0)
		if err != nil || len(got) != 1 {
			t.Fatalf("partition %d: %d samples, %v", want.Partition, len(got), err)
		}
		g := got[0]
		if want.caughtUp() {
			if !g.CaughtUp {
				t.Errorf("partition %d caught up, read %+v", want.Partition, g)
			}
			continue
		}
		sameFigures(t, "history", g, want, str)
	}
	// The last known figures (read at start-up) are every partition's, caught-up ones included.
	last, err := s.LatestPartitionSamples(ctx, "f")
	if err != nil || len(last) != n {
		t.Fatalf("last known: %d partitions, %v; want %d", len(last), err, n)
	}
	for i, want := range xs {
		if last[i].Partition != want.Partition {
			t.Fatalf("last known %d is partition %d", i, last[i].Partition)
		}
		sameFigures(t, "last known", last[i], want, str)
	}
}

func sameFigures(t *testing.T, what string, got, want PartitionSample, str func(*int64) string) {
	t.Helper()
	for i, pair := range [][2]*int64{{got.SourceEnd, want.SourceEnd}, {got.Replicated, want.Replicated},
		{got.LagMessages, want.LagMessages}, {got.LagMs, want.LagMs}, {got.LagMsAtLeast, want.LagMsAtLeast}} {
		if str(pair[0]) != str(pair[1]) {
			t.Errorf("%s: partition %d figure %d: read %s, saved %s", what, want.Partition, i, str(pair[0]), str(pair[1]))
		}
	}
}
