package flink

// A client for the parts of Flink's REST API (JobManager, /v1) the console
// reads: job and checkpoint history for the savepoint catalog, savepoint
// trigger progress, uploaded jars. Triggering a savepoint and running a jar
// change a job: runbook/internal/effect sends those requests.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// RESTClient talks to one Flink JobManager.
type RESTClient struct {
	// Base is the REST address, e.g. http://flink-jobmanager:8081.
	Base string
	HTTP *http.Client
}

// NewRESTClient returns a client with a 30 s request timeout.
func NewRESTClient(base string) *RESTClient {
	return &RESTClient{Base: strings.TrimSuffix(base, "/"), HTTP: &http.Client{Timeout: 30 * time.Second}}
}

// RESTError is a non-2xx answer; Flink puts its reasons in "errors".
type RESTError struct {
	Method, Path string
	Status       int
	Errors       []string
}

func (e *RESTError) Error() string {
	msg := strings.Join(e.Errors, "; ")
	if len(msg) > 500 {
		msg = msg[:500] + "…" // Flink sends whole Java stack traces
	}
	return fmt.Sprintf("flink: %s %s: HTTP %d: %s", e.Method, e.Path, e.Status, msg)
}

// do sends one GET request and reads its answer into out.
func (c *RESTClient) do(ctx context.Context, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Base+path, nil)
	if err != nil {
		return err
	}
	resp, err := c.HTTP.Do(req)
	return Answer(http.MethodGet, path, resp, err, out)
}

