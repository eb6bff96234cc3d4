package pages

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/drconsole/drconsole/storage"
)

// fakeSamples is a flow_lag_samples table that counts its reads.
type fakeSamples struct {
	mu    sync.Mutex
	rows  []storage.FlowSample
	reads int
}

func (f *fakeSamples) FlowSamples(_ context.Context, _ string, sinceMs int64) ([]storage.FlowSample, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	var out []storage.FlowSample
	for _, r := range f.rows {
		if r.AtMs >= sinceMs {
			out = append(out, r)
		}
	}
	return out, nil
}

func (f *fakeSamples) add(atMs, rpo int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rows = append(f.rows, storage.FlowSample{AtMs: atMs, RPOMs: &rpo})
}

// The held history is what a fresh read returns, whatever the order of
// refreshes, saves and page views; storage is read once per new sample,
// not once per view; a snapshot published before its sample is saved
// does not hide that sample from later views.
func TestHistoryMatchesStoredSamples(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	now := t0
	store := &fakeSamples{}
	for i := range 100 {
		store.add(t0.Add(-time.Duration(100-i)*5*time.Second).UnixMilli(), int64(i))
	}
	h := &History{Store: store, Window: 6 * time.Minute, Now: func() time.Time { return now }}
	check := func(sinceMs, newestMs int64) {
		t.Helper()
		got, err := h.Since(ctx, "f", sinceMs, newestMs)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := store.FlowSamples(ctx, "f", sinceMs)
		store.reads--
		if len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
			t.Fatalf("since %d: held %d samples, storage has %d", sinceMs, len(got), len(want))
		}
	}
	for range 10 {
		check(now.Add(-5*time.Minute).UnixMilli(), store.rows[len(store.rows)-1].AtMs)
	}
	if store.reads != 1 {
		t.Fatalf("10 views of one refresh read storage %d times, want 1", store.reads)
	}
	// A new refresh is published before its sample is saved.
	for i := range 5 {
		now = now.Add(5 * time.Second)
		check(now.Add(-5*time.Minute).UnixMilli(), now.UnixMilli()) // sample not saved yet
		store.add(now.UnixMilli(), int64(1000+i))
		check(now.Add(-5*time.Minute).UnixMilli(), now.UnixMilli()) // now it is
		check(now.Add(-5*time.Minute-7*time.Second).UnixMilli(), now.UnixMilli())
	}
	if got := len(h.flows["f"].samples); got > int(h.Window/(5*time.Second))+1 {
		t.Fatalf("holds %d samples, more than the %s window", got, h.Window)
	}
	// Retention pruned the oldest minute: a whole read after FullReadEvery
	// drops them.
	store.rows = store.rows[60:] // up to 200 s before t0, inside the window
	now = now.Add(FullReadEvery)
	check(now.Add(-5*time.Minute).UnixMilli(), store.rows[len(store.rows)-1].AtMs)
	// Older than the window: read as asked, not cut to the window.
	check(now.Add(-time.Hour).UnixMilli(), store.rows[len(store.rows)-1].AtMs)
}

// A memo rebuilds on a new key only and never holds more than Max slots.
func TestMemoBounded(t *testing.T) {
	m := Memo[int, int]{Max: 3}
	builds := 0
	get := func(slot string, key int) int {
		return m.Get(slot, key, func() int { builds++; return key * 10 })
	}
	if get("a", 1) != 10 || get("a", 1) != 10 || builds != 1 {
		t.Fatalf("same key rebuilt: %d builds", builds)
	}
	if get("a", 2) != 20 || builds != 2 {
		t.Fatal("a new key did not rebuild")
	}
	for i := range 50 {
		get(string(rune('b'+i)), i)
	}
	if m.Len() > 3 {
		t.Fatalf("holds %d slots, Max is 3", m.Len())
	}
}
