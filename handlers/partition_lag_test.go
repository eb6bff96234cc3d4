package handlers

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/drconsole/drconsole/storage"
)

// From what the monitor saves to the partition chart: a caught-up minute is
// 0, a minute nothing was saved at is a gap, an unknown lag is a gap.
func TestPartitionChartCaughtUpAndGaps(t *testing.T) {
	ctx := context.Background()
	store, err := storage.Open(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	n := func(v int64) *int64 { return &v }
	const t0, min = int64(1_764_000_000_000), int64(storage.MinuteMs)
	minutes := map[int64]storage.PartitionSample{
		0: {LagMessages: n(5), LagMs: n(4_000)}, // lagging
		1: {LagMessages: n(0), LagMs: n(0)},     // caught up: no row
		// 2, 3: nothing saved (source unreachable)
		4: {LagMessages: n(0), LagMs: n(0)}, // caught up
		5: {SourceEnd: n(9)},                // unknown
	}
	for i, x := range minutes {
		x.Topic = "e"
		other := storage.PartitionSample{Topic: "e", Partition: 1, LagMessages: n(0), LagMs: n(0)}
		if err := store.AddPartitionMinute(ctx, "f", t0+i*min, []storage.PartitionSample{x, other}); err != nil {
			t.Fatal(err)
		}
	}
	samples, err := store.PartitionSamples(ctx, "f", "e", 0, t0)
	if err != nil {
		t.Fatal(err)
	}
	got := partitionLagPoints(samples)
	want := []struct {
		at    int64
		y     float64
		known bool
	}{{t0, 4_000, true}, {t0 + min, 0, true}, {t0 + 2*min, 0, false}, {t0 + 4*min, 0, true}, {t0 + 5*min, 0, false}}
	if len(got) != len(want) {
		t.Fatalf("points %+v", got)
	}
	for i, w := range want {
		if got[i].AtMs != w.at || got[i].Y != w.y || got[i].Known != w.known {
			t.Errorf("point %d = %+v, want %+v", i, got[i], w)
		}
	}
}
