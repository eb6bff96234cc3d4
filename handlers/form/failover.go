package form

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
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
	// Drill plans a DR drill: no stop or promote step (the plan form's
	// stop choice is ignored), groups and job as copies.
	Drill bool
	// Failback plans the failback of the flow (failback.FailbackPlan):
	// its steps are fixed but for one translate-group-back per group and
	// the Flink steps (FlinkBack, when its primary target is picked); every
	// other field but the reason is ignored. A Cluster Linking flow's
	// (failback.LinkFailbackPlan) takes only PauseMirrors.
	Failback  bool
	FlinkBack FlinkBack
	// Switchover plans a planned switchover (runbook/switchover): the
	// fence, its check and the wait for DR first, the mirror always
	// stopped; Preflight and Stop are not used.
	Switchover bool
	// PauseMirrors: a Cluster Linking failback reverses with
	// reverse-and-pause-mirror, leaving DR's mirrors paused.
	PauseMirrors bool
	// Strategy is the restore strategy picked: StrategyRewrite,
	// StrategyNewUID, or "" (as the boxes say).
	Strategy string
	// The rewrite's destination ("" proposes one: failover.RewriteDest),
	// source uid ("": the only Kafka source) and per-partition choices.
	RewriteTo, SourceUID string
	Choices              map[string]model.Choice
	choiceErrs           Errors
	parallelismErr       string
	// SavepointTyped: SavepointPath was typed, not picked from the catalog.
	SavepointTyped bool
}

// Restore strategies of the plan form (failover.Request.Strategy).
const (
	StrategyRewrite = runbook.StrategyRewrite
	StrategyNewUID  = runbook.StrategyNewUID
)

// ChoiceField and ChoiceAtField name a partition's choice fields: the
// kind (earliest, latest, timestamp) and the timestamp's time.
func ChoiceField(key string) string   { return "choice_" + key }
func ChoiceAtField(key string) string { return "choice_at_" + key }

// readChoices reads every partition's choice field; a blank one is no
// choice.
func (p *Plan) readChoices(r *http.Request) {
	for name, values := range r.Form {
		key, ok := strings.CutPrefix(name, "choice_")
		if !ok || strings.HasPrefix(name, "choice_at_") || len(values) == 0 {
			continue
		}
		text := strings.TrimSpace(values[0])
		if text == model.ChoiceTimestamp {
			text += " " + r.FormValue(ChoiceAtField(key))
		}
		c, chosen, err := model.ParseChoice(text)
		switch {
		case err != nil:
			if p.choiceErrs == nil {
				p.choiceErrs = Errors{}
			}
			p.choiceErrs[name] = key + ": " + err.Error()
		case chosen:
			if p.Choices == nil {
				p.Choices = map[string]model.Choice{}
			}
			p.Choices[key] = c
		}
	}
}

// NewPlan reads the plan form (a POST, or the GET that refreshes the
// pickers). Groups are the picked ones ("group_pick", one group per
// value) then those typed one per line of each "groups" value, in that
// order, without duplicates; a name is never split at a comma. The job's
// arguments come one per line too. A typed jar id, entry class or
// savepoint path wins over the picked one ("jar_pick" is "jar id|entry
// class", views.JarPick: a Java class name has no "|").
func NewPlan(r *http.Request) Plan {
	flow := r.FormValue("flow") // parses the form, r.Form below included
	p := Plan{Flow: flow, Preflight: r.FormValue("preflight") != "", Stop: r.FormValue("stop"),
		TranslateFromSavepoint: r.FormValue("translate_from_savepoint") != "",
		SavepointPath:          firstOf(r.FormValue("savepoint_path"), r.FormValue("savepoint_pick")),
		Groups:                 unique(append(lines(r.Form["group_pick"]...), lines(r.Form["groups"]...)...)), AllowPartial: r.FormValue("allow_partial") != "",
		FlinkTarget: r.FormValue("flink_target"), Args: lines(r.FormValue("args")),
		AllowNonRestoredState: r.FormValue("allow_non_restored_state") != "", Reason: r.FormValue("reason")}
	p.SavepointTyped = strings.TrimSpace(r.FormValue("savepoint_path")) != ""
	pickedJar, pickedClass := splitJarPick(r.FormValue("jar_pick"))
	p.JarID = firstOf(r.FormValue("jar_id"), pickedJar)
	p.EntryClass = firstOf(r.FormValue("entry_class"), pickedClass)
	p.Parallelism, p.parallelismErr = readParallelism(r.FormValue("parallelism"))
	p.Strategy = r.FormValue("restore_strategy")
	p.Drill = r.FormValue("drill") != ""
	p.Failback = r.FormValue("failback") != ""
	p.Switchover = r.FormValue("switchover") != ""
	p.RewriteTo, p.SourceUID = strings.TrimSpace(r.FormValue("rewrite_to")), strings.TrimSpace(r.FormValue("source_uid"))
	p.readChoices(r)
	if p.Failback {
		p.FlinkBack = readFlinkBack(r)
		p.PauseMirrors = r.FormValue("failback_pause_mirrors") != ""
	}
	return p
}

