package testenv

// Flink: a MiniCluster (JobManager + TaskManager in one JVM) with the full REST API, including
// jar upload/run (flink-runtime-web), started from the jars of the `flink` Maven profile plus
// testenv's own job jar (flinkjob/, built by `fetch.sh flinkjob`).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Flink versions pinned in pom.xml (flink.version, flink.kafka.connector.version) and
// flinkjob/pom.xml.
const (
	FlinkVersion               = "2.2.1"
	FlinkKafkaConnectorVersion = "5.0.0-2.2"
)

// FlinkDist is one Flink version testenv can run: the fetch.sh profiles of its cluster classpath
// and of testenv's job built against it (the same flinkjob/ sources).
type FlinkDist struct {
	Version        string // Flink version, e.g. "2.2.1"
	KafkaConnector string // flink-connector-kafka version
	JarsProfile    string // fetch.sh profile of the MiniCluster classpath (.cache/jars/<profile>)
	JobProfile     string // fetch.sh profile of the job jar (.cache/jars/<profile>/drconsole-flinkjob.jar)
}

// The Flink versions testenv runs. FlinkDefault is what StartFlink uses; Flink1_20 is the second
// version (pom.xml profile flink-1.20, flinkjob/pom.xml profile flink-1.20), for savepoints
// written by a 1.x release; Flink2_3 the newest (profiles flink-2.3), with the connector built
// for 2.2 because none is published for 2.3.
var (
	FlinkDefault = FlinkDist{Version: FlinkVersion, KafkaConnector: FlinkKafkaConnectorVersion, JarsProfile: "flink", JobProfile: "flinkjob"}
	Flink1_20    = FlinkDist{Version: "1.20.3", KafkaConnector: "3.4.0-1.20", JarsProfile: "flink-1.20", JobProfile: "flinkjob-1.20"}
	Flink2_3     = FlinkDist{Version: "2.3.0", KafkaConnector: "5.0.0-2.2", JarsProfile: "flink-2.3", JobProfile: "flinkjob-2.3"}
)

// Main classes of flinkjob/.
const (
	mainFlinkMiniCluster = "drconsole.testenv.flink.MiniClusterMain"
	// FlinkJobEntryClass is testenv's job (KafkaSource -> keyed count -> discard).
	FlinkJobEntryClass = "drconsole.testenv.flink.EventsJob"
)

const (
	flinkStartTimeout     = 120 * time.Second
	flinkJobTimeout       = 120 * time.Second
	flinkSavepointTimeout = 120 * time.Second
)

// flinkJVMFlags are the module flags Flink's own distribution passes on JDK 17
// (env.java.default-opts.all): without --add-opens java.util the REST job submission fails
// with InaccessibleObjectException in DataStreamV2SinkTransformationTranslator.
var flinkJVMFlags = []string{
	"-XX:+IgnoreUnrecognizedVMOptions",
	"--add-exports=java.base/sun.net.util=ALL-UNNAMED",
	"--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
	"--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED",
	"--add-opens=java.base/java.lang=ALL-UNNAMED",
	"--add-opens=java.base/java.net=ALL-UNNAMED",
	"--add-opens=java.base/java.io=ALL-UNNAMED",
	"--add-opens=java.base/java.nio=ALL-UNNAMED",
	"--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
	"--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
	"--add-opens=java.base/java.text=ALL-UNNAMED",
	"--add-opens=java.base/java.time=ALL-UNNAMED",
	"--add-opens=java.base/java.util=ALL-UNNAMED",
	"--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
	"--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
	"--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED",
}

// FlinkJobJar makes sure testenv's job jar is built (fetch.sh flinkjob, at most once per
// process) and returns its path.
func FlinkJobJar(t testing.TB) string {
	t.Helper()
	return filepath.Join(fetchProfile(t, "flinkjob", "drconsole-flinkjob.jar"), "drconsole-flinkjob.jar")
}

