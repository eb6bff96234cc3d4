package catalog

import (
	"context"

	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/model"
)

// RewriteStateOf reads the savepoint's Kafka source splits (a bounded
// read of its `_metadata`) to judge whether it can be rewritten.
func (c *Catalog) RewriteStateOf(ctx context.Context, sp model.Savepoint) model.RewriteState {
	k, err := c.KafkaSplits(ctx, sp.Path, sp.SourceUID)
	switch {
	case err != nil:
		return model.RewriteState{Err: err.Error()}
	case k.Source != flink.SourceKafkaSource:
		return model.RewriteState{Err: "its Kafka source is a " + k.Source + ": only KafkaSource reader state (FLIP-27) can be rewritten"}
	}
	var st model.RewriteState
	for _, p := range k.Sorted() {
		if p.Next < 0 || p.Marker != "" {
			st.Markers = append(st.Markers, p.Key())
		}
	}
	return st
}
