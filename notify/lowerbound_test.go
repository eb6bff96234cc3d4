package notify

import (
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
)

// A CRITICAL or BROKEN flow whose figures rest on a read of a cluster that
// no longer answers tells its RPO as "at least": the primary may have taken
// records since that the console never saw.
func TestFlowEventRPOLowerBoundSaysAtLeast(t *testing.T) {
	n := &Notifier{Now: time.Now}
	rpo := int64(120_000)
	for _, s := range []*flowstate.FlowSnapshot{
		{Flow: &config.Flow{Name: "f"}, RPOMs: &rpo, Bound: "the primary is unreachable"},
		{Flow: &config.Flow{Name: "f"}, RPOMs: &rpo, RPOAtLeast: true},
		{Flow: &config.Flow{Name: "f"}, RPOMs: &rpo, Unknown: 2},
	} {
		for _, kind := range []string{config.EventFlowCritical, config.EventFlowBroken} {
			if ev := n.flowEvent(kind, s); !strings.Contains(ev.Summary, "at least 120 s") {
				t.Errorf("%s with bound %q, at least %v, unknown %d: %q", kind, s.Bound, s.RPOAtLeast, s.Unknown, ev.Summary)
			}
		}
	}
	exact := &flowstate.FlowSnapshot{Flow: &config.Flow{Name: "f"}, RPOMs: &rpo}
	if ev := n.flowEvent(config.EventFlowCritical, exact); strings.Contains(ev.Summary, "at least") {
		t.Errorf("an exact RPO told as a bound: %q", ev.Summary)
	}
}
