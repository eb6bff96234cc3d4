package monitor

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// figureKinds are the partition readings a refresh can give, as (lag in
// offsets, lag in ms, lower bound on the age); -1 is unknown.
var figureKinds = [][3]int64{
	{0, 0, -1},     // caught up
	{7, 4_000, -1}, // behind, age known
	{7, -1, 9_000}, // behind, only a lower bound on the age
	{7, -1, -1},    // behind, age unknown
	{-1, -1, 500},  // DR position unknown, first unreplicated record seen 500 ms ago
	{-1, -1, -1},   // nothing known but the source end
	{0, -1, -1},    // nothing behind, age not read
}

func known(v int64) *int64 {
	if v < 0 {
		return nil
	}
	return &v
}

// randomPartitions gives topics a and b random readings at now.
func randomPartitions(rng *rand.Rand, now time.Time) []model.PartitionLag {
	var out []model.PartitionLag
	for _, topic := range []string{"a", "b"} {
		for p := range 1 + rng.Int32N(6) {
			k := figureKinds[rng.IntN(len(figureKinds))]
			end := 100 + rng.Int64N(100)
			var repl *int64
			if k[0] >= 0 {
				repl = known(end - k[0])
			}
			out = append(out, model.PartitionLag{Topic: model.Intern(topic), RemoteTopic: model.Intern(topic), Partition: p, SourceEnd: model.FigureOf(known(end)), Replicated: model.FigureOf(repl),
				LagMessages: model.FigureOf(known(k[0])), LagMs: model.FigureOf(known(k[1])), LagMsAtLeast: model.FigureOf(known(k[2])), AsOf: model.StampOf(now), Method: model.PositionEstimate})
		}
	}
	return out
}

// shown is what a console shows of a partition's saved figures.
func shown(ps []model.PartitionLag) string {
	type fig struct {
		Topic, Remote                                           string
		Partition                                               int32
		SourceEnd, Replicated, LagMessages, LagMs, LagMsAtLeast *int64
		AsOfMs                                                  int64
	}
	var out []fig
	for _, p := range ps {
		out = append(out, fig{p.Topic.String(), p.RemoteTopic.String(), p.Partition, p.SourceEnd.Ptr(), p.Replicated.Ptr(), p.LagMessages.Ptr(), p.LagMs.Ptr(), p.LagMsAtLeast.Ptr(), p.AsOf.Time().UnixMilli()})
	}
	b, _ := json.MarshalIndent(out, "", " ")
	return string(b)
}

// savedFiguresRig is a monitor of topics a and b whose refreshes the tests
// make up and save through its sample writer.
func savedFiguresRig(t *testing.T) (*config.Config, *Monitor, *storage.Store) {
	t.Helper()
	primary, _ := newCluster(t, "primary", "a", "b")
	dr, _ := newCluster(t, "dr", "a", "b")
	cfg := testConfig(t, primary, dr)
	m, store := newTestMonitor(t, cfg, filepath.Join(t.TempDir(), "db"))
	return cfg, m, store
}

