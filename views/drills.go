package views

import (
	"net/url"
	"time"

	"github.com/drconsole/drconsole/model"
)

// DrillRow is a drill with its flow's objectives (0: none set).
type DrillRow struct {
	model.Drill
	ObjectiveRPO, ObjectiveRTO time.Duration
}

// Status says where the drill stands, in words: a drill whose cleanup has
// not finished is never shown as a success.
func (d DrillRow) Status() string {
	switch {
	case d.Succeeded():
		return "succeeded"
	case d.Cleanup == model.CleanupFailed:
		return "cleanup failed: retried"
	case d.Outcome == model.DrillInProgress:
		return "running"
	case d.Cleanup != model.CleanupDone:
		return "cleaning up"
	case d.Outcome == model.DrillMeasured:
		return "no record processed"
	}
	return "failed"
}

// RPOText is the RPO at the first record: unknown, or "at least" a lower bound.
func (d DrillRow) RPOText() string {
	if d.RPOMs == nil {
		return Unknown
	}
	if d.RPOAtLeast {
		return "at least " + Millis(d.RPOMs)
	}
	return Millis(d.RPOMs)
}

// RTOVerdict judges the achieved RTO against the objective: "met",
// "missed", or "" (no objective, or no RTO measured).
func (d DrillRow) RTOVerdict() string {
	return objectiveVerdict(d.RTOMs(), false, d.ObjectiveRTO)
}

// RPOVerdict judges the RPO at the first record: a lower bound above the
// objective is missed, one below says nothing.
func (d DrillRow) RPOVerdict() string {
	return objectiveVerdict(d.RPOMs, d.RPOAtLeast, d.ObjectiveRPO)
}

func objectiveVerdict(ms *int64, atLeast bool, objective time.Duration) string {
	switch {
	case objective <= 0 || ms == nil:
		return ""
	case time.Duration(*ms)*time.Millisecond > objective:
		return "missed"
	case atLeast:
		return ""
	}
	return "met"
}

// DrillsPage is the drill history (GET /drills), or its printable report
// (GET /drills/report) when Report is set.
type DrillsPage struct {
	Chrome Chrome
	Now    time.Time
	Flow   string // "": every flow
	Flows  []string
	Rows   []DrillRow
	Report bool
	Error  string
	// Verified is what a check of an uploaded evidence pack found (POST
	// /drills/evidence/verify); nil when none was asked.
	Verified *EvidenceVerified
}

// EvidenceVerified is what a check of an evidence pack found: its lines
// when it matches the log, else the first mismatch, in the words of
// `drconsole audit verify --evidence`.
type EvidenceVerified struct {
	OK          bool
	Lines       []string
	Problem     string
	NotRecorded string
}

// DrillsPath is the history of flow ("": every flow's) at path.
func DrillsPath(path, flow string) string {
	if flow == "" {
		return path
	}
	return path + "?flow=" + url.QueryEscape(flow)
}

// UTCTime is epoch milliseconds as RFC 3339 in UTC.
func UTCTime(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339) }
