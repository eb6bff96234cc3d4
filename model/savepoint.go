package model

import (
	"encoding/json"
	"fmt"
)

// Savepoint kinds.
const (
	KindSavepoint  = "savepoint"
	KindCheckpoint = "checkpoint" // a retained (externalized) checkpoint
)

// How a savepoint entered the catalog.
const (
	OriginREST      = "rest"      // Flink REST checkpoint history
	OriginScan      = "scan"      // found in a configured savepoint directory
	OriginManual    = "manual"    // registered by hand
	OriginTriggered = "triggered" // taken through the console
	OriginRewritten = "rewritten" // written by the console's savepoint rewrite (issue 14)
)

// Savepoint statuses: Flink's checkpoint states, and "unknown".
const (
	SavepointCompleted  = "COMPLETED"
	SavepointFailed     = "FAILED"
	SavepointInProgress = "IN_PROGRESS"
	SavepointUnknown    = "unknown"
)

// Savepoint is an entry of the savepoint catalog. Nil numbers are unknown.
type Savepoint struct {
	ID          int64
	FlinkTarget string // config flink_targets name; "" when unknown
	JobID       string
	JobName     string
	// Path is the savepoint directory as Flink reports it (file:/...,
	// s3://...); the catalog's key.
	Path   string
	Kind   string // KindSavepoint, KindCheckpoint
	Origin string // OriginREST, OriginScan, OriginManual, OriginTriggered
	// TriggerMs and CompletedMs are epoch milliseconds.
	TriggerMs    *int64
	CompletedMs  *int64
	SizeBytes    *int64
	Status       string // SavepointCompleted, ...
	CheckpointID *int64
	// OffsetsJSON is {"topic-partition": next offset, ...} as read from the
	// savepoint's Kafka source; "" when not read (yet) or unreadable.
	OffsetsJSON string
	SourceUID   string
	// ReadError says why the offsets could not be read, or notes what the
	// offsets leave out.
	ReadError   string
	FirstSeenMs int64
	LastSeenMs  int64
	// RewrittenFrom is the catalog path of the savepoint this one was
	// rewritten from and RewrittenFlow the flow whose DR offsets and topic
	// names it holds; "" unless Origin is OriginRewritten.
	RewrittenFrom string
	RewrittenFlow string
}

// Offsets decodes OffsetsJSON; nil when the offsets were not read.
func (s *Savepoint) Offsets() (map[string]int64, error) {
	if s.OffsetsJSON == "" {
		return nil, nil
	}
	var out map[string]int64
	if err := json.Unmarshal([]byte(s.OffsetsJSON), &out); err != nil {
		return nil, fmt.Errorf("savepoint %d: offsets: %w", s.ID, err)
	}
	return out, nil
}

// Read reports whether an attempt to read the offsets was made.
func (s *Savepoint) Read() bool { return s.OffsetsJSON != "" || s.ReadError != "" }
