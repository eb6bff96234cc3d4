package form

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// Free text is capped at MaxText characters, counted as characters (an
// "é" is two bytes, one character), with a message that says the cap.
func TestFreeTextCapped(t *testing.T) {
	at, over := strings.Repeat("é", MaxText), strings.Repeat("é", MaxText+1)
	for _, tc := range []struct {
		name     string
		validate func(string) error
		field    string
	}{
		{"reject or break-glass reason", func(s string) error { return Reason{Reason: s}.Validate() }, "reason"},
		{"approval comment", func(s string) error { return Approve{Comment: s}.Validate() }, "comment"},
		{"override", func(s string) error { return Execute{Override: s}.Validate() }, "override"},
		{"inputs override", func(s string) error { return Execute{InputsOverride: s}.Validate() }, "inputs_override"},
		{"plan reason", func(s string) error { return Plan{Reason: s}.Validate() }, "reason"},
	} {
		if err := tc.validate(at); err != nil {
			t.Errorf("%s of %d characters: %v", tc.name, MaxText, err)
		}
		err := tc.validate(over)
		if e, ok := err.(Errors); !ok || !strings.Contains(e[tc.field], "1,001 characters long; keep it to 1,000") {
			t.Errorf("%s of %d characters: %v", tc.name, MaxText+1, err)
		}
	}
}

// The failback's Flink fields are checked as the failover's are: the
// parallelism within Flink's bound, the DR job id Flink's, the jar id one
// name, the entry class a class name, the copy's location a savepoint URI.
func TestFailbackFlinkFieldsChecked(t *testing.T) {
	form := url.Values{"flow": {"f"}, "failback": {"1"}, "reason": {"back"}, "failback_flink_target": {"flink-primary"},
		"failback_dr_target": {"flink-dr"}, "failback_dr_job": {"d0b0"}, "failback_rewrite_to": {"ftp://x/back"},
		"failback_jar_id": {"a/b.jar"}, "failback_entry_class": {"1Main"}, "failback_parallelism": {"40000"}}
	req := httptest.NewRequest("POST", "/failover", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	err := NewPlan(req).Validate()
	e, ok := err.(Errors)
	if !ok {
		t.Fatalf("%v", err)
	}
	for field, want := range map[string]string{"failback_dr_job": "32 hexadecimal digits", "failback_rewrite_to": "not ftp:",
		"failback_jar_id": "without /", "failback_entry_class": "Java class name", "failback_parallelism": "from 1 to 32,768"} {
		if !strings.Contains(e[field], want) {
			t.Errorf("%s: %q, want %q", field, e[field], want)
		}
	}
}
