package handlers

import (
	"context"
	"strconv"
	"time"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/storage"
	"github.com/prometheus/client_golang/prometheus"
)

// MetricsCollector exports the monitor's latest figures. Unknown values are
// left out rather than exported as 0; last known values of an unreachable
// cluster are exported (kafka_mirror_cluster_up says they are stale).
type MetricsCollector struct {
	Monitor *monitor.Monitor
	// Store counts failover runs and undelivered notifications; nil
	// leaves those series out.
	Store interface {
		FailoverRunCounts(context.Context) ([]storage.RunCount, error)
		PendingNotifications(context.Context) (map[string][2]int64, error)
	}
}

var (
	descLagMessages = prometheus.NewDesc("kafka_mirror_lag_messages",
		"Source offsets not yet replicated to the target: source end offset minus replicated position. Counts offsets, not records (transaction markers and compacted-away offsets included), so at least as many as the records missing.",
		[]string{"flow", "topic", "partition"}, nil)
	descLagMs = prometheus.NewDesc("kafka_mirror_lag_ms",
		"Age in milliseconds of the oldest source record not yet replicated; 0 when caught up.",
		[]string{"flow", "topic", "partition"}, nil)
	descRPOMs = prometheus.NewDesc("kafka_mirror_rpo_ms",
		"Recovery point of a flow: the largest partition lag in milliseconds. For a partition whose age cannot be read, the time since its first unreplicated record was first seen counts (a lower bound): then the RPO is at least this value and kafka_mirror_lag_unknown_age_partitions is above 0.", []string{"flow"}, nil)
	descUnknownAge = prometheus.NewDesc("kafka_mirror_lag_unknown_age_partitions",
		"Partitions behind by a known number of messages whose lag in time could not be read: kafka_mirror_rpo_ms is then only a lower bound (as it is when kafka_mirror_unknown_partitions is above 0).", []string{"flow"}, nil)
	descRPOMessages = prometheus.NewDesc("kafka_mirror_rpo_messages",
		"Largest partition lag of a flow in offsets (see kafka_mirror_lag_messages).", []string{"flow"}, nil)
	descHeartbeatAge = prometheus.NewDesc("kafka_mirror_heartbeat_age_ms",
		"Milliseconds since the newest MM2 heartbeat replicated to the target was emitted.", []string{"flow"}, nil)
	descStatus = prometheus.NewDesc("kafka_mirror_status",
		"1 for the flow's current status (OK, WARNING, CRITICAL, BROKEN, UNKNOWN), 0 for the others.", []string{"flow", "status"}, nil)
	descUp = prometheus.NewDesc("kafka_mirror_cluster_up",
		"1 when the console's last request to the cluster worked.", []string{"flow", "role"}, nil)
	descDataLost = prometheus.NewDesc("kafka_mirror_data_lost_partitions",
		"Partitions with a confirmed loss (source records deleted before MM2 copied them) not yet acknowledged by an operator.", []string{"flow"}, nil)
	descLossSuspected = prometheus.NewDesc("kafka_mirror_data_loss_suspected_partitions",
		"Partitions whose source log start passed the replicated position while MM2 may still copy the records: a possible loss being checked.", []string{"flow"}, nil)
	descLostRecords = prometheus.NewDesc("kafka_mirror_lost_records_total",
		"Source offsets deleted before MM2 copied them, over every recorded loss incident (transaction markers among them count too).", []string{"flow"}, nil)
	descLossIncidents = prometheus.NewDesc("kafka_mirror_loss_incidents_total",
		"Recorded data loss incidents.", []string{"flow"}, nil)
	descUnknown = prometheus.NewDesc("kafka_mirror_unknown_partitions",
		"Partitions whose lag is unknown.", []string{"flow"}, nil)
	descRPOThreshold = prometheus.NewDesc("kafka_mirror_rpo_threshold_ms",
		"The lag in milliseconds above which the console calls a flow WARNING or CRITICAL (after the level's for: duration), from the configuration.", []string{"flow", "level"}, nil)
	descNotifyPending = prometheus.NewDesc("drconsole_notifications_pending",
		"Events not yet taken by a notification receiver (no series: none pending).", []string{"receiver"}, nil)
	descNotifyOldest = prometheus.NewDesc("drconsole_notifications_oldest_pending_age_seconds",
		"Age of a receiver's oldest undelivered event: it is failing or hanging, and later events wait behind it.", []string{"receiver"}, nil)
	descFailoverRuns = prometheus.NewDesc("drconsole_failover_runs",
		"Failover runs of a flow in each status (pending, approved, rejected, running, completed, failed, cancelled).", []string{"flow", "status"}, nil)
)

