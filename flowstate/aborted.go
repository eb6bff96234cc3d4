package flowstate

import (
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// AbortedInDRAfter is what `drconsole translate` warns about: per source
// partition, the records of aborted transactions at or after each offset
// that MM2 copied to DR, from the batches stored for the topic's newest
// incarnation (topic id).
func AbortedInDRAfter(stored []storage.AbortedBatch, tp model.TP, from int64) int64 {
	newest, at := "", int64(-1)
	for _, b := range stored {
		if b.Topic == tp.Topic && b.AtMs >= at {
			newest, at = b.TopicID, b.AtMs
		}
	}
	var bs []model.AbortedBatch
	for _, b := range stored {
		if b.Topic == tp.Topic && b.Partition == tp.Partition && b.TopicID == newest {
			bs = append(bs, model.AbortedBatch{First: b.First, Last: b.Last, Records: b.Records})
		}
	}
	return model.AbortedAfter(bs, from)
}