// Defaults is what the empty plan form starts with (pre-flight checked,
// stop the mirror): the summary beside it says the same before anything is
// touched.
func (p Plan) Defaults() Plan {
	p.Preflight, p.Stop = true, "auto"
	return p
}

func splitJarPick(v string) (jarID, entryClass string) {
	if i := strings.LastIndexByte(v, '|'); i >= 0 {
		return v[:i], v[i+1:]
	}
	return v, ""
}

// Validate checks what the form alone can tell; the runbook checks the
// plan against the configuration.
func (p Plan) Validate() error {
	e := Errors{}
	if p.TranslateFromSavepoint && p.SavepointPath == "" {
		e["savepoint_path"] = "Translating from the savepoint needs its path: fill in the savepoint path, or untick the box to translate the groups' committed offsets."
	}
	switch p.Strategy {
	case "", StrategyNewUID:
	case StrategyRewrite:
		if p.SavepointPath == "" {
			e["savepoint_path"] = "The rewritten-savepoint restore needs the savepoint to rewrite: pick it from the catalog."
		}
		if p.AllowNonRestoredState {
			e["allow_non_restored_state"] = "A rewritten savepoint keeps its source uid: untick allowNonRestoredState (it would hide state that did not match)."
		}
	default:
		e["restore_strategy"] = "Unknown restore strategy " + strconv.Quote(p.Strategy)
	}
	for k, v := range p.choiceErrs {
		e[k] = v
	}
	checkText(e, "reason", "The reason", p.Reason)
	if p.Switchover && (p.Drill || p.Failback) {
		e["switchover"] = "A plan is one of a drill, a failback or a switchover: untick the others."
	}
	if p.Failback {
		p.FlinkBack.validate(e)
		return e.err()
	}
	p.validateRestore(e)
	return e.err()
}

// validateRestore adds what the form alone can tell of the restore's
// fields to e (the jar list is CheckJar's).
func (p Plan) validateRestore(e Errors) {
	checkJob(e, "", p.JarID, p.EntryClass, p.Args, p.parallelismErr)
	if msg := checkSavepointURI("Savepoint", p.SavepointPath); p.SavepointTyped && msg != "" && e["savepoint_path"] == "" {
		e["savepoint_path"] = msg
	}
	if msg := checkSavepointURI("The rewritten copy's location", p.RewriteTo); msg != "" {
		e["rewrite_to"] = msg
	}
}

// Request is what the form asks the runbook for; the plan kind's rules
// (runbook.Request.Plan) decide the steps.
func (p Plan) Request() runbook.Request {
	q := runbook.Request{Flow: p.Flow, Kind: runbook.PlanFailover, Preflight: p.Preflight, Stop: p.Stop, Groups: p.Groups,
		AllowPartial: p.AllowPartial, TranslateFromSavepoint: p.TranslateFromSavepoint, SavepointPath: p.SavepointPath,
		Strategy: p.Strategy, RewriteTo: strings.TrimSpace(p.RewriteTo), SourceUID: p.SourceUID, Choices: p.Choices,
		Restore: runbook.Step{FlinkTarget: p.FlinkTarget, JarID: p.JarID, EntryClass: p.EntryClass, Args: p.Args,
			Parallelism: p.Parallelism, AllowNonRestoredState: p.AllowNonRestoredState},
		FlinkBack: p.FlinkBack.request(), PauseMirrors: p.PauseMirrors}
	switch {
	case p.Failback:
		q.Kind = runbook.PlanFailback
	case p.Drill:
		q.Kind = runbook.PlanDrill
	case p.Switchover:
		q.Kind = runbook.PlanSwitchover
	}
	return q
}
