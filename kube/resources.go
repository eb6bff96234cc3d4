package kube

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ErrBadAnswer marks an answer that does not have the resource's shape.
var ErrBadAnswer = errors.New("malformed answer")

// Deployment is what the console reads of a FlinkDeployment (field names:
// the operator's docs/content/docs/custom-resource/reference.md).
type Deployment struct {
	Namespace, Name string
	// ResourceVersion is the precondition of a patch based on this read.
	ResourceVersion string
	Generation      int64
	Job             JobSpec
	Status          DeploymentStatus
}

// JobSpec is spec.job, or the job of the last reconciled spec.
type JobSpec struct {
	InitialSavepointPath string
	// Nonce is savepointRedeployNonce; nil when unset.
	Nonce                 *int64
	UpgradeMode, State    string
	AllowNonRestoredState bool
	Args                  []string
}

// JobState is a FlinkDeployment's status.jobStatus.state: Flink's job
// states, and RECONCILING while the operator deploys.
type JobState string

// The job states the console acts on.
const (
	JobRunning     JobState = "RUNNING"
	JobFailed      JobState = "FAILED"
	JobReconciling JobState = "RECONCILING"
)

// LifecycleState is a FlinkDeployment's status.lifecycleState.
type LifecycleState string

// Lifecycle states (ResourceLifecycleState in the operator).
const (
	LifecycleCreated     LifecycleState = "CREATED"
	LifecycleDeployed    LifecycleState = "DEPLOYED" // deployed, not yet known to be healthy
	LifecycleStable      LifecycleState = "STABLE"   // deployed and healthy
	LifecycleUpgrading   LifecycleState = "UPGRADING"
	LifecycleSuspended   LifecycleState = "SUSPENDED"
	LifecycleFailed      LifecycleState = "FAILED"
	LifecycleRollingBack LifecycleState = "ROLLING_BACK"
	LifecycleRolledBack  LifecycleState = "ROLLED_BACK"
)

// ReconciliationState is a FlinkDeployment's status.reconciliationStatus.state.
type ReconciliationState string

// Reconciliation states.
const (
	ReconciliationDeployed    ReconciliationState = "DEPLOYED"
	ReconciliationUpgrading   ReconciliationState = "UPGRADING"
	ReconciliationRollingBack ReconciliationState = "ROLLING_BACK"
	ReconciliationRolledBack  ReconciliationState = "ROLLED_BACK"
)

// SnapshotState is a FlinkStateSnapshot's status.state.
type SnapshotState string

// Snapshot states; completed, failed and abandoned are final.
const (
	SnapshotTriggerPending SnapshotState = "TRIGGER_PENDING"
	SnapshotInProgress     SnapshotState = "IN_PROGRESS"
	SnapshotCompleted      SnapshotState = "COMPLETED"
	SnapshotFailed         SnapshotState = "FAILED"
	SnapshotAbandoned      SnapshotState = "ABANDONED"
)

// DeploymentStatus is the operator's status of the resource.
type DeploymentStatus struct {
	JobState       JobState
	JobID          string
	LifecycleState LifecycleState
	// Error is status.error: a JSON FlinkResourceException or plain text.
	Error               string
	ReconciliationState ReconciliationState
	// Reconciled is the job of status.reconciliationStatus.lastReconciledSpec:
	// what the operator has taken up; nil before it reconciled once.
	Reconciled *JobSpec
}

// Snapshot is what the console reads of a FlinkStateSnapshot (operator 1.10+).
type Snapshot struct {
	Name, ResourceVersion string
	// Path and AlreadyExists are spec.savepoint's.
	Path            string
	AlreadyExists   bool
	DisposeOnDelete *bool
	// State is status.state; StatusPath the final path once completed.
	State             SnapshotState
	StatusPath, Error string
}

// field reads one nested field of an answer; absent is nil, and a wrong
// type is an error naming the field (an answer is untrusted).
type reader struct {
	obj  map[string]any
	what string
	err  error
}

func (r *reader) get(path string) any {
	v, ok, err := unstructured.NestedFieldNoCopy(r.obj, strings.Split(path, ".")...)
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("%s: %s: %w: %w", r.what, path, ErrBadAnswer, err)
	}
	if !ok {
		return nil
	}
	return v
}

func (r *reader) fail(path string, v any, want string) {
	if r.err == nil {
		r.err = fmt.Errorf("%s: %s is %T, want %s: %w", r.what, path, v, want, ErrBadAnswer)
	}
}

func (r *reader) str(path string) string {
	switch v := r.get(path).(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		r.fail(path, v, "a string")
		return ""
	}
}

func (r *reader) boolean(path string) *bool {
	switch v := r.get(path).(type) {
	case nil:
		return nil
	case bool:
		return &v
	default:
		r.fail(path, v, "a boolean")
		return nil
	}
}

func (r *reader) int(path string) *int64 {
	switch v := r.get(path).(type) {
	case nil:
		return nil
	case int64:
		return &v
	case float64: // JSON numbers decoded without the integer hint
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			i := int64(v)
			return &i
		}
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return &i
		}
	}
	r.fail(path, r.get(path), "an integer")
	return nil
}

