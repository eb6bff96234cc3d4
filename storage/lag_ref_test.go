package storage

// The REFERENCE copy of the lag and RPO history as it was before issue 17
// (migration 0001's partition_lag_samples and flow_lag_samples: every sample
// of every partition kept as given, keyed as those tables were), modelled in
// memory: the bounded history must answer every read as this does on the
// same inputs (lag_compare_test.go). Test code only; kept as it was, with
// the figures issue 17 added to the inputs (LagMsAtLeast, RPOAtLeast,
// MaxLagMessages) carried along as given.
//
// The old store had no topic aggregates and no minute rollups: topicMinutes
// and flowMinutes are what grouping its rows would answer, written without
// the new code's helpers so that the comparison is not the code checked
// against itself.

import (
	"cmp"
	"maps"
	"slices"
)

// refPartKey is partition_lag_samples' key within a flow.
type refPartKey struct {
	topic     string
	partition int32
	atMs      int64
}

type refLagHistory struct {
	parts map[string]map[refPartKey]PartitionSample // flow -> rows
	flows map[string]map[int64]FlowSample           // flow -> at_ms -> row
	// The cuts of the prunes so far: the old single cut was the detail's
	// (lagCut); the rollups, which the old store derived from the same raw
	// samples, are kept down to rpoCut.
	lagCut, rpoCut int64
}

func newRefLagHistory() *refLagHistory {
	return &refLagHistory{parts: map[string]map[refPartKey]PartitionSample{}, flows: map[string]map[int64]FlowSample{}}
}

// AddPartitionSamples records many partitions' figures (INSERT OR REPLACE).
func (r *refLagHistory) AddPartitionSamples(flow string, xs []PartitionSample) {
	if r.parts[flow] == nil {
		r.parts[flow] = map[refPartKey]PartitionSample{}
	}
	for _, x := range xs {
		r.parts[flow][refPartKey{x.Topic, x.Partition, x.AtMs}] = x
	}
}

// AddFlowSample records a flow's figures (INSERT OR REPLACE on at_ms).
func (r *refLagHistory) AddFlowSample(flow string, x FlowSample) {
	if r.flows[flow] == nil {
		r.flows[flow] = map[int64]FlowSample{}
	}
	r.flows[flow][x.AtMs] = x
}

// rows returns a flow's partition rows matching keep, ordered by topic,
// partition, then time.
func (r *refLagHistory) rows(flow string, keep func(PartitionSample) bool) []PartitionSample {
	var out []PartitionSample
	for _, x := range r.parts[flow] {
		if x.AtMs >= r.lagCut && keep(x) {
			out = append(out, x)
		}
	}
	slices.SortFunc(out, func(a, b PartitionSample) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition), cmp.Compare(a.AtMs, b.AtMs))
	})
	return out
}

// PartitionSamples returns one partition's samples since sinceMs, oldest first.
func (r *refLagHistory) PartitionSamples(flow, topic string, partition int32, sinceMs int64) []PartitionSample {
	return r.rows(flow, func(x PartitionSample) bool {
		return x.Topic == topic && x.Partition == partition && x.AtMs >= sinceMs
	})
}

// LatestPartitionSamples returns the newest sample of every partition of a
// flow (GROUP BY topic, partition with max(at_ms)).
func (r *refLagHistory) LatestPartitionSamples(flow string) []PartitionSample {
	var out []PartitionSample
	for _, x := range r.rows(flow, func(PartitionSample) bool { return true }) {
		if n := len(out); n > 0 && out[n-1].Topic == x.Topic && out[n-1].Partition == x.Partition {
			out[n-1] = x // rows are oldest first within a partition
			continue
		}
		out = append(out, x)
	}
	return out
}

// FlowSamples returns a flow's samples since sinceMs, oldest first.
func (r *refLagHistory) FlowSamples(flow string, sinceMs int64) []FlowSample {
	var out []FlowSample
	for _, at := range slices.Sorted(maps.Keys(r.flows[flow])) {
		if at >= sinceMs && at >= r.lagCut {
			out = append(out, r.flows[flow][at])
		}
	}
	return out
}

