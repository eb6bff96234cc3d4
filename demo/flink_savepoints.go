package demo

// Savepoints in the Flink stand-in: a running job to take them of,
// Flink's asynchronous trigger API (POST /jobs/{id}/savepoints,
// POST /jobs/{id}/stop, GET /jobs/{id}/savepoints/{trigger}) and the
// checkpoint history (GET /jobs/{id}/checkpoints). Each savepoint it
// "takes" is a copy of a REAL savepoint written by Flink 2.2.1 (the
// flink/testdata/savepoints/flink-2.2.1-p2-events4-stop fixture: topic
// events, partitions 0-3, source uid kafka-source), so the console's
// catalog reads it as it reads Flink's. Once FollowPositions names the
// job's positions (the sandbox's flink-events consumer), each copy holds
// them as they were when the savepoint was triggered, and its own
// checkpoint id: the offsets and id bytes are rewritten in place (fixed
// width, so no length in the file changes). Partitions 4 and 5 of the
// sandbox's events are not in it: the real savepoint has 4 splits.

import (
	"bytes"
	"crypto/rand"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"errors"
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
	Positions map[int32]int64 // the job's positions at the trigger; nil: the fixture's
}

// FollowPositions makes the savepoints hold the next offsets positions
// returns for topic events, per partition, at each trigger (a partition it
// does not name keeps Flink's EARLIEST marker: the job has read nothing
// there yet).
func (f *FlinkStandIn) FollowPositions(positions func() map[int32]int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.positions = positions
}

// savepointMetadata is the real savepoint's _metadata with checkpoint id
// id and, unless positions is nil, each events split starting at its
// position. It fails when the embedded file is not the layout it patches.
func savepointMetadata(id int64, positions map[int32]int64) ([]byte, error) {
	meta := bytes.Clone(sandboxSavepointMetadata)
	// Header: magic (4 bytes), version (4), checkpoint id (8).
	if len(meta) < 16 || binary.BigEndian.Uint32(meta[4:8]) != 6 {
		return nil, errors.New("the embedded savepoint is not a version 6 _metadata")
	}
	binary.BigEndian.PutUint64(meta[8:16], uint64(id))
	if positions == nil {
		return meta, nil
	}
	// KafkaPartitionSplitSerializer: writeUTF(topic), writeInt(partition),
	// writeLong(startingOffset), writeLong(stoppingOffset). The reader
	// state's splits start at an offset >= 0; the enumerator's assigned
	// partitions hold the COMMITTED marker (-3) and stay as they are.
	utf := append([]byte{0, byte(len("events"))}, "events"...)
	splits := 0
	for i := 0; ; i++ {
		j := bytes.Index(meta[i:], utf)
		if j < 0 {
			break
		}
		i += j
		at := i + len(utf) + 4
		if at+8 > len(meta) || int64(binary.BigEndian.Uint64(meta[at:at+8])) < 0 {
			continue
		}
		splits++
		next, ok := positions[int32(binary.BigEndian.Uint32(meta[i+len(utf):at]))]
		if !ok {
			next = flinkEarliest
		}
		binary.BigEndian.PutUint64(meta[at:at+8], uint64(next))
	}
	if splits != 4 {
		return nil, fmt.Errorf("the embedded savepoint has %d events splits, not the 4 it was taken with", splits)
	}
	return meta, nil
}

// flinkEarliest is KafkaPartitionSplit's EARLIEST_OFFSET marker.
const flinkEarliest = -2

// DefaultPeriodicSavepoints is how often the sandbox's Flink stand-in takes
// a savepoint of its job on its own (as the Flink Kubernetes Operator's
// periodic savepoints do): well inside the sandbox's 5-minute retention,
// so the newest savepoint is usable whenever a tour reaches the failover.
const DefaultPeriodicSavepoints = 2 * time.Minute

// savepointHistory is how many completed savepoints per job the
// checkpoint history lists (Flink's web.checkpoints.history is 10); older
// ones are forgotten by the stand-in, their files stay.
const savepointHistory = 10

// StartPeriodicSavepoints takes a savepoint of the stand-in's own job
// every interval while it runs, until Close.
func (f *FlinkStandIn) StartPeriodicSavepoints(interval time.Duration) {
	go func() {
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-f.stopPeriodic:
				return
			case <-tick.C:
			}
			f.mu.Lock()
			f.settleLocked(time.Now())
			if f.jobs[FlinkSandboxJobID].State == "RUNNING" && !f.stoppingLocked(FlinkSandboxJobID) {
				f.triggerLocked(FlinkSandboxJobID, false)
			}
			f.mu.Unlock()
		}
	}()
}

// stoppingLocked reports a stop-with-savepoint of job id in progress.
func (f *FlinkStandIn) stoppingLocked(id string) bool {
	for _, sp := range f.savepoints {
		if sp.JobID == id && sp.Stop && !sp.Done {
			return true
		}
	}
	return false
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
		meta, err := savepointMetadata(f.checkpointSeq+1, sp.Positions)
		if err == nil {
			err = os.MkdirAll(dir, 0o755)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "_metadata"), meta, 0o644)
		}
		if err != nil {
			sp.Failure = err.Error()
			continue
		}
		f.checkpointSeq++
		sp.CheckID = f.checkpointSeq
		sp.Location = "file:" + filepath.ToSlash(dir)
		sp.SizeBytes = int64(len(meta))
		if sp.Stop {
			j := f.jobs[sp.JobID]
			j.State = "FINISHED"
			f.jobs[sp.JobID] = j
		}
	}
	f.pruneLocked()
}

// pruneLocked forgets the completed savepoints of a job past the newest
// savepointHistory, so a stand-in taking them periodically keeps its
// memory flat. f.mu is held.
func (f *FlinkStandIn) pruneLocked() {
	done := map[string]int{}
	for _, sp := range f.savepoints {
		if sp.Done {
			done[sp.JobID]++
		}
	}
	kept := f.savepoints[:0]
	for _, sp := range f.savepoints {
		if sp.Done && done[sp.JobID] > savepointHistory {
			done[sp.JobID]--
			continue
		}
		kept = append(kept, sp)
	}
	clear(f.savepoints[len(kept):])
	f.savepoints = kept
}

// triggerLocked starts a savepoint of job id, holding the job's positions
// now. f.mu is held.
func (f *FlinkStandIn) triggerLocked(id string, stop bool) *standInSavepoint {
	sp := &standInSavepoint{JobID: id, Trigger: randHex(16), Stop: stop, Started: time.Now()}
	if f.positions != nil && id == FlinkSandboxJobID {
		sp.Positions = f.positions()
		if sp.Positions == nil {
			sp.Positions = map[int32]int64{} // nothing read yet: every split at EARLIEST
		}
	}
	f.savepoints = append(f.savepoints, sp)
	return sp
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
			if f.stoppingLocked(id) {
				writeJSON(w, 409, map[string]any{"errors": []string{"Job " + id + " is being stopped with a savepoint"}})
				return
			}
			sp := f.triggerLocked(id, stop)
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
