package form

import (
	"errors"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/runbook"
)

// The trigger form refuses an unknown target, a job id that is not
// Flink's, and any stop (confirmed or not: only a runbook stops a job),
// with the first problem shown.
func TestSavepointTriggerValidate(t *testing.T) {
	job := strings.Repeat("ab", 16)
	for _, tc := range []struct {
		f     SavepointTrigger
		field string
	}{
		{SavepointTrigger{Target: "dr", Job: job}, ""},
		{SavepointTrigger{Target: "dr", Job: job, Stop: true}, "stop"},
		{SavepointTrigger{Target: "nope", Job: job}, "target"},
		{SavepointTrigger{Target: "", Job: job}, "target"},
		{SavepointTrigger{Target: "dr", Job: "xyz"}, "job"},
	} {
		err := tc.f.Validate([]string{"dr", "primary"})
		if tc.field == "" {
			if err != nil {
				t.Errorf("%+v: %v", tc.f, err)
			}
			continue
		}
		if tc.field == "stop" {
			if !errors.Is(err, runbook.ErrStopNeedsRunbook) {
				t.Errorf("%+v: %v, want ErrStopNeedsRunbook", tc.f, err)
			}
			continue
		}
		if e, ok := err.(Errors); !ok || e[tc.field] == "" || len(e) != 1 {
			t.Errorf("%+v: %v, want an error on %s", tc.f, err, tc.field)
		}
	}
}

// Passwords: typed twice alike, and within the rules.
func TestPasswordValidate(t *testing.T) {
	if err := (Password{Password: "correct horse battery", Again: "correct horse battery"}).Validate(); err != nil {
		t.Fatal(err)
	}
	if err := (Password{Password: "correct horse battery", Again: "correct horse batter"}).Validate(); err == nil || !strings.Contains(err.Error(), "differ") {
		t.Fatalf("mismatch: %v", err)
	}
	if err := (Password{Password: "x", Again: "x"}).Validate(); err == nil {
		t.Fatal("a one-letter password passed")
	}
}

// Errors lists its messages in field order; none is no error.
func TestErrors(t *testing.T) {
	if got := (Errors{"b": "second", "a": "first"}).Error(); got != "first; second" {
		t.Fatalf("%q", got)
	}
	if (Errors{}).err() != nil {
		t.Fatal("empty Errors is an error")
	}
}
