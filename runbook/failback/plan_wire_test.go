package failback

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
)

// Failback plans stored and approved by the version that had Plan.Failback
// (bytes and hashes below made by it) read back as the same kind and hash
// the same, so their approvals hold after an upgrade.
func TestFailbackPlanWireFormatIsTheStoredOne(t *testing.T) {
	for _, c := range []struct {
		plan       runbook.Plan
		wire, hash string
	}{
		{
			runbook.Plan{Flow: "orders", Kind: runbook.PlanFailback, FailbackOf: 7, Steps: []runbook.Step{{Kind: failover.KindPreflight}, {Kind: KindSetUpReverse}, {Kind: KindWaitReverse}, {Kind: KindStopWriters}, {Kind: KindTranslateGroupBack, Group: "billing"}, {Kind: KindRestartForward}}},
			`{"flow":"orders","steps":[{"kind":"preflight"},{"kind":"set-up-reverse"},{"kind":"wait-reverse-caught-up"},{"kind":"stop-writers"},{"kind":"translate-group-back","group":"billing"},{"kind":"restart-forward"}],"failback":true,"failback_of":7}`,
			"9fd9be5eefabe52320c40708f58c89b8983fa482a67b65598642aad91d24bfbf",
		},
		{
			runbook.Plan{Flow: "links", Kind: runbook.PlanFailback, FailbackOf: 3, Steps: []runbook.Step{{Kind: failover.KindPreflight}, {Kind: KindReverseToPrimary, PauseMirrors: true}}},
			`{"flow":"links","steps":[{"kind":"preflight"},{"kind":"reverse-to-primary","pause_mirrors":true}],"failback":true,"failback_of":3}`,
			"9e91f2475d75d029837e615ecc82cf276f91536ee15c71ed6bcaac33cf6f6f1a",
		},
	} {
		if b, err := json.Marshal(c.plan); err != nil || string(b) != c.wire {
			t.Errorf("%s plan written as\n%s\nwant\n%s (%v)", c.plan.Kind, b, c.wire, err)
		}
		var read runbook.Plan
		if err := json.Unmarshal([]byte(c.wire), &read); err != nil || !reflect.DeepEqual(read, c.plan) {
			t.Errorf("stored %s plan read as %+v, want %+v (%v)", c.plan.Kind, read, c.plan, err)
		}
		if read.Hash() != c.hash {
			t.Errorf("stored %s plan hashes %s, its approvals were bound to %s", c.plan.Kind, read.Hash(), c.hash)
		}
	}
}
