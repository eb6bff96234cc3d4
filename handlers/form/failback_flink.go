package form

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/drconsole/drconsole/runbook"
)

// FlinkBack is the failback form's Flink part (runbook.FlinkBack): the
// job restored on a primary-region target ("": no Flink step), from the
// DR job's savepoint rewritten into RewriteTo, or (no DR job) without a
// savepoint.
type FlinkBack struct {
	Target, DRTarget, DRJob string
	RewriteTo, SourceUID    string
	JarID, EntryClass       string
	Args                    []string
	Parallelism             int
	parallelismErr          string
}

func readFlinkBack(r *http.Request) FlinkBack {
	v := func(k string) string { return strings.TrimSpace(r.FormValue("failback_" + k)) }
	fb := FlinkBack{Target: v("flink_target"), DRTarget: v("dr_target"), DRJob: v("dr_job"), RewriteTo: v("rewrite_to"), SourceUID: v("source_uid"),
		JarID: v("jar_id"), EntryClass: v("entry_class"), Args: lines(r.FormValue("failback_args"))}
	fb.Parallelism, fb.parallelismErr = readParallelism(v("parallelism"))
	return fb
}

// validate adds what the form alone can tell of the Flink part to e.
func (fb FlinkBack) validate(e Errors) {
	if fb.Target == "" {
		return
	}
	switch {
	case fb.DRJob != "" && fb.DRTarget == "":
		e["failback_dr_target"] = "Pick the DR Flink cluster the job to stop runs on."
	case fb.DRJob != "" && fb.RewriteTo == "":
		e["failback_rewrite_to"] = "Name where the copy for the primary goes: a new directory inside a savepoint directory."
	case fb.DRJob == "" && (fb.DRTarget != "" || fb.RewriteTo != ""):
		e["failback_dr_job"] = "Name the DR job to stop with a savepoint (its job id), or clear the DR cluster and the copy's directory to start the job from the groups' offsets."
	}
	if fb.JarID == "" {
		e["failback_jar_id"] = "Name the uploaded jar on the primary's Flink cluster."
	}
	checkJob(e, "failback_", fb.JarID, fb.EntryClass, fb.Args, fb.parallelismErr)
	if fb.DRJob != "" && !JobIDRE.MatchString(fb.DRJob) {
		e["failback_dr_job"] = fmt.Sprintf("DR job id %s: want Flink's 32 hexadecimal digits (its job id, as the savepoints page lists it).", strconv.Quote(fb.DRJob))
	}
	if msg := checkSavepointURI("The copy's location", fb.RewriteTo); msg != "" && e["failback_rewrite_to"] == "" {
		e["failback_rewrite_to"] = msg
	}
}

// request is the Flink part the form asks for; nil without a target.
func (fb FlinkBack) request() *runbook.FlinkBack {
	if fb.Target == "" {
		return nil
	}
	return &runbook.FlinkBack{DRTarget: fb.DRTarget, DRJob: fb.DRJob, RewriteTo: fb.RewriteTo, SourceUID: fb.SourceUID,
		Restore: runbook.Step{FlinkTarget: fb.Target, JarID: fb.JarID, EntryClass: fb.EntryClass, Args: fb.Args, Parallelism: fb.Parallelism}}
}
