package handlers

import (
	"github.com/drconsole/drconsole/model"
	"github.com/prometheus/client_golang/prometheus"
)

var (
	descSampleQueue = prometheus.NewDesc("drconsole_sample_queue_refreshes",
		"Refreshes whose lag samples wait for the sample writer (SQLite); near 0 when it keeps up.", nil, nil)
	descSampleOver = prometheus.NewDesc("drconsole_sample_queue_over_bound",
		"1 from when more refreshes of a flow waited for the sample writer than its bound until the queue drained: flow samples are kept, the per-partition figures of superseded refreshes are dropped.", nil, nil)
	descSampleRetries = prometheus.NewDesc("drconsole_sample_write_retries_total",
		"Failed attempts at writing lag samples to SQLite, each retried (none dropped).", nil, nil)
	descSampleDropped = prometheus.NewDesc("drconsole_sample_partition_sets_dropped_total",
		"Queued refreshes whose per-partition figures were dropped while the sample writer was over its bound (their flow samples were kept).", nil, nil)
)

// sampleWriterSource is the monitor's sample writer, where there is one.
type sampleWriterSource interface {
	SampleWriterStats() model.SampleWriterStats
}

// writerCollector exports the monitor's sample writer figures, read live
// on every scrape; nothing for a monitor without one.
type writerCollector struct{ m MetricsSource }

// WriterCollector is the sample writer part of c that /metrics collects
// live.
func (c MetricsCollector) WriterCollector() prometheus.Collector { return writerCollector{c.Monitor} }

func (w writerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descSampleQueue, descSampleOver, descSampleRetries, descSampleDropped} {
		ch <- d
	}
}

func (w writerCollector) Collect(ch chan<- prometheus.Metric) {
	src, ok := w.m.(sampleWriterSource)
	if !ok {
		return
	}
	st := src.SampleWriterStats()
	ch <- prometheus.MustNewConstMetric(descSampleQueue, prometheus.GaugeValue, float64(st.Queued))
	ch <- prometheus.MustNewConstMetric(descSampleOver, prometheus.GaugeValue, b2f(st.OverBound))
	ch <- prometheus.MustNewConstMetric(descSampleRetries, prometheus.CounterValue, float64(st.Retries))
	ch <- prometheus.MustNewConstMetric(descSampleDropped, prometheus.CounterValue, float64(st.DroppedPartitionSets))
}
