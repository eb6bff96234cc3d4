package model

import "time"

// SavepointTrigger is a savepoint taken through this console, in progress
// or recently finished.
type SavepointTrigger struct {
	ID                     int64
	Target, JobID, JobName string
	Actor                  string
	Started                time.Time
	Waited                 time.Duration // as Flink last reported
	Done                   bool
	Err                    string
	ResultID               int64
	ResultPath             string
	Finished               time.Time
}

// SavepointRequest is a checked request to take a savepoint of a job. The
// job keeps running: there is no stop here (runbook.ErrStopNeedsRunbook).
type SavepointRequest struct {
	Target, JobID, JobName string
	Actor                  string
	// Flow, when not "", is the flow whose lag goes on record with the
	// trigger: how far DR is behind the position being saved.
	Flow string
}
