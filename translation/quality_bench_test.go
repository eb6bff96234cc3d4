package translation

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// BenchmarkQuality is one refresh's group figures at the cap: 200 groups,
// each committed on 100 partitions and checkpointed on all of them, with
// 64 syncs kept per partition (MM2's own bound): what a refresh of such a
// flow costs on top of its lag reads. "read" is a refresh after MM2
// checkpointed or the primary's offsets were recorded (the stored rows
// read again: about 95 ms and 25 MB a call on the 2-core build machine,
// quiet), "kept" any other (about 39 ms and 4.5 MB, most of it the
// figures a snapshot keeps).
func BenchmarkQuality(b *testing.B) {
	const groups, parts, syncs = 200, 100, 64
	ctx := context.Background()
	store, err := storage.Open(filepath.Join(b.TempDir(), "db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	index := mm2.NewSyncIndex()
	var all []model.OffsetSync
	var cps []model.Checkpoint
	log := int64(0)
	for p := range int32(parts) {
		for i := range int64(syncs) {
			all = append(all, model.OffsetSync{Topic: "events", Partition: p, Upstream: i * 1000, Downstream: i * 990, LogOffset: log, RecordMs: i})
			log++
		}
	}
	index.Add(all)
	var offs []storage.GroupOffset
	for g := range groups {
		name := fmt.Sprintf("group-%03d", g)
		for p := range int32(parts) {
			at := int64(g*97+int(p)*13) % (syncs * 1000)
			offs = append(offs, storage.GroupOffset{Group: name, Topic: "events", Partition: p, Offset: at, AtMs: 5})
			cps = append(cps, model.Checkpoint{Group: name, Topic: "events", Partition: p, Upstream: at - 1, Downstream: 1, LogOffset: log, RecordMs: 4})
			log++
		}
	}
	if err := store.Apply(ctx, storage.Batch{Flow: "f", Topic: "cp", Checkpoints: cps, NextOffset: log}); err != nil {
		b.Fatal(err)
	}
	if err := store.RecordPrimaryGroupOffsets(ctx, "f", offs); err != nil {
		b.Fatal(err)
	}
	g := NewGroupTranslator(GroupTranslator{Flow: "f", Alias: "primary", Policy: mm2.ReplicationPolicy{Identity: true}, Index: index, Store: store}, nil, nil)
	check := func(b *testing.B, q *model.FlowGroups) {
		if len(q.Groups) != groups || q.Err != "" || q.Groups[0].Reread == nil {
			b.Fatalf("%d groups, err %q", len(q.Groups), q.Err)
		}
	}
	// A refresh after MM2 checkpointed or the primary's offsets were
	// recorded: the stored rows are read again.
	b.Run("read", func(b *testing.B) {
		for b.Loop() {
			check(b, g.Quality(ctx, QualityOptions{Cap: groups, Now: time.UnixMilli(10)}))
		}
	})
	// Any other refresh: the rows as last read, through the sync index.
	b.Run("kept", func(b *testing.B) {
		in := g.ReadQualityInputs(ctx, nil, groups, time.UnixMilli(10))
		for b.Loop() {
			check(b, g.Quality(ctx, QualityOptions{Cap: groups, Inputs: in, Now: time.UnixMilli(10)}))
		}
	})
}
