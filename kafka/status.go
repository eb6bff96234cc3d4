package kafka

import (
	"fmt"
	"time"

	"github.com/drconsole/drconsole/config"
)

// Status is a flow's health as the thresholds judge it.
type Status string

const (
	StatusUnknown  Status = "UNKNOWN"  // not enough data yet
	StatusOK       Status = "OK"       //
	StatusWarning  Status = "WARNING"  // lag above the warning lag for the warning duration
	StatusCritical Status = "CRITICAL" // RPO at risk
	StatusBroken   Status = "BROKEN"   // no replicated heartbeat within the timeout
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

// update evaluates a new reading. rpoMs nil means lag unknown; hbAge nil
// means no heartbeat was ever seen.
//
// broken, when not empty, is a reason replication is broken that the
// heartbeat cannot show (a Cluster Linking mirror in a failed state).
func (t *statusTracker) update(now time.Time, rpoMs *int64, hbAge *time.Duration, broken string, th config.Thresholds) (Status, string) {
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
	if rpoMs != nil {
		lag := time.Duration(*rpoMs) * time.Millisecond
		warnFor = streak(&t.aboveWarn, lag > th.Warning.Lag.D())
		critFor = streak(&t.aboveCrit, lag > th.Critical.Lag.D())
	} // unknown lag is not "below": the streaks are kept as they were
	var s Status
	var why string
	switch {
	case broken != "":
		s, why = StatusBroken, broken
	case hbAge == nil:
		s, why = StatusBroken, "no replicated heartbeat seen"
	case *hbAge > th.HeartbeatTimeout.D():
		s, why = StatusBroken, fmt.Sprintf("last replicated heartbeat %s ago (timeout %s)", hbAge.Round(time.Second), th.HeartbeatTimeout.D())
	case rpoMs == nil:
		s, why = StatusUnknown, "lag unknown"
	case critFor >= th.Critical.For.D():
		s, why = StatusCritical, fmt.Sprintf("lag above %s for %s", th.Critical.Lag.D(), critFor.Round(time.Second))
	case warnFor >= th.Warning.For.D():
		s, why = StatusWarning, fmt.Sprintf("lag above %s for %s", th.Warning.Lag.D(), warnFor.Round(time.Second))
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