// FlinkOptions tune StartFlinkWith.
type FlinkOptions struct {
	// Slots is the number of task slots of the single TaskManager (default 4).
	Slots int
	// Config is written last into config.yaml (overrides the defaults), e.g.
	// {"restart-strategy.type": "none"}.
	Config map[string]string
	// Dist is the Flink version to run; nil = FlinkDefault.
	Dist *FlinkDist
}

// Flink is a running MiniCluster with REST API.
type Flink struct {
	URL           string // http://127.0.0.1:<port>
	Dir           string // config.yaml, log, tmp, upload dirs
	CheckpointDir string // local path of execution.checkpointing.dir
	SavepointDir  string // local path of execution.checkpointing.savepoint-dir (default target)
	Proc          *Process
	Dist          FlinkDist // the Flink version running

	t      testing.TB
	jobJar string
	hc     *http.Client

	mu    sync.Mutex
	jarID string // uploaded job jar (once per cluster)
}

// StartFlink starts a Flink MiniCluster (1 TaskManager, 4 slots) on 127.0.0.1 with the REST API
// on a free port and waits until GET /overview answers with a TaskManager. Checkpoints go to
// file://<tmp>/checkpoints, savepoints by default to file://<tmp>/savepoints.
func StartFlink(t testing.TB) *Flink {
	t.Helper()
	return StartFlinkWith(t, FlinkOptions{})
}

