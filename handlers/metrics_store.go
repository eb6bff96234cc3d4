package handlers

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// storeCollector exports the drconsole_* families, read from SQLite on
// every scrape (they do not change with the monitor's refresh).
type storeCollector struct{ c MetricsCollector }

// StoreCollector is the part of c that /metrics collects live, beside
// the Go and process collectors.
func (c MetricsCollector) StoreCollector() prometheus.Collector { return storeCollector{c} }

func (s storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descFailoverRuns, descNotifyPending, descNotifyOldest, descDrillSuccess} {
		ch <- d
	}
}

// Collect exports the run counts of every flow in every status (0 where
// there are none), the time of each flow's last successful drill and the
// notification backlog; nothing of a part the database does not answer for.
func (sc storeCollector) Collect(ch chan<- prometheus.Metric) {
	c := sc.c
	if c.Store == nil {
		return
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if pending, err := c.Store.PendingNotifications(ctx); err == nil {
		for r, p := range pending {
			gauge(descNotifyPending, float64(p[0]), r)
			gauge(descNotifyOldest, time.Since(time.UnixMilli(p[1])).Seconds(), r)
		}
	}
	flows := map[string]bool{}
	for _, s := range c.Monitor.Snapshots() {
		flows[s.Flow.Name] = true
	}
	// Every flow has a series, 0 until its first successful drill, so
	// "no successful drill in 30 days" fires for a flow never drilled.
	if last, err := c.Store.LastDrillSuccess(ctx); err == nil {
		for flow := range flows {
			gauge(descDrillSuccess, float64(last[flow])/1000, flow)
		}
	}
	counts, err := c.Store.FailoverRunCounts(ctx)
	if err != nil {
		return
	}
	n := map[[2]string]int{}
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
