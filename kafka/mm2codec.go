package kafka

// Codecs for MirrorMaker 2's internal records, byte-compatible with
// org.apache.kafka.connect.mirror.{OffsetSync,Checkpoint,Heartbeat}.
//
// MM2 serialises them with Kafka's protocol Schema types: fields in declared
// order, no tags, big-endian integers, STRING = INT16 length + UTF-8 bytes.
// Readers parse only the declared fields and ignore trailing bytes, as Java
// does. Checkpoint and Heartbeat values start with an INT16 version; Java
// only asserts version 0 under -ea, so we reject anything else explicitly.

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// OffsetSync pairs an upstream (source) offset with the offset of the same
// record downstream (target), for one source topic-partition. Topic is the
// upstream name, never renamed.
type OffsetSync struct {
	Topic      string
	Partition  int32
	Upstream   int64
	Downstream int64
}

// Checkpoint is a consumer group's committed source offset and its
// translation. Topic is the target-side (renamed) topic.
type Checkpoint struct {
	Group      string
	Topic      string
	Partition  int32
	Upstream   int64
	Downstream int64
	Metadata   string
}

// Heartbeat is emitted by MirrorHeartbeatConnector about once a second.
// Timestamp is epoch milliseconds at emission.
type Heartbeat struct {
	SourceAlias string
	TargetAlias string
	Timestamp   int64
}

// ErrShortRecord is wrapped by every decode error caused by missing bytes.
var ErrShortRecord = errors.New("record too short")

// ErrNotSourceOffset reports a Connect offsets entry that does not belong to
// a MirrorSourceConnector source partition (checkpoint or heartbeat
// connector entries, tombstones).
var ErrNotSourceOffset = errors.New("not a MirrorSourceConnector offset")

// EncodeKey returns the record key MM2 writes for s.
func (s OffsetSync) EncodeKey() []byte {
	b := appendString(nil, s.Topic)
	return binary.BigEndian.AppendUint32(b, uint32(s.Partition))
}

// EncodeValue returns the record value MM2 writes for s.
func (s OffsetSync) EncodeValue() []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 16), uint64(s.Upstream))
	return binary.BigEndian.AppendUint64(b, uint64(s.Downstream))
}

// DecodeOffsetSync parses a record of the mm2-offset-syncs topic.
func DecodeOffsetSync(key, value []byte) (OffsetSync, error) {
	var s OffsetSync
	k := reader{b: key}
	s.Topic = k.string()
	s.Partition = k.int32()
	v := reader{b: value}
	s.Upstream = v.int64()
	s.Downstream = v.int64()
	if err := firstErr(k.err, v.err); err != nil {
		return OffsetSync{}, fmt.Errorf("offset sync: %w", err)
	}
	return s, nil
}

// EncodeKey returns the record key MM2 writes for c.
func (c Checkpoint) EncodeKey() []byte {
	b := appendString(nil, c.Group)
	b = appendString(b, c.Topic)
	return binary.BigEndian.AppendUint32(b, uint32(c.Partition))
}

// EncodeValue returns the record value (version 0) MM2 writes for c.
func (c Checkpoint) EncodeValue() []byte {
	b := binary.BigEndian.AppendUint16(nil, 0)
	b = binary.BigEndian.AppendUint64(b, uint64(c.Upstream))
	b = binary.BigEndian.AppendUint64(b, uint64(c.Downstream))
	return appendString(b, c.Metadata)
}

// DecodeCheckpoint parses a record of the <source>.checkpoints.internal topic.
func DecodeCheckpoint(key, value []byte) (Checkpoint, error) {
	var c Checkpoint
	k := reader{b: key}
	c.Group = k.string()
	c.Topic = k.string()
	c.Partition = k.int32()
	v := reader{b: value}
	version := v.version()
	c.Upstream = v.int64()
	c.Downstream = v.int64()
	c.Metadata = v.string()
	if err := firstErr(k.err, v.err); err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint: %w", err)
	}
	if version != 0 {
		return Checkpoint{}, fmt.Errorf("checkpoint: unsupported value version %d (only 0 exists)", version)
	}
	return c, nil
}

// EncodeKey returns the record key MM2 writes for h.
func (h Heartbeat) EncodeKey() []byte {
	return appendString(appendString(nil, h.SourceAlias), h.TargetAlias)
}

// EncodeValue returns the record value (version 0) MM2 writes for h.
func (h Heartbeat) EncodeValue() []byte {
	b := binary.BigEndian.AppendUint16(make([]byte, 0, 10), 0)
	return binary.BigEndian.AppendUint64(b, uint64(h.Timestamp))
}