var runStatuses = []model.RunStatus{model.RunPending, model.RunApproved, model.RunRejected, model.RunRunning, model.RunCompleted, model.RunFailed, model.RunCancelled}

// Describe implements prometheus.Collector.
func (c MetricsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descLagMessages, descLagMs, descRPOMs, descRPOMessages, descHeartbeatAge, descStatus, descUp, descDataLost, descLossSuspected, descLostRecords, descLossIncidents, descUnknown, descUnknownAge, descRPOThreshold, descFailoverRuns, descNotifyPending, descNotifyOldest} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c MetricsCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, s := range c.Monitor.Snapshots() {
		flow := s.Flow.Name
		unknownAge := 0
		for _, p := range s.Partitions {
			part := strconv.Itoa(int(p.Partition))
			if p.LagMessages != nil && p.LagMs == nil {
				unknownAge++
			}
			if p.LagMessages != nil {
				gauge(descLagMessages, float64(*p.LagMessages), flow, p.Topic, part)
			}
			if p.LagMs != nil {
				gauge(descLagMs, float64(*p.LagMs), flow, p.Topic, part)
			}
		}
		if s.RPOMs != nil {
			gauge(descRPOMs, float64(*s.RPOMs), flow)
		}
		if s.MaxLagMessages != nil {
			gauge(descRPOMessages, float64(*s.MaxLagMessages), flow)
		}
		if s.HeartbeatAge != nil {
			gauge(descHeartbeatAge, float64(s.HeartbeatAge.Milliseconds()), flow)
		}
		for _, st := range []monitor.Status{monitor.StatusOK, monitor.StatusWarning, monitor.StatusCritical, monitor.StatusBroken, monitor.StatusUnknown} {
			v := 0.0
			if s.Status == st {
				v = 1
			}
			gauge(descStatus, v, flow, string(st))
		}
		for role, r := range map[string]monitor.Reachability{"source": s.Source, "target": s.Target} {
			if r.Checked {
				v := 0.0
				if r.OK {
					v = 1
				}
				gauge(descUp, v, flow, role)
			}
		}
		gauge(descDataLost, float64(s.DataLost), flow)
		if !s.Flow.IsClusterLink() {
			gauge(descLossSuspected, float64(s.LossSuspected), flow)
			// Counted from the incidents stored in SQLite: monotonic across restarts.
			ch <- prometheus.MustNewConstMetric(descLostRecords, prometheus.CounterValue, float64(s.LostOffsetsTotal), flow)
			ch <- prometheus.MustNewConstMetric(descLossIncidents, prometheus.CounterValue, float64(s.LossIncidentsTotal), flow)
		}
		gauge(descUnknown, float64(s.Unknown), flow)
		gauge(descUnknownAge, float64(unknownAge), flow)
		// Exported so dashboards draw the lines the console's status uses.
		if t := c.Monitor.Thresholds(); t.Critical.Lag > 0 {
			gauge(descRPOThreshold, float64(t.Warning.Lag.D().Milliseconds()), flow, "warning")
			gauge(descRPOThreshold, float64(t.Critical.Lag.D().Milliseconds()), flow, "critical")
		}
	}
	c.collectStore(gauge)
}

// collectStore exports the run counts of every flow in every status (0
// where there are none) and the notification backlog; nothing of a part
// the database does not answer for.
func (c MetricsCollector) collectStore(gauge func(*prometheus.Desc, float64, ...string)) {
	if c.Store == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if pending, err := c.Store.PendingNotifications(ctx); err == nil {
		for r, p := range pending {
			gauge(descNotifyPending, float64(p[0]), r)
			gauge(descNotifyOldest, time.Since(time.UnixMilli(p[1])).Seconds(), r)
		}
	}
	counts, err := c.Store.FailoverRunCounts(ctx)
	if err != nil {
		return
	}
	n := map[[2]string]int{}
	flows := map[string]bool{}
	for _, s := range c.Monitor.Snapshots() {
		flows[s.Flow.Name] = true
	}
	for _, rc := range counts {
		flows[rc.Flow] = true
		n[[2]string{rc.Flow, string(rc.Status)}] = rc.N
	}
	for flow := range flows {
		for _, st := range runStatuses {
			gauge(descFailoverRuns, float64(n[[2]string{flow, string(st)}]), flow, string(st))
		}
	}
}
