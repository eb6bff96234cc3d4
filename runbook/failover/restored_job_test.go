package failover

import (
	"testing"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
)

// RestoredJob reads the job id from every shape the restore step writes
// (started, found started, through Kubernetes), and nothing from a step
// not done, another kind of step, or a newer shape.
func TestRestoredJobReadsEveryShape(t *testing.T) {
	run := func(kind runbook.StepKind, status model.StepStatus, result string) *runbook.Run {
		r := &runbook.Run{Plan: runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: KindPreflight}, {Kind: kind}}}}
		r.Steps = []model.Step{{Idx: 0, Status: model.StepDone}, {Idx: 1, Status: status, Result: result}}
		return r
	}
	const job = "0123456789abcdef0123456789abcdef"
	for _, c := range []struct {
		name string
		r    *runbook.Run
		want string
	}{
		{"started", run(KindRestoreFlink, model.StepDone, `{"flink_version":"2.2.1","job_id":"`+job+`","savepoint":"file:/sp","target":"flink-dr"}`), job},
		{"found", run(KindRestoreFlink, model.StepDone, `{"job_id":"`+job+`","note":"already running","state":"RUNNING"}`), job},
		{"kubernetes", run(KindRestoreFlink, model.StepDone, `{"deployment":"app","job_id":"`+job+`","job_state":"RUNNING"}`), job},
		{"newer shape", run(KindRestoreFlink, model.StepDone, `{"job_id":"`+job+`","v":2}`), ""},
		{"not done", run(KindRestoreFlink, model.StepRunning, `{"job_id":"`+job+`"}`), ""},
		{"another step", run(KindStopMirror, model.StepDone, `{"job_id":"`+job+`"}`), ""},
	} {
		if got := RestoredJob(c.r, 1); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	if got := RestoredJob(run(KindRestoreFlink, model.StepDone, `{"job_id":"x"}`), 5); got != "" {
		t.Errorf("a step past the plan: %q", got)
	}
}