// StartFlinkWith is StartFlink with options.
func StartFlinkWith(t testing.TB, opts FlinkOptions) *Flink {
	t.Helper()
	dist := FlinkDefault
	if opts.Dist != nil {
		dist = *opts.Dist
	}
	jars := fetchProfile(t, dist.JarsProfile, "flink-runtime-*.jar")
	jobJar := filepath.Join(fetchProfile(t, dist.JobProfile, "drconsole-flinkjob.jar"), "drconsole-flinkjob.jar")
	if opts.Slots <= 0 {
		opts.Slots = 4
	}
	dir := t.TempDir()
	f := &Flink{
		Dir:           dir,
		CheckpointDir: filepath.Join(dir, "checkpoints"),
		SavepointDir:  filepath.Join(dir, "savepoints"),
		Dist:          dist,
		t:             t,
		jobJar:        jobJar,
		hc:            &http.Client{Timeout: 30 * time.Second},
	}
	conf := [][2]string{
		{"rest.address", "127.0.0.1"},
		{"rest.bind-address", "127.0.0.1"},
		{"jobmanager.rpc.address", "127.0.0.1"},
		{"jobmanager.bind-host", "127.0.0.1"},
		{"taskmanager.host", "127.0.0.1"},
		{"taskmanager.bind-host", "127.0.0.1"},
		{"taskmanager.numberOfTaskSlots", fmt.Sprint(opts.Slots)},
		// Small fixed memory: one JVM with -Xmx512m holds JobManager and TaskManager.
		{"taskmanager.memory.network.min", "16mb"},
		{"taskmanager.memory.network.max", "16mb"},
		{"taskmanager.memory.managed.size", "16mb"},
		{"io.tmp.dirs", filepath.Join(dir, "tmp")},
		{"web.tmpdir", filepath.Join(dir, "web")},
		{"web.upload.dir", filepath.Join(dir, "upload")},
		{"web.submit.enable", "true"},
		{"execution.checkpointing.dir", "file://" + f.CheckpointDir},
		{"execution.checkpointing.savepoint-dir", "file://" + f.SavepointDir},
		// Fail fast instead of retrying for minutes; a test asserting on restarts can override.
		{"restart-strategy.type", "fixed-delay"},
		{"restart-strategy.fixed-delay.attempts", "3"},
		{"restart-strategy.fixed-delay.delay", "1 s"},
		// REST answers from the ExecutionGraph cache (checkpoint stats, vertices) and vertex
		// metrics are refreshed every 3 s / 10 s by default: make them fresh for tests.
		{"web.refresh-interval", "500"},
		{"metrics.fetcher.update-interval", "500"},
		{"heartbeat.interval", "2000"},
		{"heartbeat.timeout", "20000"},
	}
	keys := make([]string, 0, len(opts.Config))
	for k := range opts.Config {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		conf = append(conf, [2]string{k, opts.Config[k]})
	}
	for _, d := range []string{"conf", "tmp", "web", "upload", "checkpoints", "savepoints"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The cache is shared by worktrees: another checkout's fetch.sh may rebuild the job jar
	// from other sources while this cluster runs. Its own copy keeps classpath and upload equal.
	jb, err := os.ReadFile(jobJar)
	if err != nil {
		t.Fatal(err)
	}
	f.jobJar = filepath.Join(dir, JobJarName)
	if err := os.WriteFile(f.jobJar, jb, 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cp := filepath.Join(jars, "*") + string(os.PathListSeparator) + f.jobJar
	// The REST port is free when picked, but another process may take it
	// before the JVM binds it (seen in make test): then start again on another.
	for attempt := 1; ; attempt++ {
		port := FreePort(t)
		f.URL = fmt.Sprintf("http://127.0.0.1:%d", port)
		var b strings.Builder
		b.WriteString("# testenv: Flink MiniCluster (drconsole.testenv.flink.MiniClusterMain)\n")
		for _, kv := range append(conf, [2]string{"rest.port", fmt.Sprint(port)}) {
			// Flink's config.yaml is YAML: quote every value (paths, "1 s", ...).
			v, _ := json.Marshal(kv[1])
			fmt.Fprintf(&b, "%s: %s\n", kv[0], v)
		}
		if err := os.WriteFile(filepath.Join(dir, "conf", "config.yaml"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		name := "flink"
		if attempt > 1 {
			name = fmt.Sprintf("flink-%d", attempt)
		}
		f.Proc = startProcessOpts(t, name, cp, flinkJVMFlags, dir, mainFlinkMiniCluster, filepath.Join(dir, "conf"))
		err = f.waitReady()
		if err == nil || attempt == 3 || !f.Proc.LogContains(flinkPortTaken) {
			break
		}
		t.Logf("testenv: flink: REST port %d was taken before the JVM bound it; starting again on another", port)
		f.Proc.Kill()
	}
	if err != nil {
		t.Fatalf("testenv: flink: %v", err)
	}
	f.Proc.Startup = time.Since(start)
	t.Logf("testenv: flink %s MiniCluster ready at %s in %s, log %s", dist.Version, f.URL, f.Proc.Startup.Round(time.Millisecond), f.Proc.LogFile)
	return f
}

// flinkPortTaken is what the MiniCluster logs when its REST port is in use.
const flinkPortTaken = "Could not start rest endpoint on any port"

// waitReady waits until the MiniCluster answers /overview with a TaskManager,
// or gives up early once its REST endpoint could not bind.
func (f *Flink) waitReady() error {
	var ready bool
	var running string
	err := f.Proc.waitFor(flinkStartTimeout, 200*time.Millisecond, "REST "+f.URL+"/overview", func() bool {
		if f.Proc.LogContains(flinkPortTaken) {
			return true
		}
		if !f.Proc.LogContains("drconsole MiniCluster REST ready") {
			return false
		}
		var ov struct {
			TaskManagers int    `json:"taskmanagers"`
			Version      string `json:"flink-version"`
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		ready = f.Do(ctx, http.MethodGet, "/overview", nil, &ov) == nil && ov.TaskManagers > 0
		running = ov.Version
		return ready
	})
	if err == nil && !ready {
		return fmt.Errorf("REST endpoint %s: %s", f.URL, flinkPortTaken)
	}
	// A stale or mixed classpath would still start: a version's claims need that version running.
	if err == nil && running != f.Dist.Version {
		return fmt.Errorf("REST endpoint %s reports Flink %q, want %s (classpath .cache/jars/%s)", f.URL, running, f.Dist.Version, f.Dist.JarsProfile)
	}
	return err
}

// FlinkRESTError is a non-2xx answer of the Flink REST API.
type FlinkRESTError struct {
	Method, Path string
	Status       int
	Body         string
}

func (e *FlinkRESTError) Error() string {
	body := e.Body
	if len(body) > 2000 {
		body = body[:2000] + "..."
	}
	return fmt.Sprintf("flink REST %s %s: HTTP %d: %s", e.Method, e.Path, e.Status, body)
}

// Do calls the Flink REST API: body (if not nil) is sent as JSON, a 2xx answer is decoded into
// out (if not nil). Other answers give a *FlinkRESTError.
func (f *Flink) Do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, f.URL+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return f.send(req, out)
}

func (f *Flink) send(req *http.Request, out any) error {
	resp, err := f.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return &FlinkRESTError{Method: req.Method, Path: req.URL.Path, Status: resp.StatusCode, Body: string(b)}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("flink REST %s %s: decode %q: %w", req.Method, req.URL.Path, b, err)
	}
	return nil
}

// UploadJar uploads a jar (POST /jars/upload, multipart field "jarfile") and returns its jar id
// (the last path segment of the returned filename).
func (f *Flink) UploadJar(ctx context.Context, path string) (string, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, err := mw.CreateFormFile("jarfile", filepath.Base(path))
	if err != nil {
		return "", err
	}
	jf, err := os.Open(path)
	if err != nil {
		return "", err
	}
	_, err = io.Copy(part, jf)
	jf.Close()
	if err != nil {
		return "", err
	}
	if err := mw.Close(); err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.URL+"/jars/upload", &body)
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	var res struct {
		Filename string `json:"filename"`
		Status   string `json:"status"`
	}
	if err := f.send(req, &res); err != nil {
		return "", err
	}
	if res.Status != "success" || res.Filename == "" {
		return "", fmt.Errorf("flink REST /jars/upload: unexpected answer %+v", res)
	}
	return filepath.Base(res.Filename), nil
}

// jobJarID uploads testenv's job jar once per cluster.
func (f *Flink) jobJarID(t testing.TB) string {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.jarID == "" {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		id, err := f.UploadJar(ctx, f.jobJar)
		if err != nil {
			t.Fatalf("testenv: flink: upload %s: %v", f.jobJar, err)
		}
		f.jarID = id
	}
	return f.jarID
}

// FlinkJobOptions are the program arguments and restore settings of testenv's job.
type FlinkJobOptions struct {
	Bootstrap   string   // Kafka bootstrap servers (required)
	Topics      []string // default ["events"]
	GroupID     string   // default "flink-events"; offsets are committed on checkpoint
	SourceUID   string   // uid of the KafkaSource operator, default "kafka-source"
	Parallelism int      // default 2
	// CheckpointInterval, default 1 s.
	CheckpointInterval time.Duration
	// Restore: savepoint (or retained checkpoint) path or URI; empty = fresh start.
	SavepointPath         string
	AllowNonRestoredState bool
	// ClaimMode is sent as claimMode when SavepointPath is set; default "NO_CLAIM".
	ClaimMode string
	Name      string // job name, default "drconsole-events"
	// ProbeTopic: the job reports the first record each reader subtask reads per partition to
	// this topic on Bootstrap (key ProbeTag, value "topic,partition,offset,value"); "" = off.
	// The job graph (operator ids) is the same either way. See ReadFlinkProbes.
	ProbeTopic string
	ProbeTag   string // default: the job name
	// CountTopic: every update of the job's per-key count is also written to this topic on
	// Bootstrap (key ProbeTag, value "key,count", key = javaHash(value) mod 8); "" = off. The
	// job graph (operator ids) is the same either way.
	CountTopic string
}

func (o FlinkJobOptions) withDefaults() FlinkJobOptions {
	if len(o.Topics) == 0 {
		o.Topics = []string{"events"}
	}
	if o.GroupID == "" {
		o.GroupID = "flink-events"
	}
	if o.SourceUID == "" {
		o.SourceUID = "kafka-source"
	}
	if o.Parallelism <= 0 {
		o.Parallelism = 2
	}
	if o.CheckpointInterval <= 0 {
		o.CheckpointInterval = time.Second
	}
	if o.ClaimMode == "" {
		o.ClaimMode = "NO_CLAIM"
	}
	if o.Name == "" {
		o.Name = "drconsole-events"
	}
	return o
}

// RunRequest returns the JSON body of POST /jars/{id}/run for opts.
func (o FlinkJobOptions) RunRequest() map[string]any {
	o = o.withDefaults()
	req := map[string]any{
		"entryClass": FlinkJobEntryClass,
		"programArgsList": []string{
			"--bootstrap", o.Bootstrap,
			"--topics", strings.Join(o.Topics, ","),
			"--group", o.GroupID,
			"--source-uid", o.SourceUID,
			"--parallelism", fmt.Sprint(o.Parallelism),
			"--checkpoint-interval-ms", fmt.Sprint(o.CheckpointInterval.Milliseconds()),
			"--name", o.Name,
		},
		"parallelism": o.Parallelism,
	}
	if o.ProbeTopic != "" {
		req["programArgsList"] = append(req["programArgsList"].([]string), "--probe-topic", o.ProbeTopic)
	}
	if o.CountTopic != "" {
		req["programArgsList"] = append(req["programArgsList"].([]string), "--count-topic", o.CountTopic)
	}
	if o.ProbeTopic != "" || o.CountTopic != "" {
		tag := o.ProbeTag
		if tag == "" {
			tag = o.Name
		}
		req["programArgsList"] = append(req["programArgsList"].([]string), "--probe-tag", tag)
	}
	if o.SavepointPath != "" {
		req["savepointPath"] = o.SavepointPath
		req["allowNonRestoredState"] = o.AllowNonRestoredState
		req["claimMode"] = o.ClaimMode
	}
	return req
}

// SubmitJob uploads testenv's job jar (once per cluster) and runs it (POST /jars/{id}/run),
// returning the job id. It does not wait for RUNNING (see WaitJobRunning).
func (f *Flink) SubmitJob(t testing.TB, opts FlinkJobOptions) string {
	t.Helper()
	if opts.Bootstrap == "" {
		t.Fatal("testenv: flink SubmitJob needs Bootstrap")
	}
	id := f.jobJarID(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var res struct {
		JobID string `json:"jobid"`
	}
	start := time.Now()
	if err := f.Do(ctx, http.MethodPost, "/jars/"+id+"/run", opts.RunRequest(), &res); err != nil {
		t.Fatalf("testenv: flink: run job: %v", err)
	}
	o := opts.withDefaults()
	restore := ""
	if o.SavepointPath != "" {
		restore = fmt.Sprintf(", restore from %s (allowNonRestoredState=%v, claimMode=%s)", o.SavepointPath, o.AllowNonRestoredState, o.ClaimMode)
	}
	t.Logf("testenv: flink job %s submitted in %s (topics %v, group %s, uid %s, parallelism %d%s)",
		res.JobID, time.Since(start).Round(time.Millisecond), o.Topics, o.GroupID, o.SourceUID, o.Parallelism, restore)
	return res.JobID
}

// FlinkJobOverview is one entry of GET /jobs/overview.
type FlinkJobOverview struct {
	JID              string         `json:"jid"`
	Name             string         `json:"name"`
	State            string         `json:"state"`
	StartTime        int64          `json:"start-time"`
	EndTime          int64          `json:"end-time"`
	Tasks            map[string]int `json:"tasks"` // running, total, finished, failed, ...
	PendingOperators int            `json:"pending-operators"`
}

// JobOverview returns the job's entry of GET /jobs/overview.
func (f *Flink) JobOverview(ctx context.Context, jobID string) (FlinkJobOverview, error) {
	var res struct {
		Jobs []FlinkJobOverview `json:"jobs"`
	}
	if err := f.Do(ctx, http.MethodGet, "/jobs/overview", nil, &res); err != nil {
		return FlinkJobOverview{}, err
	}
	for _, j := range res.Jobs {
		if j.JID == jobID {
			return j, nil
		}
	}
	return FlinkJobOverview{}, fmt.Errorf("job %s not in /jobs/overview", jobID)
}

// WaitJobRunning waits until the job is RUNNING with all its tasks running (checkpoints can
// only be taken then) and returns the time waited.
func (f *Flink) WaitJobRunning(t testing.TB, jobID string) time.Duration {
	t.Helper()
	start := time.Now()
	var last FlinkJobOverview
	var lastErr error
	err := f.Proc.waitFor(flinkJobTimeout, 100*time.Millisecond, "job "+jobID+" RUNNING", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		last, lastErr = f.JobOverview(ctx, jobID)
		if lastErr != nil {
			return false
		}
		if slices.Contains([]string{"FAILED", "CANCELED", "FINISHED"}, last.State) {
			return true // terminal: reported below
		}
		return last.State == "RUNNING" && last.Tasks["total"] > 0 && last.Tasks["running"] == last.Tasks["total"]
	})
	if err != nil || last.State != "RUNNING" {
		t.Fatalf("testenv: flink: job %s not RUNNING: %v; last overview %+v (err %v)%s", jobID, err, last, lastErr, f.jobException(jobID))
	}
	return time.Since(start)
}

// WaitJobState waits until the job reaches one of the given states (e.g. "FINISHED").
func (f *Flink) WaitJobState(t testing.TB, jobID string, states ...string) FlinkJobOverview {
	t.Helper()
	var last FlinkJobOverview
	var lastErr error
	err := f.Proc.waitFor(flinkJobTimeout, 100*time.Millisecond, fmt.Sprintf("job %s in %v", jobID, states), func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		last, lastErr = f.JobOverview(ctx, jobID)
		return lastErr == nil && slices.Contains(states, last.State)
	})
	if err != nil {
		t.Fatalf("testenv: flink: %v; last overview %+v (err %v)%s", err, last, lastErr, f.jobException(jobID))
	}
	return last
}

// RootException returns the job's root exception (GET /jobs/{id}/exceptions, "root-exception":
// the stack trace of the last failure), "" when it never failed.
func (f *Flink) RootException(ctx context.Context, jobID string) (string, error) {
	var ex struct {
		RootException string `json:"root-exception"`
	}
	err := f.Do(ctx, http.MethodGet, "/jobs/"+jobID+"/exceptions", nil, &ex)
	return ex.RootException, err
}

// jobException returns the root exception of a job for messages.
func (f *Flink) jobException(jobID string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := f.RootException(ctx, jobID)
	if err != nil || s == "" {
		return ""
	}
	if len(s) > 3000 {
		s = s[:3000] + "..."
	}
	return "\nroot exception: " + s
}

// FlinkCheckpointStats is the part of GET /jobs/{id}/checkpoints that testenv uses.
type FlinkCheckpointStats struct {
	Counts struct {
		Restored   int `json:"restored"`
		Total      int `json:"total"`
		InProgress int `json:"in_progress"`
		Completed  int `json:"completed"`
		Failed     int `json:"failed"`
	} `json:"counts"`
	Latest struct {
		Completed *FlinkCheckpoint `json:"completed"`
		Savepoint *FlinkCheckpoint `json:"savepoint"`
		Failed    *FlinkCheckpoint `json:"failed"`
		Restored  *struct {
			ID               int64  `json:"id"`
			RestoreTimestamp int64  `json:"restore_timestamp"`
			IsSavepoint      bool   `json:"is_savepoint"`
			ExternalPath     string `json:"external_path"`
		} `json:"restored"`
	} `json:"latest"`
}

// FlinkCheckpoint is one CheckpointStatistics entry.
type FlinkCheckpoint struct {
	ID             int64  `json:"id"`
	Status         string `json:"status"`
	IsSavepoint    bool   `json:"is_savepoint"`
	CheckpointType string `json:"checkpoint_type"`
	ExternalPath   string `json:"external_path"`
	StateSize      int64  `json:"state_size"`
	TriggerTime    int64  `json:"trigger_timestamp"`
	LatestAckTime  int64  `json:"latest_ack_timestamp"`
	FailureMessage string `json:"failure_message"`
}

// Checkpoints returns GET /jobs/{id}/checkpoints.
func (f *Flink) Checkpoints(ctx context.Context, jobID string) (FlinkCheckpointStats, error) {
	var s FlinkCheckpointStats
	err := f.Do(ctx, http.MethodGet, "/jobs/"+jobID+"/checkpoints", nil, &s)
	return s, err
}

// WaitCheckpoint waits until the job has a completed checkpoint with id > afterID and returns
// it (afterID 0: any completed checkpoint).
func (f *Flink) WaitCheckpoint(t testing.TB, jobID string, afterID int64) FlinkCheckpoint {
	t.Helper()
	var last FlinkCheckpointStats
	var lastErr error
	err := f.Proc.waitFor(flinkJobTimeout, 200*time.Millisecond, "a completed checkpoint of "+jobID, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		last, lastErr = f.Checkpoints(ctx, jobID)
		return lastErr == nil && last.Latest.Completed != nil && last.Latest.Completed.ID > afterID
	})
	if err != nil {
		t.Fatalf("testenv: flink: %v; last stats %+v (err %v)%s", err, last, lastErr, f.jobException(jobID))
	}
	return *last.Latest.Completed
}

