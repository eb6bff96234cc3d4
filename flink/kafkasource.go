package flink

// Kafka source positions in a savepoint.
//
// KafkaSource (FLIP-27): SourceOperator keeps the list state
// "SourceReaderState" (SPLIT_DISTRIBUTE, BytePrimitiveArraySerializer), each
// element `int32 len; bytes`, the bytes being
// SimpleVersionedSerialization.writeVersionAndSerialize(KafkaPartitionSplitSerializer, split)
// = `int32 serializerVersion; int32 len; split`, and a split of serializer
// version 0 is `UTF topic; int32 partition; int64 startingOffset;
// int64 stoppingOffset`. startingOffset is the NEXT offset to read.
//
// The enumerator state (operator coordinator state) is decoded for
// information only: in connector 5.0 it holds the INITIAL split offsets (-3
// = committed marker), never positions.
//
// Legacy FlinkKafkaConsumer (removed in connector 4.0 / Flink 2.0): union
// list state "topic-partition-offset-states", elements
// Tuple2<KafkaTopicPartition (Kryo), Long lastProcessedOffset>.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

const (
	// SourceReaderStateName is the FLIP-27 SourceOperator's reader state.
	SourceReaderStateName = "SourceReaderState"
	// LegacyKafkaStateName is FlinkKafkaConsumerBase's union state.
	LegacyKafkaStateName = "topic-partition-offset-states"
)

// KafkaPartitionSplit offset markers.
const (
	OffsetLatest     = -1
	OffsetEarliest   = -2
	OffsetCommitted  = -3
	NoStoppingOffset = math.MinInt64 // also MIGRATED in enumerator state
)

// Legacy FlinkKafkaConsumer sentinels (KafkaTopicPartitionStateSentinel).
const (
	legacyNotSet    = -915623761776
	legacyEarliest  = -915623761775
	legacyLatest    = -915623761774
	legacyGroupOffs = -915623761773
)

// Errors wrapped by KafkaSourceOffsets, for callers that classify them.
var (
	ErrOperatorNotFound = errors.New("operator not found")
	ErrNoKafkaSource    = errors.New("no Kafka source state")
	ErrAmbiguousSource  = errors.New("several source operators")
)

// Source kinds of KafkaOffsets.Source.
const (
	SourceKafkaSource        = "KafkaSource"
	SourceFlinkKafkaConsumer = "FlinkKafkaConsumer"
)

// KafkaOffsets are the positions of one Kafka source operator.
type KafkaOffsets struct {
	CheckpointID int64
	OperatorID   string
	UID, Name    string // from _metadata (V5+); UID is the selector when older
	Source       string // SourceKafkaSource or SourceFlinkKafkaConsumer
	// Partitions by "topic-partition".
	Partitions map[string]PartitionOffset
	// Enumerator is the decoded enumerator state, informational: NOT
	// positions. EnumeratorErr says why it could not be decoded.
	Enumerator    *EnumeratorState
	EnumeratorErr string
}

// PartitionOffset is one partition's position.
type PartitionOffset struct {
	Topic     string
	Partition int32
	// Next is the next offset to read. Negative values are markers, kept
	// as they are, and named by Marker.
	Next   int64
	Marker string // "", "earliest", "committed", "latest", ...
	// Stopping is the split's stopping offset; nil when none
	// (Long.MIN_VALUE). StoppingMarker names a negative one.
	Stopping       *int64
	StoppingMarker string
	Subtask        int // the reader subtask holding it
}

// Key is "topic-partition".
func (p PartitionOffset) Key() string { return p.Topic + "-" + strconv.Itoa(int(p.Partition)) }

// Sorted returns the partitions ordered by topic, then partition number.
func (k *KafkaOffsets) Sorted() []PartitionOffset {
	out := make([]PartitionOffset, 0, len(k.Partitions))
	for _, p := range k.Partitions {
		out = append(out, p)
	}
	sortPartitions(out)
	return out
}

func sortPartitions(ps []PartitionOffset) {
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].Topic != ps[j].Topic {
			return ps[i].Topic < ps[j].Topic
		}
		return ps[i].Partition < ps[j].Partition
	})
}

