package handlers

import (
	"strconv"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
)

// A failed-over flow in /metrics: kafka_mirror_status says FAILED_OVER and
// kafka_mirror_failed_over 1; the old direction's lag, RPO, heartbeat,
// loss-suspicion and late-refresh series are left out, so the rules on them (the seed's
// KafkaMirrorLagHigh/Critical, KafkaMirrorLagWarning, KafkaMirrorRPOAtRisk,
// KafkaMirrorHeartbeatMissing, KafkaMirrorBroken, ...) resolve instead of
// paging about a mirror stopped on purpose. Reachability, confirmed losses
// and the refresh time stay: they are true of the clusters whatever the
// direction.

var (
	famFailedOver = newFamily("kafka_mirror_failed_over",
		"1 while the flow is failed over (a failover run completed, DR is active): its lag, RPO and heartbeat series are then left out, the old direction's figures being no data at risk; 0 otherwise.", false, "flow")
	famFailedOverSince = newFamily("kafka_mirror_failed_over_timestamp_seconds",
		"Unix time the failover run that made DR active completed (only while failed over).", false, "flow", "run")
)

// failedOverMirror hands emit a failed-over flow's samples (eachMirror
// hands it every other flow's).
func failedOverMirror(s *flowstate.FlowSnapshot, th config.Thresholds, emit func(f *family, v float64, labels ...string)) {
	flow := s.Flow.Name
	emit(famFailedOver, 1, flow)
	emit(famFailedOverSince, float64(s.FailedOver.SinceMs)/1000, flow, strconv.FormatInt(s.FailedOver.Run, 10))
	statusAndReach(s, emit)
	emit(famDataLost, float64(s.DataLost), flow)
	if !s.Flow.IsClusterLink() {
		emit(famLostRecords, float64(s.LostOffsetsTotal), flow)
		emit(famLossIncidents, float64(s.LossIncidentsTotal), flow)
	}
	if th.Critical.Lag > 0 {
		emit(famRPOThreshold, float64(th.Warning.Lag.D().Milliseconds()), flow, "warning")
		emit(famRPOThreshold, float64(th.Critical.Lag.D().Milliseconds()), flow, "critical")
	}
	if !s.FiguresAt.IsZero() { // the last read that reached the clusters, as for every flow
		emit(famRefreshed, float64(s.FiguresAt.UnixMilli())/1000, flow)
	}
}