// Answer reads the outcome of one request to the JobManager (resp and err
// as http.Client.Do returned them) into out; a non-2xx answer is a
// *RESTError. It sends nothing: this package only reads, and the requests
// that change a job (savepoint triggers, jar runs) are sent by
// runbook/internal/effect.
func Answer(method, path string, resp *http.Response, err error, out any) error {
	if err != nil {
		return fmt.Errorf("flink: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("flink: %s %s: reading the answer: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		e := &RESTError{Method: method, Path: path, Status: resp.StatusCode}
		var fe struct {
			Errors []string `json:"errors"`
		}
		if json.Unmarshal(data, &fe) == nil {
			e.Errors = fe.Errors
		}
		return e
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("flink: %s %s: unexpected answer: %w", method, path, err)
	}
	return nil
}

// Version returns the cluster's Flink version (GET /config).
func (c *RESTClient) Version(ctx context.Context) (string, error) {
	var cfg struct {
		Version string `json:"flink-version"`
	}
	err := c.do(ctx, "/config", &cfg)
	return cfg.Version, err
}

// JobState is a job's state in Flink's REST answers.
type JobState string

// Job states (JobStatus in Flink). Finished, canceled and failed are final.
const (
	JobInitializing JobState = "INITIALIZING"
	JobCreated      JobState = "CREATED"
	JobRunning      JobState = "RUNNING"
	JobFailing      JobState = "FAILING"
	JobFailed       JobState = "FAILED"
	JobCancelling   JobState = "CANCELLING"
	JobCanceled     JobState = "CANCELED"
	JobFinished     JobState = "FINISHED"
	JobRestarting   JobState = "RESTARTING"
	JobSuspended    JobState = "SUSPENDED"
	JobReconciling  JobState = "RECONCILING"
)

// Final reports a state the job never leaves.
func (s JobState) Final() bool { return s == JobFinished || s == JobCanceled || s == JobFailed }

// CheckpointStatus is a checkpoint's status in a job's checkpoint history.
type CheckpointStatus string

// Checkpoint statuses.
const (
	CheckpointInProgress CheckpointStatus = "IN_PROGRESS"
	CheckpointCompleted  CheckpointStatus = "COMPLETED"
	CheckpointFailed     CheckpointStatus = "FAILED"
)

// OperationStatus is where an asynchronous operation (a savepoint
// trigger) stands; a completed one may still have failed.
type OperationStatus string

// Operation statuses.
const (
	OperationInProgress OperationStatus = "IN_PROGRESS"
	OperationCompleted  OperationStatus = "COMPLETED"
)

// Job is an entry of GET /jobs/overview.
type Job struct {
	ID        string   `json:"jid"`
	Name      string   `json:"name"`
	State     JobState `json:"state"`
	StartTime int64    `json:"start-time"`
	EndTime   int64    `json:"end-time"`
}

// Jobs lists the cluster's jobs.
func (c *RESTClient) Jobs(ctx context.Context) ([]Job, error) {
	var out struct {
		Jobs []Job `json:"jobs"`
	}
	err := c.do(ctx, "/jobs/overview", &out)
	return out.Jobs, err
}

// Checkpoint is an entry of a job's checkpoint history.
type Checkpoint struct {
	ID             int64            `json:"id"`
	Status         CheckpointStatus `json:"status"`
	IsSavepoint    bool             `json:"is_savepoint"`
	CheckpointType string           `json:"checkpoint_type"`
	ExternalPath   string           `json:"external_path"` // where it was written; "<checkpoint-not-externally-addressable>" otherwise
	StateSize      int64            `json:"state_size"`
	TriggerTime    int64            `json:"trigger_timestamp"`
	LatestAckTime  int64            `json:"latest_ack_timestamp"`
	FailureMessage string           `json:"failure_message"`
	// Discarded: Flink has disposed of this completed checkpoint (subsumed
	// by a newer one); its files are going or gone, external_path stays.
	Discarded bool `json:"discarded"`
}

// CheckpointHistory is GET /jobs/{id}/checkpoints.
type CheckpointHistory struct {
	Latest struct {
		Completed *Checkpoint `json:"completed"`
		Savepoint *Checkpoint `json:"savepoint"`
		Restored  *struct {
			ID           int64  `json:"id"`
			IsSavepoint  bool   `json:"is_savepoint"`
			ExternalPath string `json:"external_path"`
		} `json:"restored"`
	} `json:"latest"`
	History []Checkpoint `json:"history"`
}

// Checkpoints returns a job's checkpoint history. Flink keeps only the last
// few (web.checkpoints.history) and forgets all when the JobManager dies:
// the console's catalog remembers them.
func (c *RESTClient) Checkpoints(ctx context.Context, jobID string) (*CheckpointHistory, error) {
	var out CheckpointHistory
	if err := c.do(ctx, "/jobs/"+url.PathEscape(jobID)+"/checkpoints", &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SavepointStatus is the state of a triggered savepoint.
type SavepointStatus struct {
	Done     bool
	Location string // when done and successful
	Failure  string // when done and failed
}

// SavepointStatus polls a trigger (GET /jobs/{id}/savepoints/{trigger}).
func (c *RESTClient) SavepointStatus(ctx context.Context, jobID, triggerID string) (SavepointStatus, error) {
	var out struct {
		Status struct {
			ID OperationStatus `json:"id"`
		} `json:"status"`
		Operation struct {
			Location     string          `json:"location"`
			FailureCause json.RawMessage `json:"failure-cause"`
		} `json:"operation"`
	}
	err := c.do(ctx, "/jobs/"+url.PathEscape(jobID)+"/savepoints/"+url.PathEscape(triggerID), &out)
	if err != nil {
		return SavepointStatus{}, err
	}
	s := SavepointStatus{Done: out.Status.ID == OperationCompleted, Location: out.Operation.Location}
	if s.Done && s.Location == "" {
		var cause struct {
			Class      string `json:"class"`
			Stacktrace string `json:"stack-trace"`
		}
		json.Unmarshal(out.Operation.FailureCause, &cause)
		first, _, _ := strings.Cut(cause.Stacktrace, "\n")
		s.Failure = strings.TrimSpace(cause.Class + " " + first)
		if s.Failure == "" {
			s.Failure = "savepoint failed without a reason"
		}
	}
	return s, nil
}

// WaitSavepoint polls a trigger every interval until it is done, calling
// progress with the time waited so far, and returns the savepoint path.
func (c *RESTClient) WaitSavepoint(ctx context.Context, jobID, triggerID string, interval time.Duration, progress func(time.Duration)) (string, error) {
	start := time.Now()
	for {
		s, err := c.SavepointStatus(ctx, jobID, triggerID)
		if err != nil {
			return "", err
		}
		if s.Done {
			if s.Failure != "" {
				return "", fmt.Errorf("flink: savepoint of job %s failed: %s", jobID, s.Failure)
			}
			return s.Location, nil
		}
		if progress != nil {
			progress(time.Since(start))
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("flink: waiting for the savepoint of job %s: %w", jobID, ctx.Err())
		case <-time.After(interval):
		}
	}
}

// RunRequest runs an uploaded jar (POST /jars/{jarid}/run).
type RunRequest struct {
	EntryClass            string   `json:"entryClass,omitempty"`
	ProgramArgsList       []string `json:"programArgsList,omitempty"`
	Parallelism           int      `json:"parallelism,omitempty"`
	SavepointPath         string   `json:"savepointPath,omitempty"`
	AllowNonRestoredState bool     `json:"allowNonRestoredState"`
	// ClaimMode is NO_CLAIM, CLAIM or LEGACY (Flink 1.20+); older clusters
	// take the same values as RestoreMode (see RestoreModeField).
	ClaimMode   string `json:"claimMode,omitempty"`
	RestoreMode string `json:"restoreMode,omitempty"`
	// JobID fixes the new job's id (32 hex digits): submitting the same
	// restore twice then finds the first job instead of starting another.
	JobID string `json:"jobId,omitempty"`
}

// RestoreModeField says which field a Flink version reads: "claimMode" from
// 1.20 on, "restoreMode" before.
func RestoreModeField(version string) string {
	major, minor, ok := parseVersion(version)
	if ok && (major > 1 || (major == 1 && minor >= 20)) {
		return "claimMode"
	}
	return "restoreMode"
}

func parseVersion(v string) (major, minor int, ok bool) {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	var err1, err2 error
	major, err1 = strconv.Atoi(parts[0])
	minor, err2 = strconv.Atoi(strings.TrimLeft(parts[1], "v"))
	return major, minor, err1 == nil && err2 == nil
}

// Job returns one job's id, name and state (GET /jobs/{id}); a job the
// cluster does not know is a *RESTError with Status 404.
func (c *RESTClient) Job(ctx context.Context, jobID string) (Job, error) {
	var j Job
	err := c.do(ctx, "/jobs/"+url.PathEscape(jobID), &j)
	return j, err
}

// Jar is an uploaded jar (GET /jars): Uploaded is epoch ms, Entry the
// program classes Flink found in its manifest (often one; none when the
// jar names no main class, and then a run must name one).
type Jar struct {
	ID       string     `json:"id"`
	Name     string     `json:"name"`
	Uploaded int64      `json:"uploaded"`
	Entry    []JarEntry `json:"entry"`
}

// JarEntry is one program class of a jar.
type JarEntry struct {
	Name string `json:"name"`
}

// Jars lists the jars uploaded to the cluster.
func (c *RESTClient) Jars(ctx context.Context) ([]Jar, error) {
	var out struct {
		Files []Jar `json:"files"`
	}
	err := c.do(ctx, "/jars", &out)
	return out.Files, err
}

// JobDetail is GET /jobs/{id}: the job's state and, per vertex, the
// records it exchanged over the network (Flink's aggregated vertex metrics,
// refreshed every metrics.fetcher.update-interval, 10 s by default).
type JobDetail struct {
	ID       string   `json:"jid"`
	State    JobState `json:"state"`
	Vertices []struct {
		Name    string `json:"name"`
		Metrics struct {
			ReadRecords  int64 `json:"read-records"`
			WriteRecords int64 `json:"write-records"`
		} `json:"metrics"`
	} `json:"vertices"`
}

// RecordsSeen is how many records the job is known to have processed:
// what its sources emitted (write-records of the vertices named
// "Source: …"), or else what any vertex received. A job chained into a
// single vertex exchanges nothing over the network: it shows 0 however
// much it processed.
func (d JobDetail) RecordsSeen() int64 {
	var emitted, received int64
	for _, v := range d.Vertices {
		if strings.HasPrefix(v.Name, "Source:") {
			emitted += v.Metrics.WriteRecords
		}
		received = max(received, v.Metrics.ReadRecords)
	}
	return max(emitted, received)
}

// JobDetail returns GET /jobs/{id} (a *RESTError with Status 404 for a
// job the cluster does not know).
func (c *RESTClient) JobDetail(ctx context.Context, jobID string) (JobDetail, error) {
	var d JobDetail
	err := c.do(ctx, "/jobs/"+url.PathEscape(jobID), &d)
	return d, err
}
