package views

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// A running step's progress (the operator's view of a Kubernetes
// redeploy) is shown under its status, escaped; a step not running here
// shows none.
func TestStepStatusShowsProgress(t *testing.T) {
	p := benchRun()
	p.Progress = map[int]string{2: "FlinkDeployment flink-dr/events-job: lifecycle UPGRADING, job <RECONCILING>", 3: "stale"}
	render := func(i int) string {
		var b bytes.Buffer
		if err := StepStatusFragment(p, i, p.Run.Steps[i]).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if got := render(2); !strings.Contains(got, `data-testid="step-progress-3">FlinkDeployment flink-dr/events-job: lifecycle UPGRADING, job &lt;RECONCILING&gt;</p>`) {
		t.Fatalf("running step:\n%s", got)
	}
	if got := render(3); strings.Contains(got, "step-progress") {
		t.Fatalf("a step not running shows progress:\n%s", got)
	}
}

// Each step of the run page carries its status as a class ("step
// step-done"): a typed status once rendered as templ's unknown-type
// marker instead.
func TestRunPageStepClassesNameTheirStatus(t *testing.T) {
	p := benchRun()
	var b bytes.Buffer
	if err := FailoverRun(p).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if strings.Contains(page, "templ-css-class-unknown-type") {
		t.Fatalf("the run page renders an unknown-type class")
	}
	for i, st := range p.Run.Steps {
		want := regexp.MustCompile(`class="step step-` + string(st.Status) + `( step-current)?" data-testid="step-` + strconv.Itoa(i+1) + `"`)
		if !want.MatchString(page) {
			t.Errorf("step %d (%s): no %s", i+1, st.Status, want)
		}
	}
}
