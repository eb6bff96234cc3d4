package monitor

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// The per-partition bound thins SQLite and the index in the same pass: what
// is stored afterwards loads into exactly the index that is held, and no
// partition keeps more syncs of any age than the bound or its guarded
// newest ones (plus its first, which the bound never deletes).
func TestRetentionBoundKeepsStoreAndIndexAlike(t *testing.T) {
	ctx := context.Background()
	cfg := &config.Config{
		Clusters: map[string]*config.Cluster{"primary": {Bootstrap: []string{"127.0.0.1:1"}}, "dr": {Bootstrap: []string{"127.0.0.1:2"}}},
		Flows: []*config.Flow{{Source: "primary", Target: "dr", ReplicationPolicy: "identity", OffsetSyncsLocation: "target",
			Topics: config.Topics{Include: []string{"events"}}}},
		Retention: config.Retention{SyncsFull: config.Duration(time.Hour), SyncsPerPartition: 8},
	}
	if err := cfg.Normalize("test"); err != nil {
		t.Fatal(err)
	}
	flow := cfg.Flows[0].Name
	store, err := storage.Open(filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	start := time.Unix(1_700_000_000, 0)
	var syncs []model.OffsetSync
	var logOff int64
	for i := range 300 { // a sync per partition every 10 minutes for 50 hours
		for p := range int32(4) {
			up := int64(i)*1000 + int64(p)
			syncs = append(syncs, model.OffsetSync{Topic: "events", Partition: p, Upstream: up, Downstream: up / 2,
				LogOffset: logOff, RecordMs: start.Add(time.Duration(i) * 10 * time.Minute).UnixMilli()})
			logOff++
		}
	}
	if err := store.Apply(ctx, storage.Batch{Flow: flow, Topic: "mm2-offset-syncs.primary.internal", NextOffset: logOff, Syncs: syncs}); err != nil {
		t.Fatal(err)
	}
	m, err := NewMonitor(ctx, cfg, store, discardLog())
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	now := start.Add(50 * time.Hour)
	m.Now = func() time.Time { return now }
	m.ApplyRetention(ctx)
	idx := m.flows[0].state.Syncs
	stored, err := store.CountSyncs(ctx, flow)
	if err != nil || stored != int64(idx.Len()) || idx.Len() >= len(syncs) {
		t.Fatalf("after retention: %d stored (%v), %d in the index, %d before", stored, err, idx.Len(), len(syncs))
	}
	reloaded := mm2.NewSyncIndex()
	if err := LoadSyncIndex(ctx, reloaded, store, flow); err != nil {
		t.Fatal(err)
	}
	for p := range int32(4) {
		tp := model.TP{Topic: "events", Partition: p}
		held, _ := idx.History(tp, 1<<20)
		loaded, _ := reloaded.History(tp, 1<<20)
		if !slices.Equal(held, loaded) {
			t.Fatalf("%v: the index holds %d syncs, a restart would load %d", tp, len(held), len(loaded))
		}
		if len(held) > max(8, 16)+1 {
			t.Fatalf("%v: %d syncs kept, bound 8 (the newest 16 and the first always kept)", tp, len(held))
		}
		if tl := idx.Translate(tp, 299_000+int64(p)); tl.Method != mm2.MethodExact {
			t.Fatalf("%v: the newest sync no longer translates: %+v", tp, tl)
		}
	}
}
