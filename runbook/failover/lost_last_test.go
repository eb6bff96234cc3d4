package failover

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/runbook"
)

// Issue 28 follow-up: the last known lost-to-DR bounds outlive the console.
// A console restarted (a new Runbook over the same store) while the old
// primary is down shows the figures last read, with their read time and
// age, not "0, and N partition(s) unknown".
func TestLostToDRLastKnownBoundsSurviveARestart(t *testing.T) {
	t.Parallel()
	e := newLostEnv(t)
	ctx := context.Background()
	first, err := book(e.rb).LostToDR(ctx, "primary->dr")
	if err != nil || first.PrimaryErr != "" {
		t.Fatalf("%v %+v", err, first)
	}
	want := first.Totals()
	if want.AtMost == 0 {
		t.Fatalf("the test needs records lost to DR: %q", want.Text())
	}
	e.primary.Close()
	later := time.UnixMilli(first.AtMs).Add(90 * time.Second)
	restarted := &runbook.Runbook{Store: e.rb.Store, Config: e.rb.Config, Audit: e.rb.Audit, Log: e.rb.Log, LostLimits: e.rb.LostLimits,
		Clock: func() time.Time { return later }}
	l, err := book(restarted).LostToDR(ctx, "primary->dr")
	if err != nil {
		t.Fatal(err)
	}
	if l.PrimaryErr == "" {
		t.Fatal("the primary is down and no error says so")
	}
	got := l.Totals()
	if got.AtMost != want.AtMost || got.AtLeast != want.AtLeast || got.Unknown != want.Unknown {
		t.Fatalf("after a restart with the primary down: %q, want the last known %q", got.Text(), want.Text())
	}
	if got.LastKnownMs != first.AtMs || !strings.Contains(got.AgeText(later), "(1m30s ago)") {
		t.Fatalf("age: %d (%q), want the read at %d, 1m30s ago", got.LastKnownMs, got.AgeText(later), first.AtMs)
	}
	if p := e.partition(t, l, tpOf("events", 0)); p.Figure() != "5" || p.AsOfMs != first.AtMs {
		t.Errorf("events/0 after a restart with the primary down: %q as of %d", p.Figure(), p.AsOfMs)
	}
	// A later failover run's page does not take this run's figures.
	if figs, err := e.rb.Store.LostLast(ctx, e.run+1); err != nil || len(figs) != 0 {
		t.Fatalf("figures of another run: %v %v", figs, err)
	}
}
