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

// refusalFields name the plan form's field that asks for a step of each
// kind: a step's refusal shows beside it.
var refusalFields = map[runbook.StepKind]string{
	failover.KindStopMirror: "stop", failover.KindPromoteMirrors: "stop", failover.KindFailoverMirrors: "stop",
	failover.KindTranslateGroup: "groups", failover.KindRestoreFlink: "jar_id", failover.KindRewriteSavepoint: "rewrite_to",
}

// FieldsOf are the plan form's fields err refuses: the form's own Errors,
// and each step the runbook would refuse (runbook.StepRefusal) beside the
// field that asks for the step. nil when err names no field.
func FieldsOf(err error) Errors {
	out := Errors{}
	var walk func(error)
	walk = func(err error) {
		var refusal *runbook.StepRefusal
		switch x := err.(type) {
		case nil:
			return
		case Errors:
			maps.Copy(out, x)
			return
		case interface{ Unwrap() []error }:
			for _, e := range x.Unwrap() {
				walk(e)
			}
			return
		}
		if errors.As(err, &refusal) {
			if field := refusalFields[refusal.Kind]; field != "" {
				msg := refusal.Rule.Name + ": " + refusal.Rule.Evidence
				if out[field] != "" {
					msg = out[field] + "; " + msg
				}
				out[field] = msg
			}
			return
		}
		walk(errors.Unwrap(err))
	}
	walk(err)
	if len(out) == 0 {
		return nil
	}
	return out
}