// DecodeHeartbeat parses a record of a heartbeats topic.
func DecodeHeartbeat(key, value []byte) (Heartbeat, error) {
	var h Heartbeat
	k := reader{b: key}
	h.SourceAlias = k.string()
	h.TargetAlias = k.string()
	v := reader{b: value}
	version := v.version()
	h.Timestamp = v.int64()
	if err := firstErr(k.err, v.err); err != nil {
		return Heartbeat{}, fmt.Errorf("heartbeat: %w", err)
	}
	if version != 0 {
		return Heartbeat{}, fmt.Errorf("heartbeat: unsupported value version %d (only 0 exists)", version)
	}
	return h, nil
}

// ConnectOffset is MirrorSourceConnector's committed position for one source
// partition, as Connect stores it in its offsets topic
// (mm2-offsets.<source>.internal in dedicated mode). Offset is the last
// replicated upstream offset: replication resumes at Offset+1.
type ConnectOffset struct {
	Connector string
	Cluster   string
	Topic     string
	Partition int32
	Offset    int64
}

// connectSourcePartition is the source-partition map MirrorSourceConnector
// uses (MirrorUtils.wrapPartition). Key order in the JSON is not fixed.
type connectSourcePartition struct {
	Cluster   *string `json:"cluster"`
	Topic     *string `json:"topic"`
	Partition *int64  `json:"partition"`
}

// EncodeKey returns the Connect offsets key JSON for o:
// ["<connector>",{"cluster":..,"partition":..,"topic":..}].
func (o ConnectOffset) EncodeKey() []byte {
	p := map[string]any{"cluster": o.Cluster, "topic": o.Topic, "partition": o.Partition}
	b, _ := json.Marshal([]any{o.Connector, p}) // cannot fail: plain strings and ints
	return b
}

// EncodeValue returns the Connect offsets value JSON for o: {"offset":N}.
func (o ConnectOffset) EncodeValue() []byte {
	b, _ := json.Marshal(map[string]int64{"offset": o.Offset})
	return b
}

// DecodeConnectOffset parses one record of a Connect offsets topic (JSON
// converter, schemas disabled). Entries of other connectors or shapes, and
// tombstones, return ErrNotSourceOffset.
func DecodeConnectOffset(key, value []byte) (ConnectOffset, error) {
	var parts []json.RawMessage
	if err := json.Unmarshal(key, &parts); err != nil {
		return ConnectOffset{}, fmt.Errorf("connect offset key: %w", err)
	}
	if len(parts) != 2 {
		return ConnectOffset{}, fmt.Errorf("connect offset key: want [connector, partition], got %d elements", len(parts))
	}
	var o ConnectOffset
	if err := json.Unmarshal(parts[0], &o.Connector); err != nil {
		return ConnectOffset{}, fmt.Errorf("connect offset key: connector name: %w", err)
	}
	var sp connectSourcePartition
	if err := json.Unmarshal(parts[1], &sp); err != nil {
		return ConnectOffset{}, fmt.Errorf("connect offset key: source partition: %w", err)
	}
	if sp.Cluster == nil || sp.Topic == nil || sp.Partition == nil || value == nil {
		return ConnectOffset{}, ErrNotSourceOffset
	}
	if *sp.Partition < 0 || *sp.Partition > math.MaxInt32 {
		return ConnectOffset{}, fmt.Errorf("connect offset key: partition %d out of range", *sp.Partition)
	}
	o.Cluster, o.Topic, o.Partition = *sp.Cluster, *sp.Topic, int32(*sp.Partition)
	var v struct {
		Offset *int64 `json:"offset"`
	}
	if err := json.Unmarshal(value, &v); err != nil {
		return ConnectOffset{}, fmt.Errorf("connect offset value: %w", err)
	}
	if v.Offset == nil {
		return ConnectOffset{}, errors.New("connect offset value: no \"offset\" field")
	}
	o.Offset = *v.Offset
	return o, nil
}

func appendString(b []byte, s string) []byte {
	if len(s) > math.MaxInt16 {
		s = s[:math.MaxInt16] // Java refuses longer strings; MM2 never writes one
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// reader consumes big-endian protocol primitives; the first failure sticks
// and later reads return zero values.
type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if len(r.b) < n {
		r.err = fmt.Errorf("%w: need %d more bytes, have %d", ErrShortRecord, n, len(r.b))
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) int16() int16 {
	if b := r.take(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (r *reader) version() int16 { return r.int16() }

func (r *reader) int32() int32 {
	if b := r.take(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (r *reader) int64() int64 {
	if b := r.take(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

func (r *reader) string() string {
	n := r.int16()
	if r.err != nil {
		return ""
	}
	if n < 0 {
		r.err = fmt.Errorf("negative string length %d (STRING is not nullable)", n)
		return ""
	}
	return string(r.take(int(n)))
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
