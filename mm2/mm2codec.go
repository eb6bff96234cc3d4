package mm2

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

	"github.com/drconsole/drconsole/model"
)

// ErrShortRecord is wrapped by every decode error caused by missing bytes.
var ErrShortRecord = errors.New("record too short")

// ErrNotSourceOffset reports a Connect offsets entry that does not belong to
// a MirrorSourceConnector source partition (checkpoint or heartbeat
// connector entries, tombstones).
var ErrNotSourceOffset = errors.New("not a MirrorSourceConnector offset")

// Record is one of the records MM2 writes to its internal topics.
type Record interface {
	model.OffsetSync | model.Checkpoint | model.Heartbeat | model.ConnectOffset
}

// EncodeKey returns the record key MM2 writes for r.
func EncodeKey[R Record](r R) []byte {
	key, _ := encode(r)
	return key
}

// EncodeValue returns the record value MM2 writes for r.
func EncodeValue[R Record](r R) []byte {
	_, value := encode(r)
	return value
}

// encode dispatches on the record type; r is always one of Record's types.
func encode(r any) (key, value []byte) {
	switch r := r.(type) {
	case model.OffsetSync:
		return offsetSyncKey(r), offsetSyncValue(r)
	case model.Checkpoint:
		return checkpointKey(r), checkpointValue(r)
	case model.Heartbeat:
		return heartbeatKey(r), heartbeatValue(r)
	default:
		o := r.(model.ConnectOffset)
		return connectOffsetKey(o), connectOffsetValue(o)
	}
}

// offsetSyncKey returns the record key MM2 writes for s.
func offsetSyncKey(s model.OffsetSync) []byte {
	b := appendString(nil, s.Topic)
	return binary.BigEndian.AppendUint32(b, uint32(s.Partition))
}

// offsetSyncValue returns the record value MM2 writes for s.
func offsetSyncValue(s model.OffsetSync) []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 16), uint64(s.Upstream))
	return binary.BigEndian.AppendUint64(b, uint64(s.Downstream))
}

// DecodeOffsetSync parses a record of the mm2-offset-syncs topic.
func DecodeOffsetSync(key, value []byte) (model.OffsetSync, error) {
	var s model.OffsetSync
	k := reader{b: key}
	s.Topic = k.string()
	s.Partition = k.int32()
	v := reader{b: value}
	s.Upstream = v.int64()
	s.Downstream = v.int64()
	if err := firstErr(k.err, v.err); err != nil {
		return model.OffsetSync{}, fmt.Errorf("offset sync: %w", err)
	}
	return s, nil
}

// checkpointKey returns the record key MM2 writes for c.
func checkpointKey(c model.Checkpoint) []byte {
	b := appendString(nil, c.Group)
	b = appendString(b, c.Topic)
	return binary.BigEndian.AppendUint32(b, uint32(c.Partition))
}

// checkpointValue returns the record value (version 0) MM2 writes for c.
func checkpointValue(c model.Checkpoint) []byte {
	b := binary.BigEndian.AppendUint16(nil, 0)
	b = binary.BigEndian.AppendUint64(b, uint64(c.Upstream))
	b = binary.BigEndian.AppendUint64(b, uint64(c.Downstream))
	return appendString(b, c.Metadata)
}

// DecodeCheckpoint parses a record of the <source>.checkpoints.internal topic.
func DecodeCheckpoint(key, value []byte) (model.Checkpoint, error) {
	var c model.Checkpoint
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
		return model.Checkpoint{}, fmt.Errorf("checkpoint: %w", err)
	}
	if version != 0 {
		return model.Checkpoint{}, fmt.Errorf("checkpoint: unsupported value version %d (only 0 exists)", version)
	}
	return c, nil
}

// heartbeatKey returns the record key MM2 writes for h.
func heartbeatKey(h model.Heartbeat) []byte {
	return appendString(appendString(nil, h.SourceAlias), h.TargetAlias)
}