// TriggerSavepoint takes a canonical savepoint into dir (a local directory; "" = the cluster's
// default savepoint dir): POST /jobs/{id}/savepoints, or with stop POST /jobs/{id}/stop
// (stop-with-savepoint, drain=false; the job ends FINISHED). It polls
// GET /jobs/{id}/savepoints/{triggerid} until COMPLETED and returns the local path of the
// savepoint directory (the one holding _metadata).
func (f *Flink) TriggerSavepoint(t testing.TB, jobID, dir string, stop bool) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), flinkSavepointTimeout)
	defer cancel()
	target := ""
	if dir != "" {
		target = "file://" + dir
	}
	var trig struct {
		RequestID string `json:"request-id"`
	}
	var err error
	start := time.Now()
	if stop {
		body := map[string]any{"drain": false, "formatType": "CANONICAL"}
		if target != "" {
			body["targetDirectory"] = target
		}
		err = f.Do(ctx, http.MethodPost, "/jobs/"+jobID+"/stop", body, &trig)
	} else {
		body := map[string]any{"cancel-job": false, "formatType": "CANONICAL"}
		if target != "" {
			body["target-directory"] = target
		}
		err = f.Do(ctx, http.MethodPost, "/jobs/"+jobID+"/savepoints", body, &trig)
	}
	if err != nil {
		t.Fatalf("testenv: flink: trigger savepoint (stop=%v): %v", stop, err)
	}
	var st FlinkSavepointStatus
	for {
		st, err = f.SavepointStatus(ctx, jobID, trig.RequestID)
		if err == nil && st.Status.ID == "COMPLETED" {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("testenv: flink: savepoint %s of job %s not COMPLETED within %s: last %+v, err %v", trig.RequestID, jobID, flinkSavepointTimeout, st, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if fc := string(st.Operation.FailureCause); (fc != "" && fc != "null") || st.Operation.Location == "" {
		t.Fatalf("testenv: flink: savepoint of job %s failed: %s", jobID, st.Operation.FailureCause)
	}
	path, err := LocalPath(st.Operation.Location)
	if err != nil {
		t.Fatalf("testenv: flink: %v", err)
	}
	t.Logf("testenv: flink savepoint (stop=%v) of job %s completed in %s: %s", stop, jobID, time.Since(start).Round(time.Millisecond), st.Operation.Location)
	return path
}

// FlinkSavepointStatus is GET /jobs/{id}/savepoints/{triggerid}.
type FlinkSavepointStatus struct {
	Status struct {
		ID string `json:"id"` // IN_PROGRESS, COMPLETED
	} `json:"status"`
	Operation struct {
		Location     string          `json:"location"`
		FailureCause json.RawMessage `json:"failure-cause"`
	} `json:"operation"`
}

// SavepointStatus polls one savepoint trigger.
func (f *Flink) SavepointStatus(ctx context.Context, jobID, triggerID string) (FlinkSavepointStatus, error) {
	var s FlinkSavepointStatus
	err := f.Do(ctx, http.MethodGet, "/jobs/"+jobID+"/savepoints/"+triggerID, nil, &s)
	return s, err
}

// CancelJob cancels a job (PATCH /jobs/{id}?mode=cancel) and waits for CANCELED.
func (f *Flink) CancelJob(t testing.TB, jobID string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := f.Do(ctx, http.MethodPatch, "/jobs/"+jobID+"?mode=cancel", nil, nil); err != nil {
		t.Fatalf("testenv: flink: cancel %s: %v", jobID, err)
	}
	f.WaitJobState(t, jobID, "CANCELED")
}

// LocalPath turns a Flink file URI ("file:/x", "file:///x") or a plain path into a local path.
func LocalPath(loc string) (string, error) {
	if !strings.Contains(loc, ":") {
		return loc, nil
	}
	u, err := url.Parse(loc)
	if err != nil {
		return "", fmt.Errorf("savepoint location %q: %w", loc, err)
	}
	if u.Scheme != "file" {
		return "", fmt.Errorf("savepoint location %q is not a local file URI", loc)
	}
	if u.Path == "" {
		return u.Opaque, nil
	}
	return u.Path, nil
}

// ProgramArgs returns the job's program arguments for opts (programArgsList of RunRequest), for
// callers that run the jar through another client (e.g. flink.RESTClient.RunJar).
func (o FlinkJobOptions) ProgramArgs() []string {
	return o.RunRequest()["programArgsList"].([]string)
}

// JobJarName is the file name of testenv's job jar as GET /jars lists it.
const JobJarName = "drconsole-flinkjob.jar"

// JobJarID uploads testenv's job jar to the cluster once (as SubmitJob does) and returns its
// jar id.
func (f *Flink) JobJarID(t testing.TB) string {
	t.Helper()
	return f.jobJarID(t)
}

// RunJobFrom runs testenv's job (jar jarID, from JobJarID) with args from savepoint, claim mode
// NO_CLAIM, as the Flink Kubernetes Operator deploys a FlinkDeployment's job from
// initialSavepointPath, and returns the job id.
func (f *Flink) RunJobFrom(ctx context.Context, jarID string, args []string, parallelism int, savepoint string, allowNonRestoredState bool) (string, error) {
	var res struct {
		JobID string `json:"jobid"`
	}
	err := f.Do(ctx, http.MethodPost, "/jars/"+jarID+"/run", map[string]any{"entryClass": FlinkJobEntryClass,
		"programArgsList": args, "parallelism": parallelism, "savepointPath": savepoint,
		"allowNonRestoredState": allowNonRestoredState, "claimMode": "NO_CLAIM"}, &res)
	return res.JobID, err
}
