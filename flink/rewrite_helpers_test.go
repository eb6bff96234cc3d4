package flink

import (
	"fmt"
	"testing"
)

// readerStream builds a SourceReaderState stream: the real backend header
// of a fixture's subtask 0 (everything before its first element), then one
// element per split, then extra raw bytes (elements of other states).
// It returns the stream and the offsets of the split elements.
func readerStream(t testing.TB, rs realSource, splits []PartitionOffset, extra []byte) ([]byte, []int64) {
	t.Helper()
	sub := rs.subtasks[0]
	data := append([]byte(nil), sub.data[:sub.offsets[0]]...)
	var offsets []int64
	for _, p := range splits {
		offsets = append(offsets, int64(len(data)))
		split, err := encodeKafkaSplit(p.Topic, p.Partition, p.Next, rawStopping(p))
		if err != nil {
			t.Fatal(err)
		}
		data = appendI32(data, int32(8+len(split)))
		data = appendI32(appendI32(data, 0), int32(len(split)))
		data = append(data, split...)
	}
	return append(data, extra...), offsets
}

// enumV3 encodes a connector 5.x enumerator state holding the splits, all
// assigned, with the committed marker as their offset.
func enumV3(t testing.TB, splits []PartitionOffset) []byte {
	t.Helper()
	f := byte(1)
	l := &enumLayout{coordVersion: 1, enumVersion: 3, finished: &f}
	for _, p := range splits {
		l.splits = append(l.splits, enumEntry{topic: p.Topic, partition: p.Partition, start: OffsetCommitted, stop: NoStoppingOffset})
	}
	b, err := l.encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// manySplits is n splits of topic "events", next offsets 1000+i.
func manySplits(n int) []PartitionOffset {
	out := make([]PartitionOffset, n)
	for i := range out {
		out[i] = PartitionOffset{Topic: "events", Partition: int32(i), Next: 1000 + int64(i)}
	}
	return out
}

// bigSavepoint writes a V6 savepoint in dir whose Kafka source has n
// splits over two subtasks (inline state), a keyed operator and the
// coordinator state; it returns the targets renaming events to
// primary.events with offsets +1.
func bigSavepoint(t testing.TB, dir string, n int) map[string]SplitTarget {
	t.Helper()
	rs := realSourceState(t, "flink-2.2.1-p2-events4-stop")
	splits := manySplits(n)
	var subs []synthSub
	for i, part := range [][]PartitionOffset{splits[:n/2], splits[n/2:]} {
		data, offs := readerStream(t, rs, part, nil)
		subs = append(subs, synthSub{idx: int32(i), states: []synthState{{SourceReaderStateName, 0, offs}},
			delegate: inlineHandle(fmt.Sprintf("file:/tmp/sp/%d", i), data)})
	}
	ops := []synthOp{
		{name: "count-per-key", uid: "count-per-key", id: OperatorIDFromUID("count-per-key"), par: 1, maxPar: 128,
			subs: []synthSub{{idx: 0, keyed: keyedKinds["key-groups(3)"]}}},
		{name: "Source: kafka-source", uid: "kafka-source", id: OperatorIDFromUID("kafka-source"), par: 2, maxPar: 128, coord: enumV3(t, splits), subs: subs},
	}
	writeTestFile(t, dir, MetadataFileName, encodeMetadata(6, 7, ops))
	targets := map[string]SplitTarget{}
	for _, p := range splits {
		targets[p.Key()] = SplitTarget{Topic: "primary.events", Offset: p.Next + 1, Why: "translated"}
	}
	return targets
}
