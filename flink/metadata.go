package flink

// The `_metadata` parser: Checkpoints.storeCheckpointMetadata writes
// int32 magic 0x4960672d, int32 version, then the body of
// MetadataV2V3SerializerBase as extended by MetadataV3..V7Serializer.

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
)

const (
	metadataMagic    = 0x4960672d
	masterStateMagic = int32(-0x3694e96a) // 0xc96b1696
	minVersion       = 3
	maxVersion       = 7
)

// UnsupportedVersionError is a `_metadata` version outside 3..7.
type UnsupportedVersionError struct{ Version int32 }

func (e *UnsupportedVersionError) Error() string {
	hint := ""
	if e.Version >= 1 && e.Version < minVersion {
		hint = " (written by Flink older than 1.11: restore it once on a newer Flink and take a new savepoint)"
	}
	return fmt.Sprintf("flink: _metadata version %s is not supported (know %d-%d)%s", fileInt(int64(e.Version)), minVersion, maxVersion, hint)
}

// DistributionMode is OperatorStateHandle.Mode.
type DistributionMode int

const (
	SplitDistribute DistributionMode = 0
	Union           DistributionMode = 1
	Broadcast       DistributionMode = 2
)

func (m DistributionMode) String() string {
	switch m {
	case SplitDistribute:
		return "SPLIT_DISTRIBUTE"
	case Union:
		return "UNION"
	case Broadcast:
		return "BROADCAST"
	}
	return fmt.Sprintf("mode(%d)", int(m))
}

// NamedOperatorState is one named list state inside an operator state
// handle: where each element starts in the delegate stream.
type NamedOperatorState struct {
	Name    string
	Mode    DistributionMode
	Offsets []int64
}

// OperatorStateHandle is an OperatorStreamStateHandle (type 4).
type OperatorStateHandle struct {
	States   []NamedOperatorState
	Delegate *StreamHandle
	// Pos and End delimit the handle (type code to delegate end) in
	// _metadata.
	Pos, End int
}

// State returns the named state, or nil.
func (h *OperatorStateHandle) State(name string) *NamedOperatorState {
	if h == nil {
		return nil
	}
	for i := range h.States {
		if h.States[i].Name == name {
			return &h.States[i]
		}
	}
	return nil
}

// SubtaskState is one subtask's state of an operator.
type SubtaskState struct {
	Index                  int
	Finished               bool // finished subtask: no state
	ManagedOperator        *OperatorStateHandle
	RawOperator            *OperatorStateHandle
	ManagedKeyed, RawKeyed *KeyedHandle
	InputChannels          int // channel state handles (unaligned checkpoints)
	ResultSubpartitions    int
	RefCheckpointID        *int64 // V7 regional checkpoints
}

// MasterState is a master hook's state (counted, not decoded).
type MasterState struct {
	Name    string
	Version int32
	Size    int
}

type metaParser struct {
	r       *binReader
	version int
	// fileHandles are the file and relative stream handles met anywhere
	// (operator, keyed and channel state), in file order.
	fileHandles []*StreamHandle
}

// parseMetadata parses a whole `_metadata` file.
func parseMetadata(b []byte) (*Savepoint, error) {
	p := &metaParser{r: newBinReader(b, "_metadata")}
	magic, err := p.r.i32("magic number")
	if err != nil {
		return nil, fmt.Errorf("flink: not a Flink _metadata file: %w", err)
	}
	if uint32(magic) != metadataMagic {
		return nil, fmt.Errorf("flink: not a Flink _metadata file: its first 4 bytes are not the magic number 4960672d")
	}
	v, err := p.r.i32("version")
	if err != nil {
		return nil, err
	}
	if v < minVersion || v > maxVersion {
		return nil, &UnsupportedVersionError{Version: v}
	}
	p.version = int(v)
	sp := &Savepoint{Version: p.version, raw: b}
	at := p.r.pos
	if sp.CheckpointID, err = p.r.i64("checkpoint id"); err != nil {
		return nil, err
	}
	if sp.CheckpointID < 0 {
		return nil, p.r.failAt(at, "invalid checkpoint id %s", fileInt(sp.CheckpointID))
	}
	nMaster, err := p.r.count("master state count", 8)
	if err != nil {
		return nil, err
	}
	for range nMaster {
		ms, err := p.masterState()
		if err != nil {
			return nil, err
		}
		sp.MasterStates = append(sp.MasterStates, ms)
	}
	nOps, err := p.r.count("operator state count", 25)
	if err != nil {
		return nil, err
	}
	for range nOps {
		op, err := p.operatorState()
		if err != nil {
			return nil, err
		}
		sp.Operators = append(sp.Operators, op)
	}
	sp.fileHandles = p.fileHandles
	sp.bodyEnd = p.r.pos
	if p.version >= 4 {
		// MetadataV4Serializer appends the CheckpointProperties as a Java
		// serialization stream.
		tail := b[p.r.pos:]
		if !bytes.HasPrefix(tail, []byte{0xac, 0xed, 0x00, 0x05}) {
			return nil, p.r.failAt(p.r.pos, "expected the Java-serialized CheckpointProperties (AC ED 00 05) of a version %d file", p.version)
		}
		sp.FormatType, sp.SnapshotName = sniffProperties(tail)
	} else {
		sp.TrailingBytes = p.r.remaining()
	}
	return sp, nil
}

