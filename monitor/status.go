package monitor

import (
	"fmt"
	"strings"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/model"
)

// Status is model's FlowStatus: the pages show it as the thresholds judge it.
type Status = model.FlowStatus

const (
	StatusUnknown  = model.FlowStatusUnknown
	StatusOK       = model.FlowStatusOK
	StatusWarning  = model.FlowStatusWarning
	StatusCritical = model.FlowStatusCritical
	StatusBroken   = model.FlowStatusBroken
)

// statusTracker turns successive readings into a status with hysteresis
// in time: a threshold only fires after lag stayed above it for its "for"
// duration, like a Prometheus alert with a for clause.
type statusTracker struct {
	status     Status
	since      time.Time
	aboveWarn  time.Time // start of the current streak above the warning lag
	aboveCrit  time.Time
	lastReason string
}

// rpoReading is a flow RPO: exact, a lower bound (some partitions of
// unknown age, named), or unknown (ms nil).
type rpoReading struct {
	ms      *int64
	atLeast bool
	unknown []model.TP
	bound   string // why the figures are lower bounds besides unknown ages (FlowSnapshot.Bound)
}

// maxNamed is how many partitions of unknown age a reason names.
const maxNamed = 5

func (r rpoReading) String() string {
	switch {
	case r.ms == nil && len(r.unknown) == 0:
		return "unknown"
	case !r.atLeast:
		return (time.Duration(*r.ms) * time.Millisecond).String()
	}
	s := "unknown"
	if r.ms != nil {
		s = "at least " + (time.Duration(*r.ms) * time.Millisecond).String()
	}
	if len(r.unknown) > 0 {
		s += "; age unknown for " + namePartitions(r.unknown)
	}
	if r.bound != "" {
		s += "; " + r.bound
	}
	return s
}

func namePartitions(tps []model.TP) string {
	var b strings.Builder
	for i, tp := range tps {
		if i == maxNamed {
			fmt.Fprintf(&b, " and %d more", len(tps)-maxNamed)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s-%d", tp.Topic, tp.Partition)
	}
	return b.String()
}

// update evaluates a new reading. A lower-bound RPO counts as above a
// threshold when the bound is, and otherwise leaves the streaks as they
// were: it is not "below". hbAge nil means no heartbeat was ever seen.
//
// broken, when not empty, is a reason replication is broken that the
// heartbeat cannot show (a Cluster Linking mirror in a failed state).
func (t *statusTracker) update(now time.Time, rpo rpoReading, hbAge *time.Duration, broken string, th config.Thresholds) (Status, string) {
	streak := func(start *time.Time, above bool) time.Duration {
		if !above {
			*start = time.Time{}
			return -1
		}
		if start.IsZero() {
			*start = now
		}
		return now.Sub(*start)
	}
	var warnFor, critFor time.Duration = -1, -1
	if rpo.ms != nil {
		lag := time.Duration(*rpo.ms) * time.Millisecond
		judge := func(start *time.Time, limit time.Duration) time.Duration {
			if above := lag > limit; above || !rpo.atLeast {
				return streak(start, above)
			}
			if start.IsZero() { // a bound below the limit is not "below"
				return -1
			}
			return now.Sub(*start)
		}
		warnFor = judge(&t.aboveWarn, th.Warning.Lag.D())
		critFor = judge(&t.aboveCrit, th.Critical.Lag.D())
	} // unknown lag is not "below": the streaks are kept as they were
	var s Status
	var why string
	switch b := brokenReason(broken, hbAge, th); {
	case b != "":
		s, why = StatusBroken, b
	case rpo.ms == nil:
		s, why = StatusUnknown, "lag unknown"
		if len(rpo.unknown) > 0 {
			why = "RPO " + rpo.String()
		}
	case critFor >= th.Critical.For.D():
		s, why = StatusCritical, fmt.Sprintf("lag above %s for %s", th.Critical.Lag.D(), critFor.Round(time.Second))
	case warnFor >= th.Warning.For.D():
		s, why = StatusWarning, fmt.Sprintf("lag above %s for %s", th.Warning.Lag.D(), warnFor.Round(time.Second))
	case rpo.atLeast:
		s, why = StatusUnknown, "RPO "+rpo.String() // never OK on missing inputs
	default:
		s, why = StatusOK, "within thresholds"
		if warnFor >= 0 {
			why = fmt.Sprintf("lag above %s for %s (warning after %s)", th.Warning.Lag.D(), warnFor.Round(time.Second), th.Warning.For.D())
		}
	}
	if s != t.status {
		t.status, t.since = s, now
	}
	t.lastReason = why
	return s, why
}

// hold judges a refresh whose figures are stale (its Kafka reads ran late,
// or a cluster is unreachable), why saying so: the heartbeat still counts,
// the stale lag does not (the streaks stay as they were), and the flow is
// never OK on it: a WARNING or CRITICAL judgement stands, with why in
// front of its reason; anything else is UNKNOWN.
func (t *statusTracker) hold(now time.Time, hbAge *time.Duration, broken string, th config.Thresholds, why string) (Status, string) {
	s := StatusUnknown
	switch b := brokenReason(broken, hbAge, th); {
	case b != "":
		s, why = StatusBroken, b
	case t.status == StatusWarning || t.status == StatusCritical:
		s, why = t.status, why+"; held: "+t.lastReason
	}
	if s != t.status {
		t.status, t.since = s, now
	}
	return s, why
}

// brokenReason says why replication is BROKEN (broken itself when given,
// or no replicated heartbeat within the timeout); "" when it is not.
func brokenReason(broken string, hbAge *time.Duration, th config.Thresholds) string {
	switch {
	case broken != "":
		return broken
	case hbAge == nil:
		return "no replicated heartbeat seen"
	case *hbAge > th.HeartbeatTimeout.D():
		return fmt.Sprintf("last replicated heartbeat %s ago (timeout %s)", hbAge.Round(time.Second), th.HeartbeatTimeout.D())
	}
	return ""
}
