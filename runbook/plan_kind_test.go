package runbook

import (
	"encoding/json"
	"strings"
	"testing"
)

// A kind newer than the drill and failback flags is stored by name and
// read back as itself; a plan that names a kind and a flag, or a flag's
// kind by name, is refused rather than read as one of them.
func TestPlanKindByName(t *testing.T) {
	p := Plan{Flow: "f", Kind: PlanSwitchover, Steps: []Step{{Kind: "fence", Fence: &Fence{Method: "acl", Principals: []string{"User:app"}}}}}
	b, err := json.Marshal(p)
	if err != nil || !strings.Contains(string(b), `"kind":"switchover"`) || strings.Contains(string(b), `"drill"`) {
		t.Fatalf("stored as %s (%v)", b, err)
	}
	var read Plan
	if err := json.Unmarshal(b, &read); err != nil || read.Kind != PlanSwitchover || read.Hash() != p.Hash() {
		t.Fatalf("read back %+v (%v)", read, err)
	}
	for _, bad := range []string{
		`{"flow":"f","steps":[],"drill":true,"kind":"switchover"}`,
		`{"flow":"f","steps":[],"failback":true,"kind":"switchover"}`,
		`{"flow":"f","steps":[],"kind":"drill"}`,
	} {
		if err := json.Unmarshal([]byte(bad), &read); err == nil {
			t.Errorf("%s read as a %s", bad, read.Kind)
		}
	}
}