func (p *metaParser) masterState() (MasterState, error) {
	at := p.r.pos
	m, err := p.r.i32("master state magic")
	if err != nil {
		return MasterState{}, err
	}
	if m != masterStateMagic {
		return MasterState{}, p.r.failAt(at, "bad master state magic (want c96b1696)")
	}
	data, err := p.r.lenBytes("master state")
	if err != nil {
		return MasterState{}, err
	}
	if len(data) == 0 {
		return MasterState{}, p.r.failAt(at+4, "empty master state")
	}
	in := newBinReader(data, fmt.Sprintf("master state at byte %d of _metadata", at))
	var ms MasterState
	if ms.Version, err = in.i32("master state version"); err != nil {
		return MasterState{}, err
	}
	if ms.Name, err = in.utf("master state name"); err != nil {
		return MasterState{}, err
	}
	payload, err := in.lenBytes("master state payload")
	if err != nil {
		return MasterState{}, err
	}
	if in.remaining() != 0 {
		return MasterState{}, in.failAt(in.pos, "trailing bytes in master state")
	}
	ms.Size = len(payload)
	return ms, nil
}

func (p *metaParser) operatorState() (OperatorState, error) {
	var op OperatorState
	var err error
	op.Pos = p.r.pos
	if p.version >= 5 {
		if op.Name, err = p.r.utf("operator name"); err != nil {
			return op, err
		}
		if op.UID, err = p.r.utf("operator uid"); err != nil {
			return op, err
		}
	}
	id, err := p.r.bytes(16, "operator id")
	if err != nil {
		return op, err
	}
	op.ID = hex.EncodeToString(id)
	par, err := p.r.i32("parallelism")
	if err != nil {
		return op, err
	}
	maxPar, err := p.r.i32("max parallelism")
	if err != nil {
		return op, err
	}
	op.Parallelism, op.MaxParallelism = int(par), int(maxPar)
	at := p.r.pos
	coord, err := p.streamHandle(0)
	if err != nil {
		return op, err
	}
	if coord != nil && coord.Kind != HandleInline {
		return op, p.r.failAt(at, "coordinator state of the operator at byte %d must be inline bytes, found a %s handle", op.Pos, coord.Kind)
	}
	op.Coordinator = coord
	at = p.r.pos
	n, err := p.r.i32("subtask state count")
	if err != nil {
		return op, err
	}
	if n < 0 {
		if coord != nil {
			return op, p.r.failAt(at, "fully finished operator at byte %d has coordinator state", op.Pos)
		}
		op.FullyFinished = true
		return op, nil
	}
	if int64(n)*4 > int64(p.r.remaining()) {
		return op, p.r.failAt(at, "subtask state count %s cannot fit in the %d bytes left", fileInt(int64(n)), p.r.remaining())
	}
	for range n {
		at := p.r.pos
		idx, err := p.r.i32("subtask index")
		if err != nil {
			return op, err
		}
		if idx < 0 {
			op.Subtasks = append(op.Subtasks, SubtaskState{Index: int(-(int64(idx) + 1)), Finished: true})
			continue
		}
		st, err := p.subtaskState()
		if err != nil {
			return op, err
		}
		st.Index = int(idx)
		for _, prev := range op.Subtasks {
			if prev.Index == st.Index {
				return op, p.r.failAt(at, "operator at byte %d lists subtask %s twice", op.Pos, fileInt(int64(idx)))
			}
		}
		op.Subtasks = append(op.Subtasks, st)
	}
	return op, nil
}

func (p *metaParser) subtaskState() (SubtaskState, error) {
	var st SubtaskState
	var err error
	for _, raw := range []bool{false, true} {
		has, err := p.r.i32("operator state flag")
		if err != nil {
			return st, err
		}
		if has == 0 {
			continue
		}
		h, err := p.operatorStateHandle()
		if err != nil {
			return st, err
		}
		if raw {
			st.RawOperator = h
		} else {
			st.ManagedOperator = h
		}
	}
	if st.ManagedKeyed, err = p.keyedHandle(0); err != nil {
		return st, err
	}
	if st.RawKeyed, err = p.keyedHandle(0); err != nil {
		return st, err
	}
	if st.InputChannels, err = p.channelHandles(true); err != nil {
		return st, err
	}
	if st.ResultSubpartitions, err = p.channelHandles(false); err != nil {
		return st, err
	}
	if p.version >= 7 {
		at := p.r.pos
		marker, err := p.r.u8("ref checkpoint marker")
		if err != nil {
			return st, err
		}
		switch marker {
		case 0:
		case 1:
			id, err := p.r.i64("ref checkpoint id")
			if err != nil {
				return st, err
			}
			st.RefCheckpointID = &id
		default:
			return st, p.r.failAt(at, "ref checkpoint marker %s, want 0 or 1", fileInt(int64(marker)))
		}
	}
	return st, nil
}

