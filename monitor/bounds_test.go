package monitor

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/model"
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
			if s := r.m.Snapshot(flow); s.Status != model.FlowStatusOK || s.RPOAtLeast || s.Bound != "" || !s.FiguresAt.Equal(read) {
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
				if s.Status == model.FlowStatusOK {
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
					if !s.FiguresStale || p.AsOf.Time().After(read) {
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

// While a refresh waits on a cluster that answers nothing (the reads hang
// until refresh_read_timeout), the snapshot published before it does not
// stay exact and OK: after OverdueAfter without an answer it is marked
// lower bounds, UNKNOWN; the refresh's own snapshot replaces it.
func TestOverdueRefreshMarksTheLastFigures(t *testing.T) {
	r := newWriterRig(t)
	r.cfg.RefreshReadTimeout = config.Duration(20 * time.Second)
	flow := r.cfg.Flows[0].Name
	r.refresh()
	if s := r.m.Snapshot(flow); s.Status != model.FlowStatusOK || s.Bound != "" {
		t.Fatalf("before: %s (%s), bound %q", s.Status, s.Reason, s.Bound)
	}
	r.m.markOverdue(time.Now().Add(time.Minute)) // no refresh reading: nothing to mark
	if s := r.m.Snapshot(flow); s.Status != model.FlowStatusOK || s.Bound != "" {
		t.Fatalf("no refresh in flight, marked: %s (%s)", s.Status, s.Reason)
	}
	end := hangOnPrimary(r)
	r.m.markOverdue(time.Now())
	s := r.m.Snapshot(flow)
	end()
	if s.Status == model.FlowStatusOK || s.Bound == "" || !s.RPOAtLeast || !strings.HasPrefix(s.RPOText(), "at least") {
		t.Fatalf("refresh hanging %s without an answer: %s (%s), bound %q, RPO %q", OverdueAfter, s.Status, s.Reason, s.Bound, s.RPOText())
	}
	if after := r.m.Snapshot(flow); after == s || after.Bound != "" {
		t.Fatalf("the refresh's own snapshot did not replace the marked one: bound %q", after.Bound)
	}
}

// A refresh hung on the primary is overdue even while DR keeps answering
// others (the ingester, another flow sharing DR): only the cluster the
// refresh waits on tells a hung read from a slow one.
func TestOverdueWhileTheOtherClusterAnswersOthers(t *testing.T) {
	r := newWriterRig(t)
	r.cfg.RefreshReadTimeout = config.Duration(20 * time.Second)
	flow := r.cfg.Flows[0].Name
	r.refresh()
	end := hangOnPrimary(r)
	// DR answers someone else's request through the monitor's client.
	if err := r.m.clients[r.cfg.Flows[0].Target].Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.m.markOverdue(time.Now())
	s := r.m.Snapshot(flow)
	end()
	if s.Status == model.FlowStatusOK || s.Bound == "" || !s.RPOAtLeast {
		t.Fatalf("refresh hung on the primary while DR answered others: %s (%s), bound %q", s.Status, s.Reason, s.Bound)
	}
}

// hangOnPrimary starts a refresh whose primary reads hang and returns once
// it has waited past OverdueAfter; end lets the reads answer and waits for
// the refresh to finish.
func hangOnPrimary(r *writerRig) (end func()) {
	release := make(chan struct{})
	slowListOffsets(r.primary, release)
	done := make(chan struct{})
	go func() { defer close(done); r.refresh() }()
	for r.m.flows[0].reading.Load() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(OverdueAfter + 300*time.Millisecond)
	return func() { close(release); <-done }
}
