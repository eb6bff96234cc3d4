package views

import (
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/drconsole/drconsole/model"
)

// SavepointFlow is a flow the savepoint pages can judge against.
type SavepointFlow struct {
	Name        string
	ClusterLink bool
}

// SavepointJob is a job that has entries in the catalog.
type SavepointJob struct{ Target, ID, Name string }

// SavepointFilter is the catalog page's filter, as asked.
type SavepointFilter struct {
	Target, Job, Flow string
	Targets           []string
	Jobs              []SavepointJob
	Flows             []SavepointFlow
}

// Query is the filter as a query string (for links and polling).
func (f SavepointFilter) Query() string {
	q := url.Values{}
	for k, v := range map[string]string{"target": f.Target, "job": f.Job, "flow": f.Flow} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return q.Encode()
}

// SavepointRow is one catalog entry on the catalog page.
type SavepointRow struct {
	SP model.Savepoint
	// Offsets read from it, sorted by partition; nil when not read.
	Offsets []SavepointOffset
	// Checked: usability was computed for this row (the newest N only).
	Checked bool
	Verdict model.Verdict
	Why     string // what makes it unusable or unknown, in short
	// AgeVsRPO compares its age with the flow's RPO ("" when meaningless);
	// AgeVsRPOWarn marks the worrying side.
	AgeVsRPO     string
	AgeVsRPOWarn bool
}

// SavepointOffset is one partition's next offset to read.
type SavepointOffset struct {
	Key    string
	Offset int64
}

// SavepointGroup is one job's entries, newest first.
type SavepointGroup struct {
	Target, JobID, JobName string
	Rows                   []SavepointRow
}

// SavepointProgress is the live progress block.
type SavepointProgress struct {
	Now      time.Time
	SinceMs  int64 // the page was rendered then: finishing after it reloads the page
	Triggers []SavepointTrigger
}

// FinishedSince reports a trigger that finished after the page was
// rendered (SinceMs).
func (p SavepointProgress) FinishedSince() bool {
	for _, t := range p.Triggers {
		if t.Done && t.Finished.UnixMilli() >= p.SinceMs {
			return true
		}
	}
	return false
}

// Active reports a trigger still in progress.
func (p SavepointProgress) Active() bool {
	for _, t := range p.Triggers {
		if !t.Done {
			return true
		}
	}
	return false
}

// SavepointTriggerForm is the trigger form, as typed, with Flink's jobs.
type SavepointTriggerForm struct {
	Target, Job string
	Error       string
	Live        []TargetJobs
}

// SavepointsPage is the savepoint catalog.
type SavepointsPage struct {
	Chrome  Chrome
	Now     time.Time
	Filter  SavepointFilter
	FlowRPO *int64 // the chosen flow's RPO now; nil when unknown
	// FlowRPOAtLeast: FlowRPO is only a lower bound (some partition's age
	// could not be read).
	FlowRPOAtLeast bool
	Groups         []SavepointGroup
	Total          int // entries matching the filter
	Shown          int
	// UsabilityNote says which rows were judged, against what, how fast.
	UsabilityNote string
	UsabilityErr  string
	CanOperate    bool
	SavepointDirs []string
	RegisterPath  string
	RegisterError string
	Flash, Error  string
	Trigger       SavepointTriggerForm
	Progress      SavepointProgress
}

// K8sForm is the Kubernetes restore preview: typed, then rendered.
type K8sForm struct {
	Namespace, Name string
	Strategy        int // 1: same savepoint; 2: new source uid + allowNonRestoredState
	Patch, Command  string
	File            string
	Error           string
	// Through lists the DR Flink targets the runbook restores through the
	// Kubernetes API ("name (namespace/deployment)"); when any is
	// configured the patch is not handed over as text.
	Through []string
}

// SavepointDetailPage is one savepoint.
type SavepointDetailPage struct {
	Chrome         Chrome
	Now            time.Time
	SP             model.Savepoint
	Flows          []SavepointFlow
	Flow           string
	ClusterLink    bool
	FlowRPO        *int64
	FlowRPOAtLeast bool // FlowRPO is only a lower bound
	AgeVsRPO       string
	AgeVsRPOWarn   bool
	Usability      *model.Usability
	UsabilityErr   string
	// Rewrite is whether the savepoint's Kafka source can be rewritten
	// (nil: not read).
	Rewrite     *model.RewriteState
	UsabilityAt time.Duration // how long it took
	// OffsetsJSON is the offsets file translate takes ("" when not read).
	OffsetsJSON  string
	Partitions   int
	CanOperate   bool
	Strategies   []model.RestoreStrategy
	SuggestedUID string
	K8s          K8sForm
}

// Bytes formats a size; nil is unknown.
func Bytes(v *int64) string {
	if v == nil {
		return Unknown
	}
	n := float64(*v)
	for _, u := range []string{"B", "KB", "MB", "GB", "TB"} {
		if n < 1024 || u == "TB" {
			if u == "B" {
				return fmt.Sprintf("%d B", *v)
			}
			return fmt.Sprintf("%.1f %s", n, u)
		}
		n /= 1024
	}
	return Unknown
}

// MsTime is an epoch-milliseconds pointer as a time; zero when nil.
func MsTime(v *int64) time.Time {
	if v == nil {
		return time.Time{}
	}
	return time.UnixMilli(*v)
}

// SavepointURL is the detail page of entry id.
func SavepointURL(id int64) string { return "/savepoints/" + strconv.FormatInt(id, 10) }

func verdictClass(v model.Verdict) string {
	switch v {
	case model.VerdictUsable:
		return "status-OK"
	case model.VerdictUnusable:
		return "status-CRITICAL"
	}
	return "status-unknown"
}

func ptrText(v *int64) string {
	if v == nil {
		return Unknown
	}
	return strconv.FormatInt(*v, 10)
}