// A restarted console shows every partition's figures as the console
// before it last saved them through the sample writer (bounded history:
// one snapshot row per flow): lag in offsets and in time, lower bounds,
// unknowns unknown, never 0, the time they were read; stale, as saved
// before the restart. A refresh within a minute of the last save, or with
// the source unreachable, saves no partitions: the restart shows the saved
// minute. The figures not kept (log start, DR end, loss marks) wait for the
// first refresh.
func TestRestartShowsLastSavedFigures(t *testing.T) {
	ctx := context.Background()
	cfg, m, store := savedFiguresRig(t)
	fm, name := m.flows[0], cfg.Flows[0].Name
	now := time.UnixMilli(1_764_000_000_123)
	for seed := range uint64(8) {
		rng := rand.New(rand.NewPCG(seed, 17))
		refresh := func(at time.Time, sourceOK bool) *flowstate.FlowSnapshot {
			t.Helper()
			s := &flowstate.FlowSnapshot{Flow: cfg.Flows[0], At: at, Source: model.Reachability{Checked: true, OK: sourceOK},
				Partitions: randomPartitions(rng, at), Status: model.FlowStatusOK}
			m.writer.enqueue(sampleJob{fm: fm, s: s, now: at})
			if err := m.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			return s
		}
		now = now.Add(flowstate.PartitionSampleEvery + time.Duration(rng.IntN(5_000))*time.Millisecond)
		saved := refresh(now, true)
		refresh(now.Add(flowstate.PartitionSampleEvery-time.Millisecond), true) // within the minute
		refresh(now.Add(flowstate.PartitionSampleEvery+time.Second), false)     // source unreachable
		now = now.Add(flowstate.PartitionSampleEvery + time.Second)

		m2, err := NewMonitor(ctx, cfg, store, discardLog())
		if err != nil {
			t.Fatal(err)
		}
		restarted := m2.Snapshot(name)
		after := restarted.Partitions
		m2.Close()
		if got, want := shown(after), shown(saved.Partitions); got != want {
			t.Fatalf("seed %d: after the restart\n%s\nbefore it\n%s", seed, got, want)
		}
		for _, p := range after {
			if !restarted.FiguresStale || p.Method != model.PositionSaved {
				t.Fatalf("seed %d: %s-%d restored as %+v", seed, p.Topic, p.Partition, p)
			}
		}
	}
}

// A refresh within the minute that knows more partitions' lag than the
// last save is saved at once (the first refresh often precedes the first
// ingested position); one that knows less waits for the minute.
func TestSaveWhenFewerPartitionsUnknown(t *testing.T) {
	ctx := context.Background()
	cfg, m, store := savedFiguresRig(t)
	fm, name := m.flows[0], cfg.Flows[0].Name
	now := time.UnixMilli(1_764_000_000_123)
	refresh := func(at time.Time, lag ...int64) []model.PartitionLag {
		t.Helper()
		var ps []model.PartitionLag
		unknown := 0
		for p, l := range lag {
			end := int64(100)
			ps = append(ps, model.PartitionLag{Topic: model.Intern("a"), RemoteTopic: model.Intern("a"), Partition: int32(p), SourceEnd: model.Known(end),
				LagMessages: model.FigureOf(known(l)), AsOf: model.StampOf(at), Method: model.PositionEstimate})
			if l < 0 {
				unknown++
			}
		}
		s := &flowstate.FlowSnapshot{Flow: cfg.Flows[0], At: at, Source: model.Reachability{Checked: true, OK: true},
			Partitions: ps, Unknown: unknown, Status: model.FlowStatusUnknown}
		m.writer.enqueue(sampleJob{fm: fm, s: s, now: at})
		if err := m.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		return ps
	}
	restarted := func() []model.PartitionLag {
		t.Helper()
		m2, err := NewMonitor(ctx, cfg, store, discardLog())
		if err != nil {
			t.Fatal(err)
		}
		defer m2.Close()
		return m2.Snapshot(name).Partitions
	}
	refresh(now, -1, -1)
	better := refresh(now.Add(5*time.Second), 4, -1)
	if got, want := shown(restarted()), shown(better); got != want {
		t.Fatalf("after a refresh knowing one more partition, the restart shows\n%s\nwant\n%s", got, want)
	}
	refresh(now.Add(10*time.Second), -1, -1) // knows less: not saved within the minute
	best := refresh(now.Add(15*time.Second), 4, 3)
	if got, want := shown(restarted()), shown(best); got != want {
		t.Fatalf("after a refresh knowing every partition, the restart shows\n%s\nwant\n%s", got, want)
	}
	refresh(now.Add(20*time.Second), 5, -1)
	if got, want := shown(restarted()), shown(best); got != want {
		t.Fatalf("a refresh knowing less within the minute replaced the saved figures:\n%s\nwant\n%s", got, want)
	}
}
