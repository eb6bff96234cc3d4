package monitor

import (
	"fmt"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/model"
)

// statusTracker turns successive readings into a status with hysteresis
// in time: a threshold only fires after lag stayed above it for its "for"
// duration, like a Prometheus alert with a for clause.
type statusTracker struct {
	status     model.FlowStatus
	since      time.Time
	aboveWarn  time.Time // start of the current streak above the warning lag
	aboveCrit  time.Time
	lastReason string
}

// update evaluates a new reading. A lower-bound RPO counts as above a
// threshold when the bound is, and otherwise leaves the streaks as they
// were: it is not "below". hbAge nil means no heartbeat was ever seen.
//
// broken, when not empty, is a reason replication is broken that the
// heartbeat cannot show (a Cluster Linking mirror in a failed state).
func (t *statusTracker) update(now time.Time, rpo flowstate.RPO, hbAge *time.Duration, broken string, th config.Thresholds) (model.FlowStatus, string) {
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
	if rpo.Ms != nil {
		lag := time.Duration(*rpo.Ms) * time.Millisecond
		judge := func(start *time.Time, limit time.Duration) time.Duration {
			if above := lag > limit; above || !rpo.AtLeast {
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
	var s model.FlowStatus
	var why string
	switch b := brokenReason(broken, hbAge, th); {
	case b != "":
		s, why = model.FlowStatusBroken, b
	case rpo.Ms == nil:
		s, why = model.FlowStatusUnknown, "lag unknown"
		if len(rpo.Unknown) > 0 {
			why = "RPO " + rpo.String()
		}
	case critFor >= th.Critical.For.D():
		s, why = model.FlowStatusCritical, fmt.Sprintf("lag above %s for %s", th.Critical.Lag.D(), critFor.Round(time.Second))
	case warnFor >= th.Warning.For.D():
		s, why = model.FlowStatusWarning, fmt.Sprintf("lag above %s for %s", th.Warning.Lag.D(), warnFor.Round(time.Second))
	case rpo.AtLeast:
		s, why = model.FlowStatusUnknown, "RPO "+rpo.String() // never OK on missing inputs
	default:
		s, why = model.FlowStatusOK, "within thresholds"
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
func (t *statusTracker) hold(now time.Time, hbAge *time.Duration, broken string, th config.Thresholds, why string) (model.FlowStatus, string) {
	s := model.FlowStatusUnknown
	switch b := brokenReason(broken, hbAge, th); {
	case b != "":
		s, why = model.FlowStatusBroken, b
	case t.status == model.FlowStatusWarning || t.status == model.FlowStatusCritical:
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
