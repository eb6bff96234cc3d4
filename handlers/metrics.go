package handlers

import (
	"cmp"
	"context"
	"slices"
	"strconv"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
	"github.com/prometheus/client_golang/prometheus"
)

// MetricsSource is what /metrics reads of the monitor.
type MetricsSource interface {
	Snapshots() []*flowstate.FlowSnapshot
	Thresholds() config.Thresholds
}

// MetricsCollector exports the monitor's latest figures. Unknown values are
// left out rather than exported as 0; last known values of an unreachable
// cluster are exported (kafka_mirror_cluster_up says they are stale).
// /metrics serves its kafka_mirror_* families pre-encoded (MetricsExposition);
// as a prometheus.Collector it is the reference those bytes are tested against.
type MetricsCollector struct {
	Monitor MetricsSource
	// Store counts failover runs and undelivered notifications; nil
	// leaves those series out.
	Store interface {
		FailoverRunCounts(context.Context) ([]storage.RunCount, error)
		PendingNotifications(context.Context) (map[string][2]int64, error)
		LastDrillSuccess(context.Context) (map[string]int64, error)
	}
	// Series says for which flows the per-partition series are exported
	// (config metrics.per_partition: by default flows of at most
	// config.PerPartitionBound partitions).
	Series config.Metrics
}

// family is one metric family: its Desc for the collector, and its name,
// help and label names for the pre-encoded text.
type family struct {
	name, help string
	counter    bool
	labels     []string
	order      []int // label indexes sorted by name, as client_golang writes them
	desc       *prometheus.Desc
}

func newFamily(name, help string, counter bool, labels ...string) *family {
	f := &family{name: name, help: help, counter: counter, labels: labels, desc: prometheus.NewDesc(name, help, labels, nil)}
	for i := range labels {
		f.order = append(f.order, i)
	}
	slices.SortFunc(f.order, func(a, b int) int { return cmp.Compare(labels[a], labels[b]) })
	return f
}