// PruneLagSamples deletes samples older than the cuts.
func (r *refLagHistory) PruneLagSamples(lagBeforeMs, rpoBeforeMs int64) {
	r.lagCut, r.rpoCut = max(r.lagCut, lagBeforeMs), max(r.rpoCut, rpoBeforeMs)
}

// topicMinutes groups a topic's rows by time, as SELECT ... GROUP BY at_ms
// over partition_lag_samples would: a partition is unknown when its lag or
// age is, and a lower bound on the age counts towards the maximum age.
func (r *refLagHistory) topicMinutes(flow, topic string, sinceMs int64) []TopicMinute {
	byAt := map[int64][]PartitionSample{}
	for _, x := range r.rows(flow, func(x PartitionSample) bool { return x.Topic == topic && x.AtMs >= sinceMs }) {
		byAt[x.AtMs] = append(byAt[x.AtMs], x)
	}
	var out []TopicMinute
	for _, at := range slices.Sorted(maps.Keys(byAt)) {
		xs := byAt[at]
		m := TopicMinute{Topic: topic, AtMs: at, Partitions: len(xs)}
		var lags, ages []int64
		for _, x := range xs {
			if x.LagMessages != nil {
				lags = append(lags, *x.LagMessages)
			}
			if x.LagMessages == nil || x.LagMs == nil {
				m.Unknown++
			}
			if x.LagMessages != nil && *x.LagMessages > 0 {
				m.Lagging++
			}
			if age := cmp.Or(x.LagMs, x.LagMsAtLeast); age != nil {
				ages = append(ages, *age)
			}
		}
		m.MaxLagAtLeast = m.Unknown > 0
		m.MaxLagMs, m.MaxLagMessages, m.TotalLagMessages = refMax(ages), refMax(lags), refSum(lags)
		out = append(out, m)
	}
	return out
}

// refStatusRank orders statuses worst last; any other word ranks as UNKNOWN.
var refStatusRank = map[string]int{"OK": 0, "WARNING": 1, "UNKNOWN": 2, "CRITICAL": 3, "BROKEN": 4}

// flowMinutes groups a flow's raw samples by minute, as SELECT ... GROUP BY
// at_ms / 60000 over flow_lag_samples would: never an unknown turned into
// 0, a sample's RPO a lower bound when it said so.
func (r *refLagHistory) flowMinutes(flow string, sinceMs int64) []FlowMinute {
	byMinute := map[int64][]FlowSample{}
	for at, x := range r.flows[flow] {
		byMinute[at/MinuteMs*MinuteMs] = append(byMinute[at/MinuteMs*MinuteMs], x)
	}
	var out []FlowMinute
	for _, minute := range slices.Sorted(maps.Keys(byMinute)) {
		if minute < sinceMs || minute < r.rpoCut {
			continue
		}
		m := FlowMinute{MinuteMs: minute, WorstStatus: "OK"}
		var rpos, lags, totals []int64
		for _, x := range byMinute[minute] {
			m.Samples++
			if x.RPOMs == nil {
				m.Unknown++
			} else {
				rpos = append(rpos, *x.RPOMs)
				if x.RPOAtLeast {
					m.AtLeast++
				}
			}
			if x.MaxLagMessages != nil {
				lags = append(lags, *x.MaxLagMessages)
			}
			if x.LagMessages != nil {
				totals = append(totals, *x.LagMessages)
			}
			rank, ok := refStatusRank[x.Status]
			if !ok {
				rank = refStatusRank["UNKNOWN"]
			}
			if rank > refStatusRank[m.WorstStatus] {
				m.WorstStatus = x.Status
				if !ok {
					m.WorstStatus = "UNKNOWN"
				}
			}
		}
		m.MaxRPOMs, m.MaxLagMessages, m.MaxTotalLagMessages = refMax(rpos), refMax(lags), refMax(totals)
		out = append(out, m)
	}
	return out
}

// refMax is SQL's max(): nil over no figures.
func refMax(xs []int64) *int64 {
	if len(xs) == 0 {
		return nil
	}
	v := slices.Max(xs)
	return &v
}

// refSum is SQL's sum(): nil over no figures.
func refSum(xs []int64) *int64 {
	if len(xs) == 0 {
		return nil
	}
	var v int64
	for _, x := range xs {
		v += x
	}
	return &v
}
