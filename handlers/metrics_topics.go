package handlers

import "github.com/drconsole/drconsole/model"

// topicAgg is one topic's aggregate series.
type topicAgg struct {
	topic            string
	lagMessages      int64
	knownMessages    bool
	maxLagMs         model.Figure
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
		i, ok := at[p.Topic.String()]
		if !ok {
			i = len(out)
			at[p.Topic.String()] = i
			out = append(out, topicAgg{topic: p.Topic.String()})
		}
		t := &out[i]
		if !p.LagMessages.Known || !p.LagMs.Known {
			t.unknownPartition++
		}
		if p.LagMessages.Known {
			t.lagMessages += p.LagMessages.V
			t.knownMessages = true
		}
		ms := p.LagMs
		if !ms.Known {
			ms = p.LagMsAtLeast
		}
		if ms.Known && (!t.maxLagMs.Known || ms.V > t.maxLagMs.V) {
			t.maxLagMs = ms
		}
	}
	return out
}
