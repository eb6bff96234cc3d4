package form

import (
	"errors"
	"maps"

	"github.com/drconsole/drconsole/runbook"
)

// What the plan form is checked against beyond itself, and where a
// refusal of the runbook shows on it.

// CheckJar checks the typed jar id against the restore target's jars:
// listed when Flink answered (known), and then the id must be one of
// them; otherwise the id must have Flink's shape. The failback's jar is
// on the primary's target (FlinkBack).
func (p Plan) CheckJar(listed []string, known bool) error {
	field, id := "jar_id", p.JarID
	if p.Failback {
		field, id = "failback_jar_id", p.FlinkBack.JarID
	}
	if msg := checkJarID(id, listed, known); msg != "" {
		return Errors{field: msg}
	}
	return nil
}

// JarTarget is the Flink target whose jar list CheckJar needs, and the
// jar id typed for it ("" when the plan restores no job).
func (p Plan) JarTarget() (target, jarID string) {
	if p.Failback {
		return p.FlinkBack.Target, p.FlinkBack.JarID
	}
	return p.FlinkTarget, p.JarID
}

// partFields name the plan form's field for each part of the request
// that asks for steps (the plan kind says which part asks for a step,
// runbook.PartOf): what the runbook says of the step shows beside it.
var partFields = map[runbook.Part]string{
	runbook.PartStop: "stop", runbook.PartGroups: "groups", runbook.PartRestore: "flink_target",
	runbook.PartRewrite: "rewrite_to", runbook.PartFlinkBack: "failback_flink_target",
}

// FieldsOf are the fields of this form err refuses: the form's own
// Errors, and what the runbook says of a step (runbook.StepProblem, a
// runbook.StepRefusal) beside the field that asks for the step (a
// failback's restore: its primary Flink cluster), as the plan kind says
// (runbook.PartOf). nil when err names no
// field; the page says err whole anyway.
func (p Plan) FieldsOf(err error) Errors {
	out := Errors{}
	plan := p.Request().Kind
	add := func(kind runbook.StepKind, msg string) {
		field := partFields[runbook.PartOf(plan, kind)]
		if field == "" {
			return
		}
		if out[field] != "" {
			msg = out[field] + "; " + msg
		}
		out[field] = msg
	}
	var walk func(error)
	walk = func(err error) {
		switch x := err.(type) {
		case nil:
		case Errors:
			maps.Copy(out, x)
		case *runbook.StepProblem:
			add(x.Kind, x.Why)
		case *runbook.StepRefusal:
			add(x.Kind, x.Rule.Name+": "+x.Rule.Evidence)
		case interface{ Unwrap() []error }:
			for _, e := range x.Unwrap() {
				walk(e)
			}
		default:
			walk(errors.Unwrap(err))
		}
	}
	walk(err)
	if len(out) == 0 {
		return nil
	}
	return out
}
