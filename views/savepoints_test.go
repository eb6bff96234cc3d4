package views

import (
	"context"
	"strings"
	"testing"
)

// The trigger form offers only running jobs as suggestions (only a
// running job can take a savepoint); the list below it shows every job
// with its state.
func TestTriggerFormSuggestsOnlyRunningJobs(t *testing.T) {
	p := SavepointsPage{Trigger: SavepointTriggerForm{Live: []TargetJobs{{Target: "flink-dr", Jobs: []FlinkJob{
		{ID: "aaaa", Name: "orders", State: "RUNNING", Running: true},
		{ID: "bbbb", Name: "billing", State: "FINISHED"},
	}}}}}
	var b strings.Builder
	if err := triggerForm(p).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	list := html[strings.Index(html, `<datalist id="sp-jobs">`):]
	list = list[:strings.Index(list, "</datalist>")]
	if !strings.Contains(list, `value="aaaa"`) || strings.Contains(list, `value="bbbb"`) {
		t.Fatalf("suggestions %s", list)
	}
	if !strings.Contains(html, "billing on flink-dr: FINISHED") {
		t.Fatalf("the finished job is not listed with its state: %s", html)
	}
}
