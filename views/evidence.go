package views

import (
	"strconv"
	"strings"
	"time"

	"github.com/drconsole/drconsole/model"
)

// EvidencePage is a drill's evidence pack as one self-contained HTML file
// (GET /drills/{run}/evidence.html): inline CSS, no script to run, no
// link out; JSON is the pack's canonical JSON, embedded verbatim in
// EvidenceScript for `drconsole audit verify --evidence`.
type EvidencePage struct {
	Pack model.EvidencePack
	JSON string
	// Script opens the element JSON goes in (audit.EvidenceScript).
	Script string
}

// embedded is the script element holding the pack's JSON. The JSON is
// encoded with <, > and & escaped, so nothing in it ends the element.
func (p EvidencePage) embedded() string {
	return p.Script + "\n" + p.JSON + "</script>"
}

// EvidencePath is where drill run's pack is downloaded as format (html, json).
func EvidencePath(run int64, format string) string {
	return "/drills/" + strconv.FormatInt(run, 10) + "/evidence." + format
}

// evidenceTime is an optional time of the pack.
func evidenceTime(s *string) string {
	if s == nil {
		return "not reached"
	}
	return *s
}

// stepTook is how long a step took; "" when it did not finish.
func stepTook(s model.EvidenceStep) string {
	if s.StartedMs == nil || s.FinishedMs == nil {
		return ""
	}
	return Duration(time.Duration(*s.FinishedMs-*s.StartedMs) * time.Millisecond)
}

// exactMillis is a figure rounded for reading, then exact: "2 s (2345
// ms)"; nil is unknown.
func exactMillis(v *int64) string {
	if v == nil {
		return Unknown
	}
	return Millis(v) + " (" + strconv.FormatInt(*v, 10) + " ms)"
}

// evidenceRPO is the RPO at the first record: unknown, or "at least" a
// lower bound.
func evidenceRPO(d model.EvidenceDrill) string {
	if d.RPOMs == nil {
		return Unknown
	}
	if d.RPOIsLowerBound {
		return "at least " + exactMillis(d.RPOMs)
	}
	return exactMillis(d.RPOMs)
}

// objectiveText is an objective, or "none set".
func objectiveText(ms *int64) string {
	if ms == nil {
		return "none set"
	}
	return Millis(ms)
}

// clipped keeps a long result readable on paper; the JSON has all of it.
func clipped(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + " … (in full in the embedded JSON)"
}
