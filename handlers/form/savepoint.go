package form

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/drconsole/drconsole/runbook"
)

// JobIDRE is a Flink job id: 32 lower-case hexadecimal digits.
var JobIDRE = regexp.MustCompile(`^[0-9a-f]{32}$`)

// SavepointFilter is the catalog page's query: a Flink target, a job and
// the flow usability is judged against (each "" for any / the default).
type SavepointFilter struct{ Target, Job, Flow string }

// NewSavepointFilter reads GET /savepoints's query.
func NewSavepointFilter(r *http.Request) SavepointFilter {
	q := r.URL.Query()
	return SavepointFilter{Target: q.Get("target"), Job: q.Get("job"), Flow: q.Get("flow")}
}

// Validate: any value filters (an unknown one finds nothing).
func (SavepointFilter) Validate() error { return nil }

// SavepointRegister is POST /savepoints/register: a savepoint's path.
type SavepointRegister struct{ Path, Flow string }

// NewSavepointRegister reads the register form.
func NewSavepointRegister(r *http.Request) SavepointRegister {
	return SavepointRegister{Path: strings.TrimSpace(r.FormValue("path")), Flow: r.FormValue("flow")}
}

// Validate: a path is needed (the catalog checks where it points).
func (f SavepointRegister) Validate() error {
	if f.Path == "" {
		return Errors{"path": "give the savepoint's path"}
	}
	return nil
}

// SavepointTrigger is POST /savepoints/trigger: take a savepoint of a job,
// which keeps running. Stop is a request to end the job with it (an older
// page, a crafted form): refused, never quietly turned into a plain one.
type SavepointTrigger struct {
	Target, Job string
	Stop        bool
	Flow        string
}

// NewSavepointTrigger reads the trigger form; job ids are compared lower-case.
func NewSavepointTrigger(r *http.Request) SavepointTrigger {
	return SavepointTrigger{Target: strings.TrimSpace(r.FormValue("target")), Job: strings.ToLower(strings.TrimSpace(r.FormValue("job"))),
		Stop: r.FormValue("stop") != "", Flow: r.FormValue("flow")}
}

// Validate checks the target is one of targets, the job id is Flink's,
// and no stop is asked for (runbook.ErrStopNeedsRunbook); the first
// problem is the one shown.
func (f SavepointTrigger) Validate(targets []string) error {
	switch {
	case !slices.Contains(targets, f.Target) || f.Target == "":
		return Errors{"target": fmt.Sprintf("Flink target %q is not configured (have %s)", f.Target, strings.Join(targets, ", "))}
	case !JobIDRE.MatchString(f.Job):
		return Errors{"job": fmt.Sprintf("job id %q: want Flink's 32 hexadecimal digits", f.Job)}
	case f.Stop:
		return runbook.ErrStopNeedsRunbook
	}
	return nil
}