func startMarker(v int64) string {
	switch v {
	case OffsetLatest:
		return "latest"
	case OffsetEarliest:
		return "earliest"
	case OffsetCommitted:
		return "committed"
	case NoStoppingOffset:
		return "migrated"
	}
	if v < 0 {
		return fmt.Sprintf("unknown marker %d", v)
	}
	return ""
}

func stopMarker(v int64) string {
	switch v {
	case OffsetLatest:
		return "latest"
	case OffsetCommitted:
		return "committed"
	}
	if v < 0 {
		return fmt.Sprintf("unknown marker %d", v)
	}
	return ""
}

func isHexID(s string) bool {
	if len(s) != 32 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func (o *OperatorState) isKafkaCandidate() bool {
	return o.HasState(SourceReaderStateName) || o.HasState(LegacyKafkaStateName)
}

func listOperators(ops []*OperatorState) string {
	var b strings.Builder
	for i, o := range ops {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(o.Label())
	}
	return b.String()
}

// FindSourceOperator selects the Kafka source operator: by exact 32-hex
// operator id, by uid (the V5+ uid field, or the id derived from the uid
// for older files), or, with an empty selector, the only operator holding
// source reader state.
func (s *Savepoint) FindSourceOperator(selector string) (*OperatorState, error) {
	all := make([]*OperatorState, len(s.Operators))
	for i := range s.Operators {
		all[i] = &s.Operators[i]
	}
	if selector == "" {
		var cands []*OperatorState
		for _, o := range all {
			if o.isKafkaCandidate() {
				cands = append(cands, o)
			}
		}
		switch len(cands) {
		case 1:
			return cands[0], nil
		case 0:
			return nil, fmt.Errorf("flink: %w: no operator has %s or %s state (operators: %s)", ErrNoKafkaSource, SourceReaderStateName, LegacyKafkaStateName, listOperators(all))
		}
		return nil, fmt.Errorf("flink: %w hold source reader state, choose one by uid or id: %s", ErrAmbiguousSource, listOperators(cands))
	}
	var found *OperatorState
	if isHexID(selector) {
		id := strings.ToLower(selector)
		for _, o := range all {
			if o.ID == id {
				found = o
			}
		}
	}
	if found == nil {
		hashed := OperatorIDFromUID(selector)
		for _, o := range all {
			if o.UID == selector || o.ID == hashed {
				found = o
				break
			}
		}
	}
	if found == nil {
		return nil, fmt.Errorf("flink: %w: no operator has uid or id %q (operator id from that uid would be %s); operators: %s", ErrOperatorNotFound, selector, OperatorIDFromUID(selector), listOperators(all))
	}
	if !found.isKafkaCandidate() {
		names := found.StateNames()
		what := "no operator state"
		if len(names) > 0 {
			what = "operator states " + strings.Join(names, ", ")
		}
		return nil, fmt.Errorf("flink: %w: operator %s has %s, not %s", ErrNoKafkaSource, found.Label(), what, SourceReaderStateName)
	}
	return found, nil
}

// KafkaSourceOffsets returns the positions of the Kafka source selected by
// uid (see FindSourceOperator; "" = automatic).
func (s *Savepoint) KafkaSourceOffsets(uid string) (*KafkaOffsets, error) {
	op, err := s.FindSourceOperator(uid)
	if err != nil {
		return nil, err
	}
	out := &KafkaOffsets{
		CheckpointID: s.CheckpointID,
		OperatorID:   op.ID,
		UID:          op.UID,
		Name:         op.Name,
		Partitions:   map[string]PartitionOffset{},
	}
	if out.UID == "" && uid != "" && !isHexID(uid) {
		out.UID = uid
	}
	subtasks := slices.Clone(op.Subtasks)
	sort.Slice(subtasks, func(i, j int) bool { return subtasks[i].Index < subtasks[j].Index })
	add := func(p PartitionOffset) error {
		if prev, dup := out.Partitions[p.Key()]; dup {
			return fmt.Errorf("flink: operator %s: partition %s appears in subtask %d and %d", op.Label(), p.Key(), prev.Subtask, p.Subtask)
		}
		out.Partitions[p.Key()] = p
		return nil
	}
	for i := range subtasks {
		st := &subtasks[i]
		h := st.ManagedOperator
		if h == nil {
			continue
		}
		if ns := h.State(SourceReaderStateName); ns != nil {
			out.Source = SourceKafkaSource
			data, err := s.HandleBytes(h.Delegate)
			if err != nil {
				return nil, fmt.Errorf("flink: operator %s subtask %d: %w", op.Label(), st.Index, err)
			}
			where := fmt.Sprintf("%s of operator %s subtask %d", SourceReaderStateName, op.ID, st.Index)
			for _, off := range ns.Offsets {
				p, err := decodeReaderElement(data, off, where)
				if err != nil {
					return nil, err
				}
				p.Subtask = st.Index
				if err := add(p); err != nil {
					return nil, err
				}
			}
		}
		if ns := h.State(LegacyKafkaStateName); ns != nil {
			if out.Source == "" {
				out.Source = SourceFlinkKafkaConsumer
			}
			data, err := s.HandleBytes(h.Delegate)
			if err != nil {
				return nil, fmt.Errorf("flink: operator %s subtask %d: %w", op.Label(), st.Index, err)
			}
			where := fmt.Sprintf("%s of operator %s subtask %d", LegacyKafkaStateName, op.ID, st.Index)
			ends := elementEnds(h, len(data))
			for _, off := range ns.Offsets {
				p, err := decodeLegacyElement(data, off, ends, where)
				if err != nil {
					return nil, err
				}
				p.Subtask = st.Index
				if prev, dup := out.Partitions[p.Key()]; dup && prev.Next == p.Next && prev.Marker == p.Marker {
					continue // a union state may repeat an entry
				}
				if err := add(p); err != nil {
					return nil, err
				}
			}
		}
	}
	if op.Coordinator != nil && out.Source == SourceKafkaSource {
		enum, err := DecodeKafkaEnumerator(op.Coordinator.Data)
		if err != nil {
			out.EnumeratorErr = err.Error()
		} else {
			out.Enumerator = enum
		}
	}
	return out, nil
}

// decodeReaderElement decodes the SourceReaderState element at off.
func decodeReaderElement(data []byte, off int64, where string) (PartitionOffset, error) {
	p, _, err := readerElement(data, off, where)
	return p, err
}

// readerElement decodes the SourceReaderState element at off and returns
// where it ends: `int32 len; int32 serializerVersion; int32 len; split`.
func readerElement(data []byte, off int64, where string) (PartitionOffset, int, error) {
	p, err := readerElementAt(data, off, where)
	if err != nil {
		return p, 0, err
	}
	return p, int(off) + 4 + int(int32(binary.BigEndian.Uint32(data[off:]))), nil
}

func readerElementAt(data []byte, off int64, where string) (PartitionOffset, error) {
	r := newBinReader(data, where)
	if off < 0 || off >= int64(len(data)) {
		return PartitionOffset{}, r.failAt(0, "element offset %s outside the %d-byte state", fileInt(off), len(data))
	}
	r.pos = int(off)
	elem, err := r.lenBytes("reader state element")
	if err != nil {
		return PartitionOffset{}, err
	}
	base := int(off) + 4
	er := newBinReader(elem, where)
	ver, err := er.i32("split serializer version")
	if err != nil {
		return PartitionOffset{}, rebase(err, base)
	}
	split, err := er.lenBytes("split")
	if err != nil {
		return PartitionOffset{}, rebase(err, base)
	}
	if er.remaining() != 0 {
		return PartitionOffset{}, r.failAt(base+er.pos, "%d trailing bytes after the split", er.remaining())
	}
	p, err := decodeKafkaSplit(ver, split, where)
	if err != nil {
		return PartitionOffset{}, rebase(err, base+8)
	}
	return p, nil
}

// rebase shifts a FormatError's position from a sub-slice to its parent.
func rebase(err error, base int) error {
	var fe *FormatError
	if errors.As(err, &fe) {
		c := *fe
		c.Pos += base
		return &c
	}
	return err
}

// decodeKafkaSplit decodes KafkaPartitionSplitSerializer bytes.
func decodeKafkaSplit(version int32, b []byte, where string) (PartitionOffset, error) {
	r := newBinReader(b, where)
	if version != 0 {
		return PartitionOffset{}, r.failAt(0, "KafkaPartitionSplit serializer version %s is not supported (know 0): not a Kafka source, or a newer connector", fileInt(int64(version)))
	}
	var p PartitionOffset
	var err error
	if p.Topic, err = r.utf("split topic"); err != nil {
		return p, err
	}
	if p.Topic == "" {
		return p, r.failAt(0, "empty topic in split")
	}
	if p.Partition, err = r.i32("split partition"); err != nil {
		return p, err
	}
	if p.Partition < 0 {
		return p, r.failAt(r.pos-4, "negative partition %s in split", fileInt(int64(p.Partition)))
	}
	if p.Next, err = r.i64("split starting offset"); err != nil {
		return p, err
	}
	stop, err := r.i64("split stopping offset")
	if err != nil {
		return p, err
	}
	if r.remaining() != 0 {
		return p, r.failAt(r.pos, "%d trailing bytes after the split: not a KafkaPartitionSplit", r.remaining())
	}
	p.Marker = startMarker(p.Next)
	if stop != NoStoppingOffset {
		p.Stopping = &stop
		p.StoppingMarker = stopMarker(stop)
	}
	return p, nil
}

// EnumeratorState is the KafkaSource enumerator (coordinator) state.
// Informational: its offsets are the initial ones, not positions.
type EnumeratorState struct {
	CoordinatorSerdeVersion int
	SerializerVersion       int // KafkaSourceEnumStateSerializer version (1-3)
	Splits                  []EnumSplit
	// InitialDiscoveryFinished is nil for v1 (not stored).
	InitialDiscoveryFinished *bool
}

// EnumSplit is one partition known to the enumerator.
type EnumSplit struct {
	Topic     string
	Partition int32
	// Offset is the split's starting offset (v3 only), usually a marker.
	Offset *int64
	Marker string
	Status string // "assigned" / "unassigned"
}

// DecodeKafkaEnumerator decodes SourceCoordinator checkpoint bytes holding a
// KafkaSourceEnumStateSerializer state.
func DecodeKafkaEnumerator(b []byte) (*EnumeratorState, error) {
	l, err := parseEnumLayout(b)
	if err != nil {
		return nil, err
	}
	st := &EnumeratorState{CoordinatorSerdeVersion: int(l.coordVersion), SerializerVersion: int(l.enumVersion)}
	if l.finished != nil {
		v := *l.finished != 0
		st.InitialDiscoveryFinished = &v
	}
	for _, e := range l.splits {
		sp := EnumSplit{Topic: e.topic, Partition: e.partition, Status: "assigned"}
		if l.enumVersion >= 2 && e.status == 1 {
			sp.Status = "unassigned"
		}
		if l.enumVersion == 3 {
			off := e.start
			sp.Offset, sp.Marker = &off, startMarker(e.start)
		}
		st.Splits = append(st.Splits, sp)
	}
	return st, nil
}

// enumLayout is the coordinator state of a KafkaSource as written, every
// field kept so that encode gives the same bytes back (the rewriter edits
// topics and offsets in it):
//
//	int32 coordinatorSerdeVersion (1); int32 enumSerializerVersion;
//	int32 len; enum bytes
//
// enum v1: int32 n; n x (UTF topic; int32 partition)
// enum v2: int32 n; n x (UTF topic; int32 partition; int32 status); bool
// enum v3: int32 n; int32 splitSerializerVersion;
//
//	n x (int32 len; KafkaPartitionSplit; int32 status); bool
type enumLayout struct {
	coordVersion, enumVersion int32
	splitVersion              int32 // v3
	splits                    []enumEntry
	finished                  *byte // initialDiscoveryFinished as written (v2, v3)
}

type enumEntry struct {
	topic       string
	partition   int32
	start, stop int64 // v3: the split's offsets as written
	status      int32 // v2, v3: 0 assigned, 1 unassigned
}

func parseEnumLayout(b []byte) (*enumLayout, error) {
	r := newBinReader(b, "coordinator state")
	cv, err := r.i32("coordinator serde version")
	if err != nil {
		return nil, err
	}
	if cv != 1 {
		return nil, fmt.Errorf("flink: source coordinator serde version %s is not decoded (know 1)", fileInt(int64(cv)))
	}
	ev, err := r.i32("enumerator serializer version")
	if err != nil {
		return nil, err
	}
	enum, err := r.lenBytes("enumerator state")
	if err != nil {
		return nil, err
	}
	if r.remaining() != 0 {
		return nil, r.failAt(r.pos, "%d trailing bytes after the enumerator state", r.remaining())
	}
	l := &enumLayout{coordVersion: cv, enumVersion: ev}
	er := newBinReader(enum, "enumerator state")
	status := func() (int32, error) {
		at := er.pos
		s, err := er.i32("assignment status")
		if err != nil {
			return 0, err
		}
		if s != 0 && s != 1 {
			return 0, er.failAt(at, "unknown assignment status %s", fileInt(int64(s)))
		}
		return s, nil
	}
	switch ev {
	case 1, 2:
		n, err := er.count("partition count", 6)
		if err != nil {
			return nil, err
		}
		for range n {
			var e enumEntry
			if e.topic, err = er.utf("topic"); err != nil {
				return nil, err
			}
			if e.partition, err = er.i32("partition"); err != nil {
				return nil, err
			}
			if ev == 2 {
				if e.status, err = status(); err != nil {
					return nil, err
				}
			}
			l.splits = append(l.splits, e)
		}
	case 3:
		n, err := er.count("split count", 8)
		if err != nil {
			return nil, err
		}
		if l.splitVersion, err = er.i32("split serializer version"); err != nil {
			return nil, err
		}
		for range n {
			at := er.pos
			raw, err := er.lenBytes("split")
			if err != nil {
				return nil, err
			}
			p, err := decodeKafkaSplit(l.splitVersion, raw, "enumerator split")
			if err != nil {
				return nil, rebase(err, at+4)
			}
			e := enumEntry{topic: p.Topic, partition: p.Partition, start: p.Next, stop: rawStopping(p)}
			if e.status, err = status(); err != nil {
				return nil, err
			}
			l.splits = append(l.splits, e)
		}
	default:
		return nil, fmt.Errorf("flink: KafkaSourceEnumStateSerializer version %s is not decoded (know 1-3)", fileInt(int64(ev)))
	}
	if ev >= 2 {
		f, err := er.u8("initialDiscoveryFinished")
		if err != nil {
			return nil, err
		}
		l.finished = &f
	}
	if er.remaining() != 0 {
		return nil, er.failAt(er.pos, "%d trailing bytes in the enumerator state", er.remaining())
	}
	return l, nil
}

// encode writes the layout back in the form parseEnumLayout reads.
func (l *enumLayout) encode() ([]byte, error) {
	var enum []byte
	switch l.enumVersion {
	case 1, 2:
		enum = appendI32(enum, int32(len(l.splits)))
		for _, e := range l.splits {
			var err error
			if enum, err = appendUTF(enum, e.topic); err != nil {
				return nil, err
			}
			enum = appendI32(enum, e.partition)
			if l.enumVersion == 2 {
				enum = appendI32(enum, e.status)
			}
		}
	case 3:
		enum = appendI32(appendI32(enum, int32(len(l.splits))), l.splitVersion)
		for _, e := range l.splits {
			split, err := encodeKafkaSplit(e.topic, e.partition, e.start, e.stop)
			if err != nil {
				return nil, err
			}
			enum = appendI32(enum, int32(len(split)))
			enum = append(enum, split...)
			enum = appendI32(enum, e.status)
		}
	default:
		return nil, fmt.Errorf("flink: KafkaSourceEnumStateSerializer version %s is not written (know 1-3)", fileInt(int64(l.enumVersion)))
	}
	if l.finished != nil {
		enum = append(enum, *l.finished)
	}
	out := appendI32(appendI32(nil, l.coordVersion), l.enumVersion)
	out = appendI32(out, int32(len(enum)))
	return append(out, enum...), nil
}

// rawStopping is a split's stopping offset as written.
func rawStopping(p PartitionOffset) int64 {
	if p.Stopping == nil {
		return NoStoppingOffset
	}
	return *p.Stopping
}

// encodeKafkaSplit writes a KafkaPartitionSplit in serializer version 0,
// the inverse of decodeKafkaSplit.
func encodeKafkaSplit(topic string, partition int32, start, stop int64) ([]byte, error) {
	b, err := appendUTF(make([]byte, 0, len(topic)+22), topic)
	if err != nil {
		return nil, err
	}
	return appendI64(appendI64(appendI32(b, partition), start), stop), nil
}

// elementEnds returns the sorted start offsets of every element of every
// state in the handle plus the stream end: an element ends where the next
// one starts (the operator state backend writes states' elements back to
// back after its header).
func elementEnds(h *OperatorStateHandle, size int) []int64 {
	var ends []int64
	for _, s := range h.States {
		ends = append(ends, s.Offsets...)
	}
	ends = append(ends, int64(size))
	slices.Sort(ends)
	return slices.Compact(ends)
}

// decodeLegacyElement decodes one FlinkKafkaConsumer union state element:
// Kryo(KafkaTopicPartition) followed by a big-endian int64, the last
// processed offset. Not verified against real bytes (Flink 2.x removed the
// consumer): the Kryo part is decoded under each plausible int encoding and
// accepted only when the stored cachedHash equals 31*topic.hashCode() +
// partition, as KafkaTopicPartition computes it.
func decodeLegacyElement(data []byte, off int64, ends []int64, where string) (PartitionOffset, error) {
	r := newBinReader(data, where)
	if off < 0 || off >= int64(len(data)) {
		return PartitionOffset{}, r.failAt(0, "element offset %s outside the %d-byte state", fileInt(off), len(data))
	}
	i, _ := slices.BinarySearch(ends, off+1)
	if i >= len(ends) {
		return PartitionOffset{}, r.failAt(int(off), "cannot find the end of the element")
	}
	end := ends[i]
	elem := data[off:end]
	if len(elem) < 8+3 {
		return PartitionOffset{}, r.failAt(int(off), "legacy Kafka state element of %d bytes is too short", len(elem))
	}
	kryo := elem[:len(elem)-8]
	last := newBinReader(elem[len(elem)-8:], where)
	v, _ := last.i64("offset")
	topic, partition, err := decodeKryoTopicPartition(kryo)
	if err != nil {
		return PartitionOffset{}, r.failAt(int(off), "legacy Kafka state element: %v", err)
	}
	p := PartitionOffset{Topic: topic, Partition: partition}
	switch v {
	case legacyNotSet:
		p.Next, p.Marker = v, "not set"
	case legacyEarliest:
		p.Next, p.Marker = v, "earliest"
	case legacyLatest:
		p.Next, p.Marker = v, "latest"
	case legacyGroupOffs:
		p.Next, p.Marker = v, "committed"
	default:
		if v < -1 || v == math.MaxInt64 {
			p.Next, p.Marker = v, fmt.Sprintf("unknown marker %d", v)
		} else {
			p.Next = v + 1 // last processed offset -> next to read
		}
	}
	return p, nil
}

type kryoInt int

const (
	kryoFixed     kryoInt = iota // Output.writeInt: 4 bytes big-endian
	kryoVarZigzag                // writeInt(v, false)
	kryoVarPos                   // writeInt(v, true)
)

func decodeKryoTopicPartition(b []byte) (string, int32, error) {
	var firstErr error
	for _, enc := range []kryoInt{kryoVarZigzag, kryoFixed, kryoVarPos} {
		topic, part, err := decodeKryoTPWith(b, enc)
		if err == nil {
			return topic, part, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return "", 0, firstErr
}

func decodeKryoTPWith(b []byte, enc kryoInt) (string, int32, error) {
	k := &kryoIn{b: b}
	// Class: writeClassAndObject -> varint(NAME+2 = 1) nameId [class name]
	// for an unregistered class, varint(id+2) for a registered one.
	c, err := k.varint(true)
	if err != nil {
		return "", 0, err
	}
	switch {
	case c == 0:
		return "", 0, errors.New("null KafkaTopicPartition")
	case c == 1:
		if _, err := k.varint(true); err != nil {
			return "", 0, err
		}
		name, null, err := k.str()
		if err != nil {
			return "", 0, err
		}
		if null || !strings.HasSuffix(name, "KafkaTopicPartition") {
			return "", 0, fmt.Errorf("class name (%d bytes) is not KafkaTopicPartition", len(name))
		}
	}
	// FieldSerializer: fields by name: cachedHash, partition, topic.
	hash, err := k.int32(enc)
	if err != nil {
		return "", 0, err
	}
	part, err := k.int32(enc)
	if err != nil {
		return "", 0, err
	}
	topic, null, err := k.str()
	if err != nil {
		return "", 0, err
	}
	if null || topic == "" {
		return "", 0, errors.New("empty topic")
	}
	if k.pos != len(b) {
		return "", 0, fmt.Errorf("%d unexpected bytes after the topic", len(b)-k.pos)
	}
	if part < 0 {
		return "", 0, fmt.Errorf("negative partition %s", fileInt(int64(part)))
	}
	if want := 31*javaStringHash(topic) + part; want != hash {
		return "", 0, errors.New("cachedHash does not match the topic and partition")
	}
	return topic, part, nil
}

type kryoIn struct {
	b   []byte
	pos int
}

var errKryoShort = errors.New("truncated Kryo data")

func (k *kryoIn) varint(positive bool) (int32, error) {
	var u uint32
	for i := range 5 {
		if k.pos >= len(k.b) {
			return 0, errKryoShort
		}
		c := k.b[k.pos]
		k.pos++
		u |= uint32(c&0x7F) << (7 * i)
		if c&0x80 == 0 {
			break
		}
		if i == 4 {
			return 0, errors.New("Kryo varint longer than 5 bytes")
		}
	}
	if positive {
		return int32(u), nil
	}
	return int32(u>>1) ^ -int32(u&1), nil
}

func (k *kryoIn) int32(enc kryoInt) (int32, error) {
	if enc == kryoFixed {
		if len(k.b)-k.pos < 4 {
			return 0, errKryoShort
		}
		v := int32(uint32(k.b[k.pos])<<24 | uint32(k.b[k.pos+1])<<16 | uint32(k.b[k.pos+2])<<8 | uint32(k.b[k.pos+3]))
		k.pos += 4
		return v, nil
	}
	return k.varint(enc == kryoVarPos)
}

// str reads Kryo's Output.writeString: ASCII with the high bit set on the
// last byte, or a UTF-8 length header (bit 7 set, bit 6 = more) holding
// charCount+1 (0 = null), then the chars.
func (k *kryoIn) str() (string, bool, error) {
	if k.pos >= len(k.b) {
		return "", false, errKryoShort
	}
	c := k.b[k.pos]
	if c&0x80 == 0 {
		start := k.pos
		for k.pos < len(k.b) {
			if k.b[k.pos]&0x80 != 0 {
				s := make([]byte, k.pos-start+1)
				copy(s, k.b[start:k.pos+1])
				s[len(s)-1] &= 0x7F
				k.pos++
				return string(s), false, nil
			}
			k.pos++
		}
		return "", false, errKryoShort
	}
	k.pos++
	n := int(c & 0x3F)
	if c&0x40 != 0 {
		shift := 6
		for {
			if k.pos >= len(k.b) {
				return "", false, errKryoShort
			}
			d := k.b[k.pos]
			k.pos++
			n |= int(d&0x7F) << shift
			shift += 7
			if d&0x80 == 0 {
				break
			}
			if shift > 27 {
				return "", false, errors.New("Kryo string length too long")
			}
		}
	}
	if n == 0 {
		return "", true, nil
	}
	chars := n - 1
	if chars > len(k.b)-k.pos {
		return "", false, errKryoShort
	}
	// chars are UTF-16 units in 1-3 bytes each, as in modified UTF-8.
	start := k.pos
	for range chars {
		if k.pos >= len(k.b) {
			return "", false, errKryoShort
		}
		switch c := k.b[k.pos]; {
		case c < 0x80:
			k.pos++
		case c>>5 == 0x6:
			k.pos += 2
		case c>>4 == 0xE:
			k.pos += 3
		default:
			return "", false, errors.New("malformed Kryo UTF-8")
		}
	}
	if k.pos > len(k.b) {
		return "", false, errKryoShort
	}
	s, bad := decodeModifiedUTF8(k.b[start:k.pos])
	if bad >= 0 {
		return "", false, errors.New("malformed Kryo UTF-8")
	}
	return s, false, nil
}
