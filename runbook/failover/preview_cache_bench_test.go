package failover

import (
	"context"
	"testing"

	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/runbooktest"
)

// The run page's server-side preview work per render, against the
// sandbox's kfake clusters (in-process: a real cluster's round trips cost
// more) and HTTP stand-ins for Connect and Flink: the run is loaded
// (as every render does), then its previews are either taken from the
// cache (now) or computed (before: every render, every 2 s poll).
func BenchmarkRunPagePreviews(b *testing.B) {
	e := runbooktest.NewEnv(b, 1)
	e.OnConnect(b)
	ctx := context.Background()
	id, err := e.RB.Create(ctx, runbooktest.Alice, fullPlan(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	load := func() *runbook.Run {
		r, err := e.RB.Get(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		return r
	}
	b.Run("cached", func(b *testing.B) {
		e.RB.Previews(ctx, load())
		for b.Loop() {
			if pv := e.RB.Previews(ctx, load()); !pv[2].Computed {
				b.Fatal("not cached")
			}
		}
	})
	b.Run("computed", func(b *testing.B) {
		for b.Loop() {
			if pv := e.RB.Preview(ctx, load()); pv[2].Err != "" {
				b.Fatal(pv[2].Err)
			}
		}
	})
}
