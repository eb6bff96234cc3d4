package notify

import (
	"slices"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/config"
)

// Every run event a receiver may ask for is announced from exactly one
// audit action, and no action maps to an event receivers cannot name.
func TestRunEventsCoverTheRunEvents(t *testing.T) {
	var want, got []string
	for _, e := range config.NotificationEvents {
		if strings.HasPrefix(e, "run.") {
			want = append(want, e)
		}
	}
	for _, e := range runEvents {
		got = append(got, e)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("audit actions announce %v; the run events are %v", got, want)
	}
}
