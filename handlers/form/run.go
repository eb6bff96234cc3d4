package form

import (
	"net/http"
	"strings"
)

// Approve is POST /failover/{run}/approve: the plan hash the approver saw
// (the runbook refuses a plan changed since) and a comment.
type Approve struct{ PlanHash, Comment string }

// NewApprove reads the approval form.
func NewApprove(r *http.Request) Approve {
	return Approve{PlanHash: r.FormValue("plan_hash"), Comment: r.FormValue("comment")}
}

// Validate: the runbook judges the hash; the comment is capped (MaxText).
func (f Approve) Validate() error {
	e := Errors{}
	checkText(e, "comment", "The comment", f.Comment)
	return e.err()
}

// Reason is a form that carries only why: reject, break-glass.
type Reason struct{ Reason string }

// NewReason reads a reject or break-glass form.
func NewReason(r *http.Request) Reason { return Reason{Reason: r.FormValue("reason")} }

// Validate: the runbook says which actions need a reason; it is capped
// (MaxText).
func (f Reason) Validate() error {
	e := Errors{}
	checkText(e, "reason", "The reason", f.Reason)
	return e.err()
}

// Execute is POST /failover/{run}/steps/{step}/execute: the typed
// confirmation, and the override (the operator's reason to proceed
// despite overridable safety rules; "" for none).
// InputsOverride is the second operator's reason to run a step although
// what it rests on (a savepoint's verdict, positions in DR) is unusable or
// unknown.
type Execute struct{ Confirmation, Override, InputsOverride string }

// NewExecute reads the execute form.
func NewExecute(r *http.Request) Execute {
	return Execute{Confirmation: r.FormValue("confirmation"), Override: strings.TrimSpace(r.FormValue("override")),
		InputsOverride: strings.TrimSpace(r.FormValue("inputs_override"))}
}

// Validate: the runbook checks the confirmation against the flow; the
// overrides' reasons are capped (MaxText).
func (f Execute) Validate() error {
	e := Errors{}
	checkText(e, "override", "The override's reason", f.Override)
	checkText(e, "inputs_override", "The override's reason", f.InputsOverride)
	return e.err()
}
