package failover

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
)

// Plans stored and approved by the version that had Plan.Drill and
// Plan.Failback (bytes and hashes below made by it) read back as the
// same kind and hash the same, so their approvals hold after an upgrade.
func TestPlanWireFormatIsTheStoredOne(t *testing.T) {
	for _, c := range []struct {
		plan       runbook.Plan
		wire, hash string
	}{
		{
			runbook.Plan{Flow: "orders", Steps: []runbook.Step{{Kind: KindPreflight}, {Kind: KindStopMirror}, {Kind: KindTranslateGroup, Group: "billing", AllowPartial: true},
				{Kind: KindRewriteSavepoint, RewriteFrom: "file:///sp/1", SourceUID: "src", RewriteTo: "file:///sp/2", Choices: map[string]model.Choice{"orders-0": {Kind: "earliest", By: "ann"}}},
				{Kind: KindRestoreFlink, FlinkTarget: "flink-dr", JarID: "j.jar", EntryClass: "Main", Args: []string{"--a"}, SavepointPath: "file:///sp/2", Parallelism: 2, ClaimMode: "NO_CLAIM"}}},
			`{"flow":"orders","steps":[{"kind":"preflight"},{"kind":"stop-mirror"},{"kind":"translate-group","group":"billing","allow_partial":true},{"kind":"rewrite-savepoint","rewrite_from":"file:///sp/1","source_uid":"src","rewrite_to":"file:///sp/2","choices":{"orders-0":{"kind":"earliest","by":"ann"}}},{"kind":"restore-flink","flink_target":"flink-dr","jar_id":"j.jar","entry_class":"Main","args":["--a"],"savepoint_path":"file:///sp/2","parallelism":2,"claim_mode":"NO_CLAIM"}]}`,
			"15670768887af6a197d456a94dfbc943293e5f813b3fe5b2ea6f4cb39913824c",
		},
		{
			runbook.Plan{Flow: "orders", Kind: runbook.PlanDrill, Steps: []runbook.Step{{Kind: KindPreflight}, {Kind: KindTranslateGroup, Group: "billing"}, {Kind: KindRestoreFlink, FlinkTarget: "flink-dr", JarID: "j.jar", DrillArgs: []string{"--group", "{group}"}}}},
			`{"flow":"orders","steps":[{"kind":"preflight"},{"kind":"translate-group","group":"billing"},{"kind":"restore-flink","flink_target":"flink-dr","jar_id":"j.jar","drill_args":["--group","{group}"]}],"drill":true}`,
			"6aebe2a64787f8b7ae90823dc68b0055f677ab5ea4189f8f2332306b2a6c6cf2",
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
