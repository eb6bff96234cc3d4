package failover

import (
	"encoding/json"
	"maps"
	"testing"

	"github.com/drconsole/drconsole/model"
)

// stop-reverse's result as the binary before typed results wrote it (a
// map, keys sorted): a failback stopped then resumes after the upgrade
// with the ends it recorded, and the step writes the same bytes today.
func TestStopReverseResultOfEarlierBinaryIsRead(t *testing.T) {
	const old = `{"connectors":{"reverse-source":"PAUSED"},"dr_ends":{"orders-0":5,"orders-1":7},"paused":["reverse-source"],"primary_ends":{"orders-0":9}}`
	r := &Run{Plan: FailbackPlan("primary->dr"), Run: model.Run{Steps: make([]model.Step, 5)}}
	r.Steps[3] = model.Step{Status: model.StepDone, Result: old}
	stopped, err := recordedEnds(r)
	if err != nil {
		t.Fatal(err)
	}
	dr, derr := stopped.dr()
	primary, perr := stopped.primary()
	if derr != nil || perr != nil || !maps.Equal(dr, map[model.TP]int64{{Topic: "orders"}: 5, {Topic: "orders", Partition: 1}: 7}) ||
		!maps.Equal(primary, map[model.TP]int64{{Topic: "orders"}: 9}) {
		t.Fatalf("ends read back: DR %v %v, primary %v %v", dr, derr, primary, perr)
	}
	if b, _ := json.Marshal(stopped); string(b) != old {
		t.Fatalf("written as\n%s\nwas\n%s", b, old)
	}
	r.Steps[3].Result = `{"v":2,"dr_ends":{"orders-0":5},"primary_ends":{"orders-0":9}}`
	if _, err := recordedEnds(r); err == nil {
		t.Fatal("a result of a newer shape read as this one")
	}
}
