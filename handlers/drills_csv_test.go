package handlers

import (
	"bytes"
	"encoding/csv"
	"testing"
)

// Text in the drills CSV comes from outside (a connector's or Flink's error,
// a job id, group names): a cell starting with = + - @, a tab or a CR is
// defused as in the audit export, so a spreadsheet shows it, never runs it.
func TestDrillsCSVDefusesFormulas(t *testing.T) {
	rec := drillRecord{Run: 7, Flow: "primary->dr", Started: "2026-01-01T00:00:00Z", Status: "failed",
		Error: `=HYPERLINK("http://evil.example","details")`, CleanupError: "+1+cmd|' /C calc'!A0", JobID: "@SUM(1)",
		Cleanup: "-done", Groups: []string{"\tgroup"}, RulesFailed: []string{"\rrule"}}
	var b bytes.Buffer
	if err := writeDrillsCSV(&b, []drillRecord{rec}); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("%v %v", rows, err)
	}
	head, row := rows[0], rows[1]
	want := map[string]string{
		"error":                        `'=HYPERLINK("http://evil.example","details")`,
		"cleanup_error":                "'+1+cmd|' /C calc'!A0",
		"job_id":                       "'@SUM(1)",
		"cleanup":                      "'-done",
		"temporary_groups":             "'\tgroup",
		"rules_that_would_have_failed": "'\rrule",
		"flow":                         "primary->dr",
		"run":                          "7",
	}
	for i, h := range head {
		if w, ok := want[h]; ok && row[i] != w {
			t.Errorf("%s: %q, want %q", h, row[i], w)
		}
	}
}