func (r *reader) strings(path string) []string {
	switch v := r.get(path).(type) {
	case nil:
		return nil
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				r.fail(path, e, "a list of strings")
				return nil
			}
			out = append(out, s)
		}
		return out
	default:
		r.fail(path, v, "a list of strings")
		return nil
	}
}

func (r *reader) job(prefix string) JobSpec {
	j := JobSpec{InitialSavepointPath: r.str(prefix + "initialSavepointPath"), Nonce: r.int(prefix + "savepointRedeployNonce"),
		UpgradeMode: r.str(prefix + "upgradeMode"), State: r.str(prefix + "state"), Args: r.strings(prefix + "args")}
	if b := r.boolean(prefix + "allowNonRestoredState"); b != nil {
		j.AllowNonRestoredState = *b
	}
	return j
}

// ParseDeployment reads a FlinkDeployment answer.
func ParseDeployment(u *unstructured.Unstructured) (*Deployment, error) {
	r := &reader{obj: u.Object, what: "FlinkDeployment " + u.GetNamespace() + "/" + u.GetName()}
	if k := u.GetKind(); k != "FlinkDeployment" {
		return nil, fmt.Errorf("%s: kind %q, want FlinkDeployment: %w", r.what, k, ErrBadAnswer)
	}
	d := &Deployment{Namespace: u.GetNamespace(), Name: u.GetName(), ResourceVersion: r.str("metadata.resourceVersion"),
		Job: r.job("spec.job."), Status: DeploymentStatus{JobState: JobState(r.str("status.jobStatus.state")), JobID: r.str("status.jobStatus.jobId"),
			LifecycleState: LifecycleState(r.str("status.lifecycleState")), Error: r.str("status.error"),
			ReconciliationState: ReconciliationState(r.str("status.reconciliationStatus.state"))}}
	if g := r.int("metadata.generation"); g != nil {
		d.Generation = *g
	}
	if spec := r.str("status.reconciliationStatus.lastReconciledSpec"); spec != "" && r.err == nil {
		job, err := reconciledJob(spec)
		if err != nil {
			return nil, fmt.Errorf("%s: status.reconciliationStatus.lastReconciledSpec: %w: %w", r.what, ErrBadAnswer, err)
		}
		d.Status.Reconciled = job
	}
	if r.err != nil {
		return nil, r.err
	}
	if d.ResourceVersion == "" {
		return nil, fmt.Errorf("%s: no metadata.resourceVersion: %w", r.what, ErrBadAnswer)
	}
	return d, nil
}

// reconciledJob reads the job of a lastReconciledSpec: the operator writes
// {"spec": {...}, "resource_metadata": {...}} (SpecUtils.writeSpecWithMeta);
// older operators wrote the spec itself.
func reconciledJob(s string) (*JobSpec, error) {
	var top map[string]any
	if err := json.Unmarshal([]byte(s), &top); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if _, meta := top["resource_metadata"]; meta {
		spec, ok := top["spec"].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("no spec object")
		}
		top = spec
	}
	r := &reader{obj: top, what: "reconciled spec"}
	j := r.job("job.")
	return &j, r.err
}

// ParseSnapshot reads a FlinkStateSnapshot answer.
func ParseSnapshot(u *unstructured.Unstructured) (*Snapshot, error) {
	r := &reader{obj: u.Object, what: "FlinkStateSnapshot " + u.GetNamespace() + "/" + u.GetName()}
	if k := u.GetKind(); k != "FlinkStateSnapshot" {
		return nil, fmt.Errorf("%s: kind %q, want FlinkStateSnapshot: %w", r.what, k, ErrBadAnswer)
	}
	s := &Snapshot{Name: u.GetName(), ResourceVersion: r.str("metadata.resourceVersion"), Path: r.str("spec.savepoint.path"),
		DisposeOnDelete: r.boolean("spec.savepoint.disposeOnDelete"), State: SnapshotState(r.str("status.state")),
		StatusPath: r.str("status.path"), Error: r.str("status.error")}
	if b := r.boolean("spec.savepoint.alreadyExists"); b != nil {
		s.AlreadyExists = *b
	}
	return s, r.err
}

// ErrorText is the operator's status.error for a person: the message (and
// its causes) of the FlinkResourceException JSON the operator writes, or
// the text itself, at most 2,000 characters.
func ErrorText(s string) string {
	var e struct {
		Type, Message string
		ThrowableList []struct{ Type, Message string }
	}
	out := s
	if json.Unmarshal([]byte(s), &e) == nil && (e.Message != "" || e.Type != "") {
		out = strings.TrimPrefix(e.Type+": ", ": ") + e.Message
		for _, c := range e.ThrowableList {
			if c.Message != "" && !strings.Contains(out, c.Message) {
				out += "; caused by " + c.Message
			}
		}
	}
	if len(out) > 2000 {
		out = out[:2000] + "…"
	}
	return out
}