func (p *metaParser) operatorStateHandle() (*OperatorStateHandle, error) {
	at := p.r.pos
	t, err := p.r.u8("operator state handle type")
	if err != nil {
		return nil, err
	}
	switch t {
	case handleNull:
		return nil, nil
	case handlePartitionableOpState:
	default:
		return nil, &UnknownHandleError{Code: int(t), Pos: at, Of: "operator"}
	}
	n, err := p.r.count("named state count", 7)
	if err != nil {
		return nil, err
	}
	h := &OperatorStateHandle{Pos: at}
	for range n {
		var s NamedOperatorState
		if s.Name, err = p.r.utf("state name"); err != nil {
			return nil, err
		}
		mAt := p.r.pos
		mode, err := p.r.u8("distribution mode")
		if err != nil {
			return nil, err
		}
		if mode > 2 {
			return nil, p.r.failAt(mAt, "unknown distribution mode %s", fileInt(int64(mode)))
		}
		s.Mode = DistributionMode(mode)
		k, err := p.r.count("offset count", 8)
		if err != nil {
			return nil, err
		}
		raw, err := p.r.bytes(8*k, "state offsets")
		if err != nil {
			return nil, err
		}
		s.Offsets = make([]int64, k)
		for i := range k {
			s.Offsets[i] = int64(binary.BigEndian.Uint64(raw[8*i:]))
		}
		h.States = append(h.States, s)
	}
	if h.Delegate, err = p.streamHandle(0); err != nil {
		return nil, err
	}
	h.End = p.r.pos
	return h, nil
}

// Channel state handle type codes of ChannelStateHandleSerializerV2 (V6+).
const (
	channelInput        = 1
	channelSubpartition = 2
	channelMergedInput  = 3
	channelMergedSub    = 4
)

// channelHandles reads a collection of input-channel (input=true) or
// result-subpartition state handles and returns how many there were.
func (p *metaParser) channelHandles(input bool) (int, error) {
	what := "result subpartition state count"
	if input {
		what = "input channel state count"
	}
	n, err := p.r.count(what, 1)
	if err != nil {
		return 0, err
	}
	for range n {
		if p.version >= 6 {
			at := p.r.pos
			t, err := p.r.u8("channel state handle type")
			if err != nil {
				return 0, err
			}
			plain, merged := channelSubpartition, channelMergedSub
			if input {
				plain, merged = channelInput, channelMergedInput
			}
			switch int(t) {
			case plain:
				if err := p.channelHandleV1(); err != nil {
					return 0, err
				}
			case merged:
				if _, err := p.r.i32("subtask index"); err != nil {
					return 0, err
				}
				if _, err := p.r.i64("channel state size"); err != nil {
					return 0, err
				}
				if _, err := p.streamHandle(0); err != nil {
					return 0, err
				}
				if _, err := p.r.lenBytes("channel offsets"); err != nil {
					return 0, err
				}
			default:
				return 0, &UnknownHandleError{Code: int(t), Pos: at, Of: "channel"}
			}
			continue
		}
		if err := p.channelHandleV1(); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// channelHandleV1: int32 subtask; 2 x int32 channel info (gate, channel or
// partition, subpartition); int32 n; n x int64; int64 size; stream handle.
func (p *metaParser) channelHandleV1() error {
	if _, err := p.r.bytes(12, "channel state subtask and channel info"); err != nil {
		return err
	}
	k, err := p.r.count("channel state offset count", 8)
	if err != nil {
		return err
	}
	if _, err := p.r.bytes(8*k+8, "channel state offsets and size"); err != nil {
		return err
	}
	_, err = p.streamHandle(0)
	return err
}

// sniffProperties picks the savepoint format type (CANONICAL / NATIVE) and
// the snapshot type's name ("Savepoint", "Suspend Savepoint", "Checkpoint",
// ...) out of the Java-serialized CheckpointProperties: the TC_STRING
// records (0x74, uint16 length, bytes) of the stream. Informational only,
// best effort: empty when not found.
func sniffProperties(tail []byte) (format, name string) {
	var strs []string
	for i := 0; i+3 <= len(tail); i++ {
		if tail[i] != 0x74 {
			continue
		}
		n := int(binary.BigEndian.Uint16(tail[i+1:]))
		if n == 0 || n > 64 || i+3+n > len(tail) {
			continue
		}
		s := tail[i+3 : i+3+n]
		ok := true
		for _, c := range s {
			if c < 0x20 || c > 0x7e {
				ok = false
				break
			}
		}
		if ok {
			strs = append(strs, string(s))
			i += 2 + n
		}
	}
	for i, s := range strs {
		if s == "CANONICAL" || s == "NATIVE" {
			format = s
			if i+1 < len(strs) {
				name = strs[i+1]
			}
			return format, name
		}
	}
	for _, s := range strs {
		if s == "Checkpoint" || s == "Full Checkpoint" {
			return "", s
		}
	}
	return "", ""
}