var (
	famLagMessages = newFamily("kafka_mirror_lag_messages",
		"Source offsets not yet replicated to the target: source end offset minus replicated position. Counts offsets, not records (transaction markers and compacted-away offsets included), so at least as many as the records missing. Exported for flows of at most 10,000 partitions unless metrics.per_partition says otherwise; the flow series are the source of truth.",
		false, "flow", "topic", "partition")
	famLagMs = newFamily("kafka_mirror_lag_ms",
		"Age in milliseconds of the oldest source record not yet replicated; 0 when caught up. Exported for flows of at most 10,000 partitions unless metrics.per_partition says otherwise; the flow series (kafka_mirror_rpo_ms) are the source of truth.",
		false, "flow", "topic", "partition")
	famTopicLagMessages = newFamily("kafka_mirror_topic_lag_messages",
		"Sum of kafka_mirror_lag_messages over the topic's partitions whose lag is known: a lower bound when kafka_mirror_topic_unknown_partitions is above 0 (absent when no partition's lag is known).",
		false, "flow", "topic")
	famTopicLagMs = newFamily("kafka_mirror_topic_lag_ms",
		"Largest lag in milliseconds over the topic's partitions, counting a lower bound for a partition whose age cannot be read (as kafka_mirror_rpo_ms does): at least this when kafka_mirror_topic_unknown_partitions is above 0 (absent when no partition has either).",
		false, "flow", "topic")
	famTopicUnknown = newFamily("kafka_mirror_topic_unknown_partitions",
		"Partitions of the topic whose lag in messages or in time is not known exactly; above 0, the topic's lag series are lower bounds.",
		false, "flow", "topic")
	famRPOMs = newFamily("kafka_mirror_rpo_ms",
		"Recovery point of a flow: the largest partition lag in milliseconds. For a partition whose age cannot be read, the time since its first unreplicated record was first seen counts (a lower bound): then the RPO is at least this value and kafka_mirror_lag_unknown_age_partitions is above 0.", false, "flow")
	famUnknownAge = newFamily("kafka_mirror_lag_unknown_age_partitions",
		"Partitions behind by a known number of messages whose lag in time could not be read: kafka_mirror_rpo_ms is then only a lower bound (as it is when kafka_mirror_unknown_partitions is above 0).", false, "flow")
	famRPOMessages = newFamily("kafka_mirror_rpo_messages",
		"Largest partition lag of a flow in offsets (see kafka_mirror_lag_messages).", false, "flow")
	famHeartbeatAge = newFamily("kafka_mirror_heartbeat_age_ms",
		"Milliseconds since the newest MM2 heartbeat replicated to the target was emitted.", false, "flow")
	famStatus = newFamily("kafka_mirror_status",
		"1 for the flow's current status (OK, WARNING, CRITICAL, BROKEN, UNKNOWN, FAILED_OVER), 0 for the others.", false, "flow", "status")
	famUp = newFamily("kafka_mirror_cluster_up",
		"1 when the console's last request to the cluster worked.", false, "flow", "role")
	famDataLost = newFamily("kafka_mirror_data_lost_partitions",
		"Partitions with a confirmed loss (source records deleted before MM2 copied them) not yet acknowledged by an operator.", false, "flow")
	famLossSuspected = newFamily("kafka_mirror_data_loss_suspected_partitions",
		"Partitions whose source log start passed the replicated position while MM2 may still copy the records: a possible loss being checked.", false, "flow")
	famLostRecords = newFamily("kafka_mirror_lost_records_total",
		"Source offsets deleted before MM2 copied them, over every recorded loss incident (transaction markers among them count too).", true, "flow")
	famLossIncidents = newFamily("kafka_mirror_loss_incidents_total",
		"Recorded data loss incidents.", true, "flow")
	famUnknown = newFamily("kafka_mirror_unknown_partitions",
		"Partitions whose lag is unknown.", false, "flow")
	famRPOThreshold = newFamily("kafka_mirror_rpo_threshold_ms",
		"The lag in milliseconds above which the console calls a flow WARNING or CRITICAL (after the level's for: duration), from the configuration.", false, "flow", "level")
	famRefreshed = newFamily("kafka_mirror_refresh_timestamp_seconds",
		"Unix time of the last read that reached the clusters the flow's lag figures rest on (absent before the first): time() minus it is how old they are, also while a cluster does not answer (kafka_mirror_lag_lower_bound is then 1).", false, "flow")
	famLowerBound = newFamily("kafka_mirror_lag_lower_bound",
		"1 when the flow's lag figures (kafka_mirror_rpo_ms, kafka_mirror_rpo_messages, the topic and partition lag series) are only lower bounds, \"at least\": they rest on a read of a cluster that has not answered since (the primary or DR: records acked since are not in them; kafka_mirror_refresh_timestamp_seconds is that read), the reads ran late, or some partition's lag or age is unknown; 0 when they are exact.", false, "flow")
	famRefreshLate = newFamily("kafka_mirror_refresh_late",
		"1 when the flow's latest refresh ran late: its Kafka reads did not finish within refresh_read_timeout although the cluster answered, so the lag figures are the last known ones, stale (kafka_mirror_cluster_up stays 1); 0 otherwise (absent before the first refresh).", false, "flow")
	famRefreshRead = newFamily("kafka_mirror_refresh_read_seconds",
		"How long the Kafka reads of the flow's latest refresh took (absent before the first refresh); at refresh_read_timeout they ran out of time.", false, "flow")

	descNotifyPending = prometheus.NewDesc("drconsole_notifications_pending",
		"Events not yet taken by a notification receiver (no series: none pending).", []string{"receiver"}, nil)
	descNotifyOldest = prometheus.NewDesc("drconsole_notifications_oldest_pending_age_seconds",
		"Age of a receiver's oldest undelivered event: it is failing or hanging, and later events wait behind it.", []string{"receiver"}, nil)
	descFailoverRuns = prometheus.NewDesc("drconsole_failover_runs",
		"Failover runs of a flow in each status (pending, approved, rejected, running, completed, failed, cancelled).", []string{"flow", "status"}, nil)
	descDrillSuccess = prometheus.NewDesc("drconsole_drill_last_success_timestamp_seconds",
		"Unix time the flow's newest successful DR drill (measured, first record seen, cleanup done) finished; 0: never.", []string{"flow"}, nil)
)

// mirrorFamilies are the kafka_mirror_* families, built once per refresh.
var mirrorFamilies = append([]*family{famLagMessages, famLagMs, famTopicLagMessages, famTopicLagMs, famTopicUnknown, famRPOMs, famRPOMessages,
	famHeartbeatAge, famStatus, famUp, famDataLost, famLossSuspected, famLostRecords, famLossIncidents, famUnknown, famUnknownAge,
	famRPOThreshold, famRefreshed, famRefreshLate, famRefreshRead, famLowerBound, famFailedOver, famFailedOverSince}, groupFamilies...)

// mirrorStatuses are the values of kafka_mirror_status.
var mirrorStatuses = []model.FlowStatus{model.FlowStatusOK, model.FlowStatusWarning, model.FlowStatusCritical, model.FlowStatusBroken, model.FlowStatusUnknown,
	model.FlowStatusFailedOver}

var runStatuses = []model.RunStatus{model.RunPending, model.RunApproved, model.RunRejected, model.RunRunning, model.RunCompleted, model.RunFailed, model.RunCancelled}

