package demo

// A stand-in for a Flink JobManager's REST API in the DR region, so the
// sandbox can walk a whole failover including the restore step. It is NOT
// Flink: it runs no job, it only remembers what was submitted. The console's
// Flink client is proven against real Flink in testenv.

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

// FlinkJarID is the jar the stand-in pretends was uploaded, and
// FlinkEntryClass its program's main class (listed by GET /jars as Flink's
// jar API does, for the plan form's jar picker).
const (
	FlinkJarID      = "sandbox-events-job.jar"
	FlinkEntryClass = "com.example.events.EventsJob"
)

// FlinkStandIn serves a minimal Flink REST API on 127.0.0.1.
type FlinkStandIn struct {
	URL string
	srv *http.Server
	ln  net.Listener

	// SavepointDir is where the stand-in writes the savepoints it takes
	// (a temporary directory, removed by Close).
	SavepointDir string

	mu   sync.Mutex
	jobs map[string]standInJob
	// savepoints taken or in progress (flink_savepoints.go)
	savepoints    []*standInSavepoint
	spDuration    time.Duration
	checkpointSeq int64
	cancels       []string // the jobs cancelled, in order
	// positions, when set (FollowPositions), are the sandbox job's.
	positions    func() map[int32]int64
	stopPeriodic chan struct{} // closed by Close
	closeOnce    sync.Once
}

type standInJob struct {
	ID, Name, State string
	Start           int64
	Request         map[string]any
}

// StandInFirstRecord is how long after its start a job the stand-in runs
// reports its first record (its source vertex's write-records), then one
// more per millisecond.
const StandInFirstRecord = 300 * time.Millisecond

func (j standInJob) records(now time.Time) int64 {
	if j.State != "RUNNING" && j.State != "CANCELED" {
		return 0
	}
	return max(0, now.Sub(time.UnixMilli(j.Start).Add(StandInFirstRecord)).Milliseconds())
}

// StartFlinkStandIn listens on a free loopback port.
func StartFlinkStandIn() (*FlinkStandIn, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	spDir, err := os.MkdirTemp("", "drconsole-sandbox-savepoints-")
	if err != nil {
		ln.Close()
		return nil, err
	}
	f := &FlinkStandIn{URL: "http://" + ln.Addr().String(), ln: ln, jobs: map[string]standInJob{}, SavepointDir: spDir,
		spDuration: DefaultSavepointDuration, checkpointSeq: 100, stopPeriodic: make(chan struct{})}
	f.jobs[FlinkSandboxJobID] = standInJob{ID: FlinkSandboxJobID, Name: FlinkSandboxJobName, State: "RUNNING", Start: time.Now().UnixMilli()}
	uploaded := time.Now().UnixMilli()
	mux := http.NewServeMux()
	f.addSavepointRoutes(mux)
	mux.HandleFunc("GET /config", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"flink-version": "2.2.1", "flink-revision": "sandbox-stand-in"})
	})
	mux.HandleFunc("GET /jobs/overview", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		var jobs []map[string]any
		for _, j := range f.jobs {
			jobs = append(jobs, map[string]any{"jid": j.ID, "name": j.Name, "state": j.State, "start-time": j.Start, "end-time": -1})
		}
		writeJSON(w, 200, map[string]any{"jobs": jobs})
	})
	mux.HandleFunc("GET /jobs/{id}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		j, ok := f.jobs[r.PathValue("id")]
		f.mu.Unlock()
		if !ok {
			writeJSON(w, 404, map[string]any{"errors": []string{"Job " + r.PathValue("id") + " not found"}})
			return
		}
		writeJSON(w, 200, map[string]any{"jid": j.ID, "name": j.Name, "state": j.State, "start-time": j.Start,
			"vertices": []map[string]any{{"name": "Source: events", "metrics": map[string]any{"write-records": j.records(time.Now())}}}})
	})
	// Cancelling, as Flink does: 202, and the job ends shortly after.
	mux.HandleFunc("PATCH /jobs/{id}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		j, ok := f.jobs[r.PathValue("id")]
		switch {
		case !ok:
			writeJSON(w, 404, map[string]any{"errors": []string{"Job " + r.PathValue("id") + " not found"}})
		case r.URL.Query().Get("mode") != "cancel" && r.URL.Query().Get("mode") != "":
			writeJSON(w, 400, map[string]any{"errors": []string{"mode " + r.URL.Query().Get("mode")}})
		default:
			if j.State == "RUNNING" {
				j.State = "CANCELED"
				f.jobs[j.ID] = j
				f.cancels = append(f.cancels, j.ID)
			}
			writeJSON(w, 202, map[string]any{})
		}
	})
	mux.HandleFunc("GET /jars", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"address": f.URL, "files": []map[string]any{{"id": FlinkJarID, "name": "events-job.jar", "uploaded": uploaded,
			"entry": []map[string]any{{"name": FlinkEntryClass, "description": nil}}}}})
	})
	mux.HandleFunc("POST /jars/{jar}/run", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("jar") != FlinkJarID {
			writeJSON(w, 404, map[string]any{"errors": []string{"jar " + r.PathValue("jar") + " not found"}})
			return
		}
		var req map[string]any
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			writeJSON(w, 400, map[string]any{"errors": []string{err.Error()}})
			return
		}
		id, _ := req["jobId"].(string)
		if id == "" {
			id = fmt.Sprintf("%032x", time.Now().UnixNano())
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if _, dup := f.jobs[id]; dup {
			writeJSON(w, 409, map[string]any{"errors": []string{"job " + id + " already exists"}})
			return
		}
		f.jobs[id] = standInJob{ID: id, Name: "events (restored in DR)", State: "RUNNING", Start: time.Now().UnixMilli(), Request: req}
		writeJSON(w, 200, map[string]any{"jobid": id})
	})
	f.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go f.srv.Serve(ln)
	return f, nil
}

// Jobs returns the submitted jobs' run requests by job id.
func (f *FlinkStandIn) Jobs() map[string]map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]map[string]any{}
	for id, j := range f.jobs {
		if j.Request == nil {
			continue // the stand-in's own job, not submitted
		}
		out[id] = j.Request
	}
	return out
}

// Cancelled lists the jobs cancelled through PATCH /jobs/{id}, in order.
func (f *FlinkStandIn) Cancelled() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.cancels...)
}

// Close stops the server.
func (f *FlinkStandIn) Close() {
	f.closeOnce.Do(func() { close(f.stopPeriodic) })
	f.srv.Close()
	os.RemoveAll(f.SavepointDir)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
