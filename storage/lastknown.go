package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The last known figures of a flow's partitions are one row per flow: a
// snapshot replaced at every saved minute, so start-up reads one row
// instead of grouping the history, and its size follows the partitions
// watched, not the time kept.
//
// Layout: version 1, uvarint topic count, each topic as uvarint length and
// bytes; uvarint partition count, each partition as uvarint topic index,
// varint partition, a byte saying which figures are known (bit i for the
// i-th of source end, replicated, lag in offsets, lag in ms, lag in ms at
// least) and the known ones as varints. An unknown figure is absent, never 0.
const lastKnownVersion = 1

func lastKnownFigures(x *PartitionSample) [5]*int64 {
	return [5]*int64{x.SourceEnd, x.Replicated, x.LagMessages, x.LagMs, x.LagMsAtLeast}
}

func encodeLastKnown(xs []PartitionSample) []byte {
	index := map[string]uint64{}
	var topics []string
	for i := range xs {
		if _, ok := index[xs[i].Topic]; !ok {
			index[xs[i].Topic] = uint64(len(topics))
			topics = append(topics, xs[i].Topic)
		}
	}
	b := make([]byte, 0, 16+len(xs)*24)
	b = append(b, lastKnownVersion)
	b = binary.AppendUvarint(b, uint64(len(topics)))
	for _, t := range topics {
		b = binary.AppendUvarint(b, uint64(len(t)))
		b = append(b, t...)
	}
	b = binary.AppendUvarint(b, uint64(len(xs)))
	for i := range xs {
		x := &xs[i]
		b = binary.AppendUvarint(b, index[x.Topic])
		b = binary.AppendVarint(b, int64(x.Partition))
		figs := lastKnownFigures(x)
		var known byte
		for j, f := range figs {
			if f != nil {
				known |= 1 << j
			}
		}
		b = append(b, known)
		for _, f := range figs {
			if f != nil {
				b = binary.AppendVarint(b, *f)
			}
		}
	}
	return b
}

var errLastKnown = errors.New("snapshot is damaged")

func decodeLastKnown(b []byte, atMs int64) ([]PartitionSample, error) {
	if len(b) == 0 || b[0] != lastKnownVersion {
		return nil, fmt.Errorf("snapshot version %v: %w", b[:min(len(b), 1)], errLastKnown)
	}
	b = b[1:]
	uv := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	sv := func() (int64, bool) {
		v, n := binary.Varint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	nt, ok := uv()
	if !ok || nt > uint64(len(b)) {
		return nil, errLastKnown
	}
	topics := make([]string, nt)
	for i := range topics {
		l, ok := uv()
		if !ok || l > uint64(len(b)) {
			return nil, errLastKnown
		}
		topics[i], b = string(b[:l]), b[l:]
	}
	np, ok := uv()
	if !ok || np > uint64(len(b))/3 { // a partition takes 3 bytes at least
		return nil, errLastKnown
	}
	out := make([]PartitionSample, np)
	// One array backs every figure (five a partition at most): a pointer
	// allocated per figure was five million objects at a million partitions.
	vals := make([]int64, 0, 5*np)
	for i := range out {
		ti, ok1 := uv()
		p, ok2 := sv()
		if !ok1 || !ok2 || ti >= nt || len(b) == 0 {
			return nil, errLastKnown
		}
		known := b[0]
		b = b[1:]
		var figs [5]*int64
		for j := range figs {
			if known&(1<<j) == 0 {
				continue
			}
			v, ok := sv()
			if !ok {
				return nil, errLastKnown
			}
			vals = append(vals, v)
			figs[j] = &vals[len(vals)-1]
		}
		out[i] = PartitionSample{Topic: topics[ti], Partition: int32(p), AtMs: atMs,
			SourceEnd: figs[0], Replicated: figs[1], LagMessages: figs[2], LagMs: figs[3], LagMsAtLeast: figs[4]}
	}
	if len(b) != 0 {
		return nil, errLastKnown
	}
	return out, nil
}