// heartbeatValue returns the record value (version 0) MM2 writes for h.
func heartbeatValue(h model.Heartbeat) []byte {
	b := binary.BigEndian.AppendUint16(make([]byte, 0, 10), 0)
	return binary.BigEndian.AppendUint64(b, uint64(h.EmittedMs))
}

// DecodeHeartbeat parses a record of a heartbeats topic.
func DecodeHeartbeat(key, value []byte) (model.Heartbeat, error) {
	var h model.Heartbeat
	k := reader{b: key}
	h.SourceAlias = k.string()
	h.TargetAlias = k.string()
	v := reader{b: value}
	version := v.version()
	h.EmittedMs = v.int64()
	if err := firstErr(k.err, v.err); err != nil {
		return model.Heartbeat{}, fmt.Errorf("heartbeat: %w", err)
	}
	if version != 0 {
		return model.Heartbeat{}, fmt.Errorf("heartbeat: unsupported value version %d (only 0 exists)", version)
	}
	return h, nil
}

// connectSourcePartition is the source-partition map MirrorSourceConnector
// uses (MirrorUtils.wrapPartition). Key order in the JSON is not fixed.
type connectSourcePartition struct {
	Cluster   *string `json:"cluster"`
	Topic     *string `json:"topic"`
	Partition *int64  `json:"partition"`
}

// connectOffsetKey returns the Connect offsets key JSON for o:
// ["<connector>",{"cluster":..,"partition":..,"topic":..}].
func connectOffsetKey(o model.ConnectOffset) []byte {
	b, _ := json.Marshal([]any{o.Connector, connectPartition(o)}) // cannot fail: plain strings and ints
	return b
}

// connectPartition is o's source partition as MirrorUtils.wrapPartition
// writes it.
func connectPartition(o model.ConnectOffset) map[string]any {
	return map[string]any{"cluster": o.Cluster, "topic": o.Topic, "partition": o.Partition}
}

// connectOffsetValue returns the Connect offsets value JSON for o: {"offset":N}.
func connectOffsetValue(o model.ConnectOffset) []byte {
	b, _ := json.Marshal(map[string]int64{"offset": o.LastOffset})
	return b
}

// DecodeConnectOffset parses one record of a Connect offsets topic (JSON
// converter, schemas disabled). Entries of other connectors or shapes, and
// tombstones, return ErrNotSourceOffset.
func DecodeConnectOffset(key, value []byte) (model.ConnectOffset, error) {
	var parts []json.RawMessage
	if err := json.Unmarshal(key, &parts); err != nil {
		return model.ConnectOffset{}, fmt.Errorf("connect offset key: %w", err)
	}
	if len(parts) != 2 {
		return model.ConnectOffset{}, fmt.Errorf("connect offset key: want [connector, partition], got %d elements", len(parts))
	}
	var o model.ConnectOffset
	if err := json.Unmarshal(parts[0], &o.Connector); err != nil {
		return model.ConnectOffset{}, fmt.Errorf("connect offset key: connector name: %w", err)
	}
	var sp connectSourcePartition
	if err := json.Unmarshal(parts[1], &sp); err != nil {
		return model.ConnectOffset{}, fmt.Errorf("connect offset key: source partition: %w", err)
	}
	if sp.Cluster == nil || sp.Topic == nil || sp.Partition == nil || value == nil {
		return model.ConnectOffset{}, ErrNotSourceOffset
	}
	if *sp.Partition < 0 || *sp.Partition > math.MaxInt32 {
		return model.ConnectOffset{}, fmt.Errorf("connect offset key: partition %d out of range", *sp.Partition)
	}
	o.Cluster, o.Topic, o.Partition = *sp.Cluster, *sp.Topic, int32(*sp.Partition)
	var v struct {
		Offset *int64 `json:"offset"`
	}
	if err := json.Unmarshal(value, &v); err != nil {
		return model.ConnectOffset{}, fmt.Errorf("connect offset value: %w", err)
	}
	if v.Offset == nil {
		return model.ConnectOffset{}, errors.New("connect offset value: no \"offset\" field")
	}
	o.LastOffset = *v.Offset
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
