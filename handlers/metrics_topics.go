package handlers

import "github.com/drconsole/drconsole/model"

// topicAgg is one topic's aggregate series.
type topicAgg struct {
	topic            string
	lagMessages      int64
	knownMessages    bool
	maxLagMs         *int64
	unknownPartition int
}

// topicAggregates sums and maxes a flow's partitions per topic, in
// first-seen order. Never understated: a partition whose lag or age is not
// known exactly is counted in unknownPartition, and an age known only as a
// lower bound counts in the max (as it does in the flow RPO).
func topicAggregates(parts []model.PartitionLag) []topicAgg {
	var out []topicAgg
	at := map[string]int{}
	for _, p := range parts {
		i, ok := at[p.Topic]
		if !ok {
			i = len(out)
			at[p.Topic] = i
			out = append(out, topicAgg{topic: p.Topic})
		}
		t := &out[i]
		if p.LagMessages == nil || p.LagMs == nil {
			t.unknownPartition++
		}
		if p.LagMessages != nil {
			t.lagMessages += *p.LagMessages
			t.knownMessages = true
		}
		ms := p.LagMs
		if ms == nil {
			ms = p.LagMsAtLeast
		}
		if ms != nil && (t.maxLagMs == nil || *ms > *t.maxLagMs) {
			t.maxLagMs = ms
		}
	}
	return out
}
