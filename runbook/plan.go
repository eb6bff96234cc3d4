// Package runbook is the engine that runs plans: four-eyes approval bound
// to a plan's hash, exactly-once step claims, resume after a crash, and
// every change of a run written with its audit record. It knows no plan
// kind by name: each kind (runbook/failover) registers a PlanType.
package runbook

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/model"
)

// StepKind names what a step does.
type StepKind string

// Step is one planned step and its parameters.
type Step struct {
	Kind StepKind `json:"kind"`
	// translate-group
	Group string `json:"group,omitempty"`
	// AllowPartial lets translate-group commit the partitions that could be
	// translated when some could not.
	AllowPartial bool `json:"allow_partial,omitempty"`
	// FromSavepoint: translate the Kafka offsets of this savepoint (a
	// catalog path) instead of the group's committed offsets, so a job
	// restored from it with a new source uid resumes where its state ends.
	// The group's own offsets may be behind it (committed at the last
	// checkpoint) or, after a savepoint of a job that kept running, ahead
	// of it: records the restored state never saw would be skipped.
	FromSavepoint string `json:"from_savepoint,omitempty"`
	// rewrite-savepoint: the catalog savepoint RewriteFrom, its Kafka
	// source SourceUID ("": the only one), written to RewriteTo (a new
	// directory inside a configured savepoint directory); Choices for the
	// partitions without a translation, by "topic-partition".
	RewriteFrom string                  `json:"rewrite_from,omitempty"`
	SourceUID   string                  `json:"source_uid,omitempty"`
	RewriteTo   string                  `json:"rewrite_to,omitempty"`
	Choices     map[string]model.Choice `json:"choices,omitempty"`
	// savepoint-dr (failback): the DR job JobID on FlinkTarget is stopped
	// with a savepoint; rewrite-savepoint-back copies that savepoint to
	// RewriteTo with SourceUID's splits moved to the primary.
	JobID string `json:"job_id,omitempty"`
	// restore-flink
	FlinkTarget           string   `json:"flink_target,omitempty"`
	JarID                 string   `json:"jar_id,omitempty"`
	EntryClass            string   `json:"entry_class,omitempty"`
	Args                  []string `json:"args,omitempty"`
	SavepointPath         string   `json:"savepoint_path,omitempty"`
	Parallelism           int      `json:"parallelism,omitempty"`
	AllowNonRestoredState bool     `json:"allow_non_restored_state,omitempty"`
	ClaimMode             string   `json:"claim_mode,omitempty"`
	// reverse-to-primary (Cluster Linking failback): reverse-and-pause-mirror
	// instead of reverse-and-start-mirror, DR's mirrors left paused.
	PauseMirrors bool `json:"pause_mirrors,omitempty"`
	// Fence is a switchover's fence (fence step): how the primary's
	// writers are stopped, copied from the flow's configuration when the
	// plan is made, so the approval covers whom it fences and how.
	Fence *Fence `json:"fence,omitempty"`
	// DrillArgs are appended to Args in a drill (config drill.job_args,
	// copied into the plan when it is created, so approvals cover them);
	// {run} and {group} are replaced when the job is submitted.
	DrillArgs []string `json:"drill_args,omitempty"`
}

// PlanKind says what a run does. The zero kind is a failover, as a plan
// with neither old flag always was.
type PlanKind string

const (
	// PlanFailover moves a flow's consumers and job to DR.
	PlanFailover PlanKind = ""
	// PlanDrill is a DR drill (drill.go): the job is restored as a copy
	// with temporary groups, timed, then cleaned up; production's mirror,
	// groups and job are not touched.
	PlanDrill PlanKind = "drill"
	// PlanFailback is a failback (failback.go) of the completed failover
	// run FailbackOf.
	PlanFailback PlanKind = "failback"
	// PlanSwitchover is a planned switchover (runbook/switchover): the
	// primary's writers fenced and the fence verified, DR caught up to
	// the fenced ends, then a failover's steps.
	PlanSwitchover PlanKind = "switchover"
)

