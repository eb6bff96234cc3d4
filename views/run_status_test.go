package views

import (
	"strings"
	"testing"
)

// The pushed note on a page whose forms are older than the run reads as
// a sentence: "(now running, next: step 3)", no stray spaces.
func TestRunChangedNoteReads(t *testing.T) {
	p := benchRun()
	p.LoadedForms = "pending.false.0.false.x"
	got := renderString(t, RunStatusFragment(p))
	if !strings.Contains(got, "(now running, next: step 3).") {
		t.Fatalf("the note:\n%s", got)
	}
}
