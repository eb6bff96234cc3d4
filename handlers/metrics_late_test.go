package handlers

import (
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/model"
)

// writerSource is a monitor with a sample writer behind.
type writerSource struct {
	*fakeSource
	st model.SampleWriterStats
}

func (w writerSource) SampleWriterStats() model.SampleWriterStats { return w.st }

// A late refresh is exported as late, its clusters still up; the reads'
// duration and the sample writer's queue are exported beside it.
func TestMetricsRefreshLateAndSampleWriter(t *testing.T) {
	now := time.Now()
	ok := model.Reachability{Checked: true, OK: true, Since: now, LastOK: now}
	late := &flowstate.FlowSnapshot{Flow: &config.Flow{Name: "late"}, At: now, Source: ok, Target: ok, Status: model.FlowStatusUnknown,
		ReadTook: 10 * time.Second, Late: &model.LateRefresh{Side: "source", Timeout: 10 * time.Second, Since: now}}
	onTime := &flowstate.FlowSnapshot{Flow: &config.Flow{Name: "on-time"}, At: now, Source: ok, Target: ok, Status: model.FlowStatusOK,
		ReadTook: 250 * time.Millisecond}
	src := writerSource{newFakeSource([]*flowstate.FlowSnapshot{late, onTime}),
		model.SampleWriterStats{Queued: 70, OverBound: true, Retries: 3, DroppedPartitionSets: 6}}
	got := parseText(t, collectorText(t, MetricsCollector{Monitor: src}))
	for name, want := range map[string][]string{
		"kafka_mirror_refresh_late":                     {"flow=late 1", "flow=on-time 0"},
		"kafka_mirror_refresh_read_seconds":             {"flow=late 10", "flow=on-time 0.25"},
		"kafka_mirror_cluster_up":                       {"flow=late,role=source 1", "flow=late,role=target 1"},
		"drconsole_sample_queue_refreshes":              {" 70"},
		"drconsole_sample_queue_over_bound":             {" 1"},
		"drconsole_sample_write_retries_total":          {" 3"},
		"drconsole_sample_partition_sets_dropped_total": {" 6"},
	} {
		lines := strings.Join(got[name], "\n")
		for _, w := range want {
			if !strings.Contains(lines, w) {
				t.Errorf("%s: no %q in\n%s", name, w, lines)
			}
		}
	}
}

// While a cluster does not answer, the figures are the last read's: the
// refresh timestamp is that read's (its age the figures' true age, not the
// failed refresh's), and the flow's lag series are flagged lower bounds.
func TestMetricsStaleFiguresAreLowerBoundsWithTheirAge(t *testing.T) {
	now := time.UnixMilli(1_800_000_100_000)
	read := now.Add(-22 * time.Second)
	ok := model.Reachability{Checked: true, OK: true, Since: read, LastOK: now}
	down := model.Reachability{Checked: true, OK: false, Since: now.Add(-15 * time.Second), LastOK: read}
	gone := &flowstate.FlowSnapshot{Flow: &config.Flow{Name: "gone"}, At: now, FiguresAt: read, Source: down, Target: ok,
		Status: model.FlowStatusUnknown, RPOMs: i64(14_557), RPOAtLeast: true, Bound: "source cluster unreachable",
		Partitions: []model.PartitionLag{{Topic: model.Intern("events"), LagMessages: model.Known(681), LagMs: model.Known(14_557), AsOf: model.StampOf(read)}}, FiguresStale: true}
	fresh := &flowstate.FlowSnapshot{Flow: &config.Flow{Name: "fresh"}, At: now, FiguresAt: now, Source: ok, Target: ok,
		Status: model.FlowStatusOK, RPOMs: i64(0), Partitions: []model.PartitionLag{{Topic: model.Intern("events"), LagMessages: model.Known(0), LagMs: model.Known(0), AsOf: model.StampOf(now)}}}
	got := parseText(t, collectorText(t, MetricsCollector{Monitor: newFakeSource([]*flowstate.FlowSnapshot{gone, fresh})}))
	for name, want := range map[string][]string{
		"kafka_mirror_refresh_timestamp_seconds": {"flow=gone 1.800000078e+09", "flow=fresh 1.8000001e+09"},
		"kafka_mirror_lag_lower_bound":           {"flow=gone 1", "flow=fresh 0"},
		"kafka_mirror_status":                    {"flow=gone,status=OK 0"},
	} {
		lines := strings.Join(got[name], "\n")
		for _, w := range want {
			if !strings.Contains(lines, w) {
				t.Errorf("%s: no %q in\n%s", name, w, lines)
			}
		}
	}
}

// The API marks each partition of a snapshot holding an earlier read
// stale, as of that read, and none of a fresh one: the flag is the
// snapshot's, not the rows'.
func TestAPIPartitionsStaleFromTheSnapshot(t *testing.T) {
	now := time.UnixMilli(1_800_000_100_000)
	read := now.Add(-22 * time.Second)
	rows := []model.PartitionLag{{Topic: model.Intern("events"), LagMessages: model.Known(681), AsOf: model.StampOf(read)}, {Topic: model.Intern("events"), Partition: 1, LagMessages: model.Known(0), AsOf: model.StampOf(read)}}
	for _, stale := range []bool{true, false} {
		s := &flowstate.FlowSnapshot{Flow: &config.Flow{Name: "primary->dr"}, At: now, FiguresAt: read, Partitions: rows, FiguresStale: stale}
		f := (&Handlers{}).apiFlow(s, now, true)
		if len(f.PartitionsLags) != len(rows) {
			t.Fatalf("%d partitions in the API, want %d", len(f.PartitionsLags), len(rows))
		}
		for _, p := range f.PartitionsLags {
			if p.Stale != stale || p.AsOf == nil || *p.AsOf != *apiTime(read) {
				t.Errorf("snapshot stale %v: %s-%d stale %v as of %v", stale, p.Topic, p.Partition, p.Stale, p.AsOf != nil && *p.AsOf == *apiTime(read))
			}
		}
	}
}

// By default the per-partition series the design's alert rules select are
// exported for a flow of up to config.PerPartitionBound partitions, and
// left out above it; per_partition true or false overrides the bound.
func TestMetricsPerPartitionByDefaultUpToTheBound(t *testing.T) {
	flow := func(name string, n int) *flowstate.FlowSnapshot {
		s := &flowstate.FlowSnapshot{Flow: &config.Flow{Name: name}, At: time.Now(), Status: model.FlowStatusOK}
		for i := range n {
			s.Partitions = append(s.Partitions, model.PartitionLag{Topic: model.Intern("t"), Partition: int32(i), LagMessages: model.Known(1), LagMs: model.Known(40_000)})
		}
		return s
	}
	src := newFakeSource([]*flowstate.FlowSnapshot{flow("small", 3), flow("big", config.PerPartitionBound+1)})
	for _, c := range []struct {
		setting    *bool
		small, big int
	}{{nil, 3, 0}, {new(true), 3, config.PerPartitionBound + 1}, {new(false), 0, 0}} {
		got := parseText(t, collectorText(t, MetricsCollector{Monitor: src, Series: config.Metrics{PerPartition: c.setting}}))
		small, big := 0, 0
		for _, l := range got["kafka_mirror_lag_ms"] {
			small += strings.Count(l, "flow=small,")
			big += strings.Count(l, "flow=big,")
		}
		if small != c.small || big != c.big {
			t.Errorf("per_partition %v: %d and %d lag_ms series, want %d and %d", c.setting, small, big, c.small, c.big)
		}
	}
}
