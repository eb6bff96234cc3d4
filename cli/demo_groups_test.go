package cli

import (
	"fmt"
	"testing"
	"time"

	"github.com/drconsole/drconsole/model"
)

// The sandbox as `drconsole demo` configures it shows real figures for
// its consumer groups: billing (named critical, objective 1000) and the
// Flink job's group, each computed from the primary's offsets and the
// mirror's syncs and checkpoints; each partition's bound is the distance
// from its offset to the newest sync at or below it, as the sync history
// the partition page shows gives it.
func TestSandboxGroupsQuality(t *testing.T) {
	t.Parallel()
	c := startSandboxConsole(t)
	mon := c.cat.Monitor
	const flow = "primary->dr"
	// The mirror stopped, the sync history stops changing: the figures of
	// a refresh begun after its last change can be checked against it.
	c.world.Sandbox.SetMirrorRunning(false)
	var groups map[string]model.GroupQuality
	seen, seenAt := -1, time.Time{}
	c.waitFor(t, time.Minute, "billing and the Flink job's group computed on a settled sync history", func() (bool, string) {
		if _, n := mon.Activity(flow); n != seen {
			seen, seenAt = n, time.Now()
			return false, "syncs still arriving"
		}
		s := mon.Snapshot(flow)
		if s.Groups == nil || !s.At.After(seenAt) {
			return false, "no refresh since the syncs settled"
		}
		groups = map[string]model.GroupQuality{}
		for _, g := range s.Groups.Groups {
			groups[g.Group] = g
		}
		b, f := groups["billing"], groups["flink-events"]
		// Each group's MM2 checkpoint comes on the mirror's own interval,
		// later than its figures on a loaded machine.
		return b.Reread != nil && f.Reread != nil && len(b.Partitions) > 0 && len(f.Partitions) > 0 &&
			!b.CheckpointAt.IsZero() && !f.CheckpointAt.IsZero(), fmt.Sprintf("%+v", s.Groups)
	})
	if b := groups["billing"]; !b.Configured || !b.Critical || b.Objective != 1000 {
		t.Fatalf("billing as the sandbox configures it: %+v", b)
	}
	for _, name := range []string{"billing", "flink-events"} {
		g := groups[name]
		var sum int64
		for _, p := range g.Partitions {
			syncs, _ := mon.SyncHistory(flow, p.Source, 1<<20)
			var use *model.OffsetSync
			for i := range syncs {
				if syncs[i].Upstream <= p.Offset {
					use = &syncs[i] // the newest at or below: history is oldest first
				}
			}
			if use == nil {
				t.Fatalf("%s %v: no sync at or below %d, yet translated: %+v", name, p.Source, p.Offset, p)
			}
			want := int64(0)
			if use.Upstream < p.Offset {
				want = p.Offset - use.Upstream - 1
			}
			if p.Reread == nil || *p.Reread != want || p.SyncAt.UnixMilli() != use.RecordMs || p.Problem != "" {
				t.Errorf("%s %v at %d: reread %v, sync at %s; want %d from sync %d->%d at %d", name, p.Source, p.Offset, p.Reread, p.SyncAt, want,
					use.Upstream, use.Downstream, use.RecordMs)
			}
			sum += want
		}
		if *g.Reread != sum || g.CheckpointAt.IsZero() || g.OffsetsAt.IsZero() || g.OldestSyncAt.IsZero() {
			t.Errorf("%s: reread %d (partitions sum to %d), checkpoint %s, offsets %s, sync %s", name, *g.Reread, sum, g.CheckpointAt, g.OffsetsAt, g.OldestSyncAt)
		}
		t.Logf("%s: ≤ %d records over %d partitions", name, sum, len(g.Partitions))
	}
}
