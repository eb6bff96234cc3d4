package handlers

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/model"
)

// groupSnapshot is an MM2 flow with three groups: billing (critical,
// objective 10, bound 19), lagger (a partition untranslated: unknown) and
// orders (bound 29, checkpointed only).
func groupSnapshot() *flowstate.FlowSnapshot {
	at := time.UnixMilli(1_800_000_000_000)
	gs := &model.FlowGroups{At: at, Cap: 200, Groups: []model.GroupQuality{
		{Group: "lagger", Configured: true, Untranslated: 1, RereadKnown: 4, OffsetsAt: at.Add(-20 * time.Second)},
		{Group: "billing", Configured: true, Critical: true, Objective: 10, Reread: i64(19), OldestSyncAt: at.Add(-90 * time.Second),
			CheckpointAt: at.Add(-30 * time.Second), OffsetsAt: at.Add(-20 * time.Second)},
		{Group: "orders", Reread: i64(29), OldestSyncAt: at.Add(-time.Hour), CheckpointAt: at.Add(-5 * time.Second), OffsetsAt: at.Add(-5 * time.Second)},
	}}
	return &flowstate.FlowSnapshot{Flow: &config.Flow{Name: "primary->dr", Kind: "mm2"}, At: at, Status: model.FlowStatusOK, Groups: gs}
}

// The per-group series: an unknown bound is left out with its flag at 0,
// never exported as 0; the flow's worst is unknown while any group's is,
// and known once none is; a failed-over flow exports none.
func TestGroupMetricSeries(t *testing.T) {
	s := groupSnapshot()
	got := parseText(t, collectorText(t, MetricsCollector{Monitor: newFakeSource([]*flowstate.FlowSnapshot{s})}))
	series := func(name string) []string { return got[name][2:] } // after help and type
	for name, want := range map[string][]string{
		"kafka_mirror_group_reprocess_records":            {"flow=primary->dr,group=billing 19", "flow=primary->dr,group=orders 29"},
		"kafka_mirror_group_reprocess_known":              {"flow=primary->dr,group=billing 1", "flow=primary->dr,group=lagger 0", "flow=primary->dr,group=orders 1"},
		"kafka_mirror_group_untranslated_partitions":      {"flow=primary->dr,group=billing 0", "flow=primary->dr,group=lagger 1", "flow=primary->dr,group=orders 0"},
		"kafka_mirror_group_reprocess_objective_records":  {"flow=primary->dr,group=billing 10"},
		"kafka_mirror_group_critical":                     {"flow=primary->dr,group=billing 1", "flow=primary->dr,group=lagger 0", "flow=primary->dr,group=orders 0"},
		"kafka_mirror_group_sync_timestamp_seconds":       {"flow=primary->dr,group=billing 1.79999991e+09", "flow=primary->dr,group=orders 1.7999964e+09"},
		"kafka_mirror_group_checkpoint_timestamp_seconds": {"flow=primary->dr,group=billing 1.79999997e+09", "flow=primary->dr,group=orders 1.799999995e+09"},
		"kafka_mirror_groups_worst_known":                 {"flow=primary->dr 0"},
		"kafka_mirror_groups_over_cap":                    {"flow=primary->dr 0"},
	} {
		if g := series(name); !slices.Equal(g, want) {
			t.Errorf("%s = %q, want %q", name, g, want)
		}
	}
	if _, ok := got["kafka_mirror_groups_worst_reprocess_records"]; ok {
		t.Errorf("worst exported while lagger's bound is unknown: %q", got["kafka_mirror_groups_worst_reprocess_records"])
	}

	// lagger translated: the worst is the largest bound, known.
	s.Groups.Groups[0] = model.GroupQuality{Group: "lagger", Reread: i64(4)}
	model.WorstFirst(s.Groups.Groups)
	got = parseText(t, collectorText(t, MetricsCollector{Monitor: newFakeSource([]*flowstate.FlowSnapshot{s})}))
	if w, k := series("kafka_mirror_groups_worst_reprocess_records"), series("kafka_mirror_groups_worst_known"); !slices.Equal(w, []string{"flow=primary->dr 29"}) ||
		!slices.Equal(k, []string{"flow=primary->dr 1"}) {
		t.Errorf("worst = %q known %q", w, k)
	}
	// Groups beyond the cap: the worst is unknown again.
	s.Groups.Over = 3
	got = parseText(t, collectorText(t, MetricsCollector{Monitor: newFakeSource([]*flowstate.FlowSnapshot{s})}))
	if _, ok := got["kafka_mirror_groups_worst_reprocess_records"]; ok || !slices.Equal(series("kafka_mirror_groups_over_cap"), []string{"flow=primary->dr 3"}) {
		t.Errorf("with groups over the cap: worst %q, over %q", got["kafka_mirror_groups_worst_reprocess_records"], got["kafka_mirror_groups_over_cap"])
	}

	s.FailedOver = &model.FailedOver{Run: 1, SinceMs: 1}
	text := string(collectorText(t, MetricsCollector{Monitor: newFakeSource([]*flowstate.FlowSnapshot{s})}))
	if strings.Contains(text, "kafka_mirror_group_reprocess_records{") {
		t.Error("a failed-over flow exports group series")
	}
}
