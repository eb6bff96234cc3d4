package form

import (
	"errors"
	"maps"

	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
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

// stepFields name the plan form's field that asks for a step of each
// kind: what the runbook says of the step shows beside it.
var stepFields = map[runbook.StepKind]string{
	failover.KindStopMirror: "stop", failover.KindPromoteMirrors: "stop", failover.KindFailoverMirrors: "stop",
	failover.KindTranslateGroup: "groups", failover.KindRestoreFlink: "flink_target", failover.KindRewriteSavepoint: "rewrite_to",
}

// FieldsOf are the fields of this form err refuses: the form's own
// Errors, and what the runbook says of a step (runbook.StepProblem, a
// runbook.StepRefusal) beside the field that asks for the step (a
// failback's restore: its primary Flink cluster). nil when err names no
// field; the page says err whole anyway.
func (p Plan) FieldsOf(err error) Errors {
	out := Errors{}
	add := func(kind runbook.StepKind, msg string) {
		field := stepFields[kind]
		switch {
		case p.Failback && kind == failover.KindRestoreFlink:
			field = "failback_flink_target"
		case p.Failback:
			field = ""
		}
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