// Describe implements prometheus.Collector: every family, per-partition
// ones included whatever the setting (dashboards and rules are checked
// against it).
func (c MetricsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range mirrorFamilies {
		ch <- f.desc
	}
	storeCollector{c}.Describe(ch)
	writerCollector{c.Monitor}.Describe(ch)
}

// Collect implements prometheus.Collector.
func (c MetricsCollector) Collect(ch chan<- prometheus.Metric) {
	c.eachMirror(c.Monitor.Snapshots(), func(f *family, v float64, labels ...string) {
		t := prometheus.GaugeValue
		if f.counter {
			t = prometheus.CounterValue
		}
		ch <- prometheus.MustNewConstMetric(f.desc, t, v, labels...)
	})
	storeCollector{c}.Collect(ch)
	writerCollector{c.Monitor}.Collect(ch)
}

// eachMirror hands every kafka_mirror_* sample of snaps to emit: the one
// place that decides what is exported.
func (c MetricsCollector) eachMirror(snaps []*flowstate.FlowSnapshot, emit func(f *family, v float64, labels ...string)) {
	th := c.Monitor.Thresholds()
	for _, s := range snaps {
		if s.FailedOver != nil {
			failedOverMirror(s, th, emit)
			continue
		}
		flow := s.Flow.Name
		emit(famFailedOver, 0, flow)
		unknownAge := 0
		perPartition := c.Series.PerPartitionFor(len(s.Partitions))
		for _, p := range s.Partitions {
			if p.LagMessages.Known && !p.LagMs.Known {
				unknownAge++
			}
			if !perPartition {
				continue
			}
			part := strconv.Itoa(int(p.Partition))
			if p.LagMessages.Known {
				emit(famLagMessages, float64(p.LagMessages.V), flow, p.Topic.String(), part)
			}
			if p.LagMs.Known {
				emit(famLagMs, float64(p.LagMs.V), flow, p.Topic.String(), part)
			}
		}
		for _, t := range topicAggregates(s.Partitions) {
			if t.knownMessages {
				emit(famTopicLagMessages, float64(t.lagMessages), flow, t.topic)
			}
			if t.maxLagMs.Known {
				emit(famTopicLagMs, float64(t.maxLagMs.V), flow, t.topic)
			}
			emit(famTopicUnknown, float64(t.unknownPartition), flow, t.topic)
		}
		if s.RPOMs != nil {
			emit(famRPOMs, float64(*s.RPOMs), flow)
		}
		if s.MaxLagMessages != nil {
			emit(famRPOMessages, float64(*s.MaxLagMessages), flow)
		}
		if s.HeartbeatAge != nil {
			emit(famHeartbeatAge, float64(s.HeartbeatAge.Milliseconds()), flow)
		}
		statusAndReach(s, emit)
		emit(famDataLost, float64(s.DataLost), flow)
		if !s.Flow.IsClusterLink() {
			emit(famLossSuspected, float64(s.LossSuspected), flow)
			// Counted from the incidents stored in SQLite: monotonic across restarts.
			emit(famLostRecords, float64(s.LostOffsetsTotal), flow)
			emit(famLossIncidents, float64(s.LossIncidentsTotal), flow)
		}
		emit(famUnknown, float64(s.Unknown), flow)
		emit(famUnknownAge, float64(unknownAge), flow)
		// Exported so dashboards draw the lines the console's status uses.
		if th.Critical.Lag > 0 {
			emit(famRPOThreshold, float64(th.Warning.Lag.D().Milliseconds()), flow, "warning")
			emit(famRPOThreshold, float64(th.Critical.Lag.D().Milliseconds()), flow, "critical")
		}
		if !s.FiguresAt.IsZero() {
			emit(famRefreshed, float64(s.FiguresAt.UnixMilli())/1000, flow)
		}
		if !s.At.IsZero() {
			emit(famLowerBound, b2f(s.RPOAtLeast || s.Bound != ""), flow)
			emit(famRefreshLate, b2f(s.Late != nil), flow)
			emit(famRefreshRead, s.ReadTook.Seconds(), flow)
		}
		groupSeries(s, emit)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// statusAndReach emits a flow's kafka_mirror_status (one series per
// status) and kafka_mirror_cluster_up per side the monitor has checked.
func statusAndReach(s *flowstate.FlowSnapshot, emit func(f *family, v float64, labels ...string)) {
	flow := s.Flow.Name
	for _, st := range mirrorStatuses {
		emit(famStatus, b2f(s.Status == st), flow, string(st))
	}
	for _, r := range []struct {
		role string
		r    model.Reachability
	}{{"source", s.Source}, {"target", s.Target}} {
		if r.r.Checked {
			emit(famUp, b2f(r.r.OK), flow, r.role)
		}
	}
}
