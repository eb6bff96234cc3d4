package demo

// Savepoints in the Flink stand-in: a running job to take them of,
// Flink's asynchronous trigger API (POST /jobs/{id}/savepoints,
// POST /jobs/{id}/stop, GET /jobs/{id}/savepoints/{trigger}) and the
// checkpoint history (GET /jobs/{id}/checkpoints). Each savepoint it
// "takes" is a copy of a REAL savepoint written by Flink 2.2.1 (the
// flink/testdata/savepoints/flink-2.2.1-p2-events4-stop fixture: topic
// events, partitions 0-3, source uid kafka-source, checkpoint 23), so the
// console's catalog reads real offsets out of it. Every copy holds the same
// offsets and checkpoint id: the stand-in runs no job.

import (
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"time"
)

//go:embed flinkdata/events4-stop.metadata
var sandboxSavepointMetadata []byte

// The stand-in's own running job, there from the start so the sandbox has
// something to take a savepoint of.
const (
	FlinkSandboxJobID   = "5ad0b0c0ffee0000000000000000e0e7"
	FlinkSandboxJobName = "events-count (sandbox)"
)

// DefaultSavepointDuration is how long a stand-in savepoint stays in
// progress.
const DefaultSavepointDuration = 2 * time.Second

type standInSavepoint struct {
	JobID     string
	Trigger   string
	Stop      bool
	Started   time.Time
	Completed time.Time
	Done      bool
	Location  string // file:/... when done
	Failure   string
	CheckID   int64
	SizeBytes int64
}

// SetSavepointDuration sets how long the next savepoints stay in progress.
func (f *FlinkStandIn) SetSavepointDuration(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.spDuration = d
}

// JobState returns a job's state ("" when the stand-in does not know it).
func (f *FlinkStandIn) JobState(id string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.jobs[id].State
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// settleLocked completes the savepoints whose time has come: writes the
// copy of the real savepoint into the savepoint directory, finishes the
// job of a stop-with-savepoint. f.mu is held.
func (f *FlinkStandIn) settleLocked(now time.Time) {
	for _, sp := range f.savepoints {
		if sp.Done || now.Sub(sp.Started) < f.spDuration {
			continue
		}
		sp.Done, sp.Completed = true, now
		dir := filepath.Join(f.SavepointDir, fmt.Sprintf("savepoint-%s-%s", sp.JobID[:6], randHex(6)))
		err := os.MkdirAll(dir, 0o755)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "_metadata"), sandboxSavepointMetadata, 0o644)
		}
		if err != nil {
			sp.Failure = err.Error()
			continue
		}
		f.checkpointSeq++
		sp.CheckID = f.checkpointSeq
		sp.Location = "file:" + filepath.ToSlash(dir)
		sp.SizeBytes = int64(len(sandboxSavepointMetadata))
		if sp.Stop {
			j := f.jobs[sp.JobID]
			j.State = "FINISHED"
			f.jobs[sp.JobID] = j
		}
	}
}

func (f *FlinkStandIn) addSavepointRoutes(mux *http.ServeMux) {
	trigger := func(stop bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			id := r.PathValue("id")
			f.mu.Lock()
			defer f.mu.Unlock()
			f.settleLocked(time.Now())
			j, ok := f.jobs[id]
			if !ok {
				writeJSON(w, 404, map[string]any{"errors": []string{"Job " + id + " not found"}})
				return
			}
			if j.State != "RUNNING" {
				writeJSON(w, 409, map[string]any{"errors": []string{fmt.Sprintf("Job %s is not running (%s): no savepoint can be taken", id, j.State)}})
				return
			}
			for _, sp := range f.savepoints {
				if sp.JobID == id && sp.Stop && !sp.Done {
					writeJSON(w, 409, map[string]any{"errors": []string{"Job " + id + " is being stopped with a savepoint"}})
					return
				}
			}
			sp := &standInSavepoint{JobID: id, Trigger: randHex(16), Stop: stop, Started: time.Now()}
			f.savepoints = append(f.savepoints, sp)
			writeJSON(w, 202, map[string]any{"request-id": sp.Trigger})
		}
	}
	mux.HandleFunc("POST /jobs/{id}/savepoints", trigger(false))
	mux.HandleFunc("POST /jobs/{id}/stop", trigger(true))
	mux.HandleFunc("GET /jobs/{id}/savepoints/{trigger}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.settleLocked(time.Now())
		for _, sp := range f.savepoints {
			if sp.JobID != r.PathValue("id") || sp.Trigger != r.PathValue("trigger") {
				continue
			}
			switch {
			case !sp.Done:
				writeJSON(w, 200, map[string]any{"status": map[string]any{"id": "IN_PROGRESS"}})
			case sp.Failure != "":
				writeJSON(w, 200, map[string]any{"status": map[string]any{"id": "COMPLETED"}, "operation": map[string]any{
					"failure-cause": map[string]any{"class": "java.io.IOException", "stack-trace": "java.io.IOException: " + sp.Failure}}})
			default:
				writeJSON(w, 200, map[string]any{"status": map[string]any{"id": "COMPLETED"}, "operation": map[string]any{"location": sp.Location}})
			}
			return
		}
		writeJSON(w, 404, map[string]any{"errors": []string{"There is no savepoint operation with triggerId=" + r.PathValue("trigger") + " for job " + r.PathValue("id")}})
	})
	mux.HandleFunc("GET /jobs/{id}/checkpoints", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		f.mu.Lock()
		defer f.mu.Unlock()
		f.settleLocked(time.Now())
		if _, ok := f.jobs[id]; !ok {
			writeJSON(w, 404, map[string]any{"errors": []string{"Job " + id + " not found"}})
			return
		}
		history := []map[string]any{}
		var latest map[string]any
		for _, sp := range f.savepoints {
			if sp.JobID != id || !sp.Done || sp.Failure != "" {
				continue
			}
			kind := "SAVEPOINT"
			if sp.Stop {
				kind = "SYNC_SAVEPOINT"
			}
			cp := map[string]any{"id": sp.CheckID, "status": "COMPLETED", "is_savepoint": true, "checkpoint_type": kind,
				"external_path": sp.Location, "state_size": sp.SizeBytes, "trigger_timestamp": sp.Started.UnixMilli(),
				"latest_ack_timestamp": sp.Completed.UnixMilli()}
			history = append(history, cp)
			latest = cp
		}
		// Flink lists the newest first.
		sort.SliceStable(history, func(i, k int) bool { return history[i]["id"].(int64) > history[k]["id"].(int64) })
		writeJSON(w, 200, map[string]any{"counts": map[string]any{"completed": len(history)},
			"latest": map[string]any{"completed": nil, "savepoint": latest, "restored": nil}, "history": history})
	})
}