// Fence is how a switchover stops the primary's writers (config's
// switchover, as the plan was approved).
type Fence struct {
	Method     string   `json:"method"` // config.FenceACL, FenceCommand or FenceManual
	Principals []string `json:"principals,omitempty"`
	Command    []string `json:"command,omitempty"`
	// CommandTimeoutMs, QuietPeriodMs and CatchUpTimeoutMs bound the
	// command, the fence's verification and the wait for DR.
	CommandTimeoutMs int64 `json:"command_timeout_ms,omitempty"`
	QuietPeriodMs    int64 `json:"quiet_period_ms"`
	CatchUpTimeoutMs int64 `json:"catch_up_timeout_ms"`
}

func (k PlanKind) String() string {
	if k == PlanFailover {
		return "failover"
	}
	return string(k)
}

// Plan is what an operator asks for and a second one approves.
type Plan struct {
	Flow  string
	Steps []Step
	Kind  PlanKind
	// FailbackOf is the failover run a failback undoes, stamped when the
	// plan is made so the approval covers which cut the reverse flow
	// starts from.
	FailbackOf int64
}

// planWire is a plan's stored form. Approvals are bound to the hash of
// these exact bytes and runs stored by earlier versions must resume, so
// the kind is still written as the two flags it once was; a kind newer
// than those is written by name (Kind). A binary that predates the field
// ignores it and reads a failover whose step kinds (fence, ...) it does
// not know: it refuses to run them, and the bytes it would write again
// hash differently from the ones approved.
type planWire struct {
	Flow       string   `json:"flow"`
	Steps      []Step   `json:"steps"`
	Drill      bool     `json:"drill,omitempty"`
	Failback   bool     `json:"failback,omitempty"`
	FailbackOf int64    `json:"failback_of,omitempty"`
	Kind       PlanKind `json:"kind,omitempty"`
}

// MarshalJSON writes the stored form.
func (p Plan) MarshalJSON() ([]byte, error) {
	w := planWire{Flow: p.Flow, Steps: p.Steps, Drill: p.Kind == PlanDrill,
		Failback: p.Kind == PlanFailback, FailbackOf: p.FailbackOf}
	if p.Kind != PlanFailover && p.Kind != PlanDrill && p.Kind != PlanFailback {
		w.Kind = p.Kind
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads the stored form; both flags at once was never a
// valid plan and is refused.
func (p *Plan) UnmarshalJSON(b []byte) error {
	var w planWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*p = Plan{Flow: w.Flow, Steps: w.Steps, FailbackOf: w.FailbackOf}
	switch {
	case w.Drill && w.Failback:
		return errors.New("failback: a plan is a drill or a failback, not both")
	case w.Kind != "" && (w.Drill || w.Failback):
		return fmt.Errorf("a plan is a %s, a drill or a failback, not more than one", w.Kind)
	case w.Kind == PlanDrill || w.Kind == PlanFailback:
		return fmt.Errorf("plan kind %q is written by its flag", w.Kind)
	case w.Kind != "":
		p.Kind = w.Kind
	case w.Drill:
		p.Kind = PlanDrill
	case w.Failback:
		p.Kind = PlanFailback
	}
	return nil
}

// Hash identifies the plan's exact content: approvals are bound to it, so
// any change to a step or parameter voids them. encoding/json writes struct
// fields in declaration order, so the encoding is canonical.
func (p Plan) Hash() string {
	b, _ := json.Marshal(p) // plain structs: cannot fail
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Validate checks a plan against the configuration before it is stored.
func (p Plan) Validate(cfg *config.Config) error {
	flow := cfg.Flow(p.Flow)
	if flow == nil {
		return fmt.Errorf("no flow named %q", p.Flow)
	}
	if len(p.Steps) == 0 {
		return errors.New("a plan needs at least one step")
	}
	if _, ok := typeOf(p.Kind); !ok {
		return fmt.Errorf("unknown plan kind %q", p.Kind) // its stored form would read as a failover
	}
	return errors.Join(p.kind().Problems(cfg, p)...)
}
