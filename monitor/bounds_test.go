package monitor

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/drconsole/drconsole/config"
)

// refuse makes c close every connection while down is set.
func refuse(c *kfake.Cluster, down *atomic.Bool) {
	c.Control(func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if down.Load() {
			return nil, errors.New("down in this test"), true
		}
		return nil, nil, false
	})
}

// Figures that rest on a read of a cluster that no longer answers, the
// primary or DR, are lower bounds with the age of that read, and the flow
// is never OK meanwhile: with DR gone MM2 cannot copy, with the primary
// gone its newest records are not in the figures.
func TestFiguresOfAGoneClusterAreLowerBounds(t *testing.T) {
	for _, side := range []string{"primary", "dr"} {
		t.Run(side, func(t *testing.T) {
			r := newWriterRig(t)
			r.cfg.RefreshReadTimeout = config.Duration(500 * time.Millisecond)
			flow := r.cfg.Flows[0].Name
			read := r.refresh()
			if s := r.m.Snapshot(flow); s.Status != StatusOK || s.RPOAtLeast || s.Bound != "" || !s.FiguresAt.Equal(read) {
				t.Fatalf("both up: status %s (%s), at least %v, bound %q, figures at %s (read %s)", s.Status, s.Reason, s.RPOAtLeast, s.Bound, s.FiguresAt, read)
			}
			exact := *r.m.Snapshot(flow).RPOMs
			c := r.primary
			if side == "dr" {
				c = r.dr
			}
			var down atomic.Bool
			down.Store(true)
			refuse(c, &down)
			for i := range 3 { // a response already on its way may land in the first
				at := r.refresh()
				s := r.m.Snapshot(flow)
				if i == 0 {
					continue
				}
				if s.Status == StatusOK {
					t.Fatalf("%s down, refresh %d: status OK (%s)", side, i, s.Reason)
				}
				if !s.RPOAtLeast || s.Bound == "" || !strings.HasPrefix(s.RPOText(), "at least") || *s.RPOMs < exact {
					t.Fatalf("%s down, refresh %d: RPO %q (at least %v, bound %q), want a lower bound ≥ %d ms", side, i, s.RPOText(), s.RPOAtLeast, s.Bound, exact)
				}
				if age := s.FiguresAge(at); age == nil || *age < at.Sub(read) {
					t.Fatalf("%s down, refresh %d: figures age %v, want at least %s (since the last read of both)", side, i, age, at.Sub(read))
				}
				if strings.Contains(s.Reason, " ago") {
					t.Fatalf("reason %q states an age that goes stale with the text", s.Reason)
				}
				for _, p := range s.Partitions {
					if !p.Stale || p.AsOf.After(read) {
						t.Fatalf("%s down: partition %s not stale as of the last read %s", side, describe(p), read)
					}
				}
			}
			down.Store(false)
			at := r.refresh()
			if s := r.m.Snapshot(flow); s.Bound != "" || s.RPOAtLeast || !s.FiguresAt.Equal(at) {
				t.Fatalf("%s back: bound %q, at least %v, figures at %s (read %s)", side, s.Bound, s.RPOAtLeast, s.FiguresAt, at)
			}
		})
	}
}
