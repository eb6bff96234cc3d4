package mm2

import "github.com/drconsole/drconsole/model"

// denseLimit bounds the partition numbers held in a topic's slice:
// Kafka numbers a topic's partitions from 0, so a slice by number wastes
// nothing; a number past this (a corrupt record, never Kafka) goes to a
// map instead of allocating a slice that long.
const denseLimit = 1 << 16

// partIndex maps a partition to its history's index in SyncIndex.hs. Per
// topic a slice by partition number (-1: none) instead of one map entry
// per partition: at 100k partitions in 1,000 topics about 0.5 MB, where a
// map keyed by model.TP took about 5 MB (BenchmarkSyncIndexBytes100k:
// 21.4 bytes a sync before, 19.1 after).
type partIndex struct {
	topics map[string][]int32
	sparse map[model.TP]int32 // partitions numbered below 0 or from denseLimit
	n      int
}

func newPartIndex() partIndex { return partIndex{topics: map[string][]int32{}} }

func (x *partIndex) get(tp model.TP) (int32, bool) {
	if tp.Partition < 0 || tp.Partition >= denseLimit {
		i, ok := x.sparse[tp]
		return i, ok
	}
	ps := x.topics[tp.Topic]
	if int(tp.Partition) >= len(ps) || ps[tp.Partition] < 0 {
		return 0, false
	}
	return ps[tp.Partition], true
}

// put sets tp's index; tp must not be held yet.
func (x *partIndex) put(tp model.TP, i int32) {
	x.n++
	if tp.Partition < 0 || tp.Partition >= denseLimit {
		if x.sparse == nil {
			x.sparse = map[model.TP]int32{}
		}
		x.sparse[tp] = i
		return
	}
	ps := x.topics[tp.Topic]
	for len(ps) <= int(tp.Partition) {
		ps = append(ps, -1)
	}
	ps[tp.Partition] = i
	x.topics[tp.Topic] = ps
}

func (x *partIndex) len() int { return x.n }

// each calls f with every partition held and its index, in no order.
func (x *partIndex) each(f func(tp model.TP, i int32)) {
	for topic, ps := range x.topics {
		for p, i := range ps {
			if i >= 0 {
				f(model.TP{Topic: topic, Partition: int32(p)}, i)
			}
		}
	}
	for tp, i := range x.sparse {
		f(tp, i)
	}
}
