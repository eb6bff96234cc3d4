package form

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/failover"
)

// Plan is the new-failover form (POST /failover).
type Plan struct {
	Flow                   string
	Preflight              bool
	Stop                   string // "auto", "failover" or "" (no mirror step)
	TranslateFromSavepoint bool
	SavepointPath          string
	Groups                 []string
	AllowPartial           bool
	FlinkTarget            string
	JarID, EntryClass      string
	Args                   []string
	Parallelism            int
	AllowNonRestoredState  bool
	Reason                 string
}

// NewPlan reads the plan form. Groups come one per line of each "groups"
// value (a textarea, or repeated fields); so do the job's arguments.
func NewPlan(r *http.Request) Plan {
	flow := r.FormValue("flow") // parses the form, r.Form below included
	p := Plan{Flow: flow, Preflight: r.FormValue("preflight") != "", Stop: r.FormValue("stop"),
		TranslateFromSavepoint: r.FormValue("translate_from_savepoint") != "", SavepointPath: strings.TrimSpace(r.FormValue("savepoint_path")),
		Groups: lines(r.Form["groups"]...), AllowPartial: r.FormValue("allow_partial") != "",
		FlinkTarget: r.FormValue("flink_target"), JarID: strings.TrimSpace(r.FormValue("jar_id")),
		EntryClass: strings.TrimSpace(r.FormValue("entry_class")), Args: lines(r.FormValue("args")),
		AllowNonRestoredState: r.FormValue("allow_non_restored_state") != "", Reason: r.FormValue("reason")}
	p.Parallelism, _ = strconv.Atoi(strings.TrimSpace(r.FormValue("parallelism")))
	return p
}

// Validate checks what the form alone can tell; the runbook checks the
// plan against the configuration.
func (p Plan) Validate() error {
	e := Errors{}
	if p.TranslateFromSavepoint && p.SavepointPath == "" {
		e["savepoint_path"] = "Translating from the savepoint needs its path: fill in the savepoint path, or untick the box to translate the groups' committed offsets."
	}
	return e.err()
}

// Plan is the runbook's plan the form asks for; cfg says whether the
// flow's mirror is stopped (MirrorMaker 2) or promoted (Cluster Linking).
func (p Plan) Plan(cfg *config.Config) failover.Plan {
	out := failover.Plan{Flow: p.Flow}
	if p.Preflight {
		out.Steps = append(out.Steps, failover.Step{Kind: failover.KindPreflight})
	}
	switch p.Stop {
	case "auto":
		kind := failover.KindStopMirror
		if f := cfg.Flow(p.Flow); f != nil && f.IsClusterLink() {
			kind = failover.KindPromoteMirrors
		}
		out.Steps = append(out.Steps, failover.Step{Kind: kind})
	case "failover":
		out.Steps = append(out.Steps, failover.Step{Kind: failover.KindFailoverMirrors})
	}
	fromSavepoint := ""
	if p.TranslateFromSavepoint {
		fromSavepoint = p.SavepointPath
	}
	for _, g := range p.Groups {
		out.Steps = append(out.Steps, failover.Step{Kind: failover.KindTranslateGroup, Group: g, AllowPartial: p.AllowPartial,
			FromSavepoint: fromSavepoint})
	}
	if p.FlinkTarget != "" {
		out.Steps = append(out.Steps, failover.Step{Kind: failover.KindRestoreFlink, FlinkTarget: p.FlinkTarget, JarID: p.JarID,
			EntryClass: p.EntryClass, SavepointPath: p.SavepointPath, AllowNonRestoredState: p.AllowNonRestoredState,
			Args: p.Args, Parallelism: p.Parallelism})
	}
	return out
}

// Approve is POST /failover/{run}/approve: the plan hash the approver saw
// (the runbook refuses a plan changed since) and a comment.
type Approve struct{ PlanHash, Comment string }

// NewApprove reads the approval form.
func NewApprove(r *http.Request) Approve {
	return Approve{PlanHash: r.FormValue("plan_hash"), Comment: r.FormValue("comment")}
}

// Validate: the runbook judges the hash; nothing to check here.
func (Approve) Validate() error { return nil }

// Reason is a form that carries only why: reject, break-glass.
type Reason struct{ Reason string }

// NewReason reads a reject or break-glass form.
func NewReason(r *http.Request) Reason { return Reason{Reason: r.FormValue("reason")} }

// Validate: the runbook says which actions need a reason.
func (Reason) Validate() error { return nil }

// Execute is POST /failover/{run}/steps/{step}/execute: the typed
// confirmation, and the override (the operator's reason to proceed
// despite overridable safety rules; "" for none).
type Execute struct{ Confirmation, Override string }

// NewExecute reads the execute form.
func NewExecute(r *http.Request) Execute {
	return Execute{Confirmation: r.FormValue("confirmation"), Override: strings.TrimSpace(r.FormValue("override"))}
}

// Validate: the runbook checks the confirmation against the flow.
func (Execute) Validate() error { return nil }
