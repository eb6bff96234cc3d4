package failover

import (
	"testing"
	"time"

	"github.com/drconsole/drconsole/runbook/runbooktest"
)

// With the primary gone, the runbook's evidence (the audit record of a
// decision) dates the figures by the read they rest on, before the
// outage, and says they are lower bounds: not by the last refresh that
// failed to read.
func TestEvidenceDatesFiguresByTheirRead(t *testing.T) {
	t.Parallel()
	e := runbooktest.NewEnv(t, 1)
	e.SB.SetPrimaryDown(true)
	down := time.Now()
	t.Cleanup(func() { e.SB.SetPrimaryDown(false) })
	deadline := time.Now().Add(30 * time.Second)
	for {
		s := e.Mon.Snapshot("primary->dr")
		if s.Bound != "" && s.At.After(down.Add(time.Second)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("primary down, figures never held as lower bounds: %s %s", s.Status, s.Reason)
		}
		time.Sleep(100 * time.Millisecond)
	}
	ev := e.RB.Evidence("primary->dr")
	asOf, _ := ev["as_of"].(time.Time)
	if asOf.IsZero() || asOf.After(down) {
		t.Fatalf("evidence as_of %v, want the read before the primary went down at %s: %v", ev["as_of"], down.UTC(), ev)
	}
	if ev["rpo_at_least"] != true || ev["figures_bound"] == nil {
		t.Fatalf("evidence does not say the figures are lower bounds: %v", ev)
	}
}
