package flink

// Test-only encoder for the STRUCTURE of `_metadata` around state bytes, to
// build shapes the real fixtures do not have (relative and absolute file
// handles, versions 3/4/5/7, channel state, keyed handle kinds, legacy
// union state). It follows the same reading of Flink's serializers as the
// parser, so it proves robustness and coverage, not format fidelity: the
// real-format proof is the savepoints written by real Flink 2.2.1 in
// testdata/savepoints (TestFixtures). Wherever possible the payloads are
// real bytes cut out of those fixtures (realSourceState).

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

type jw struct{ bytes.Buffer }

func (w *jw) u8(v byte) *jw { w.WriteByte(v); return w }
func (w *jw) i32(v int32) *jw {
	_ = binary.Write(&w.Buffer, binary.BigEndian, v)
	return w
}
func (w *jw) i64(v int64) *jw {
	_ = binary.Write(&w.Buffer, binary.BigEndian, v)
	return w
}
func (w *jw) raw(b []byte) *jw { w.Write(b); return w }
func (w *jw) utf(s string) *jw {
	b := encodeModifiedUTF8(s)
	_ = binary.Write(&w.Buffer, binary.BigEndian, uint16(len(b)))
	w.Write(b)
	return w
}

// Stream handle writers.
func inlineHandle(name string, data []byte) func(*jw) {
	return func(w *jw) { w.u8(1).utf(name).i32(int32(len(data))).raw(data) }
}
func fileHandle(path string, size int64) func(*jw) {
	return func(w *jw) { w.u8(2).i64(size).utf(path) }
}
func relativeHandle(path string, size int64) func(*jw) {
	return func(w *jw) { w.u8(6).utf(path).i64(size) }
}

type synthState struct {
	name    string
	mode    byte
	offsets []int64
}

type synthSub struct {
	idx      int32
	finished bool
	states   []synthState // managed operator state; none = flag 0
	delegate func(*jw)
	keyed    func(*jw) // managed keyed handle; nil = null
	input    func(*jw) // input channel handles (count included); nil = 0
	output   func(*jw)
	ref      *int64 // V7 ref checkpoint id
}

type synthOp struct {
	name, uid     string
	id            string // 32 hex
	par, maxPar   int32
	coord         []byte // nil = null handle
	fullyFinished bool
	subs          []synthSub
}

func encodeMetadata(version int, cpID int64, ops []synthOp) []byte {
	w := &jw{}
	w.i32(metadataMagic).i32(int32(version)).i64(cpID)
	w.i32(0) // master states
	w.i32(int32(len(ops)))
	for _, op := range ops {
		if version >= 5 {
			w.utf(op.name).utf(op.uid)
		}
		id, err := hex.DecodeString(op.id)
		if err != nil || len(id) != 16 {
			panic("bad id " + op.id)
		}
		w.raw(id).i32(op.par).i32(op.maxPar)
		if op.coord == nil {
			w.u8(0)
		} else {
			inlineHandle(op.id, op.coord)(w)
		}
		if op.fullyFinished {
			w.i32(-1)
			continue
		}
		w.i32(int32(len(op.subs)))
		for _, s := range op.subs {
			if s.finished {
				w.i32(-s.idx - 1)
				continue
			}
			w.i32(s.idx)
			if len(s.states) == 0 {
				w.i32(0)
			} else {
				w.i32(1).u8(4).i32(int32(len(s.states)))
				for _, st := range s.states {
					w.utf(st.name).u8(st.mode).i32(int32(len(st.offsets)))
					for _, o := range st.offsets {
						w.i64(o)
					}
				}
				s.delegate(w)
			}
			w.i32(0) // raw operator state
			if s.keyed == nil {
				w.u8(0)
			} else {
				s.keyed(w)
			}
			w.u8(0) // raw keyed
			for _, ch := range []func(*jw){s.input, s.output} {
				if ch == nil {
					w.i32(0)
				} else {
					ch(w)
				}
			}
			if version >= 7 {
				if s.ref == nil {
					w.u8(0)
				} else {
					w.u8(1).i64(*s.ref)
				}
			}
		}
	}
	if version >= 4 {
		// A stand-in for the Java-serialized CheckpointProperties.
		w.raw([]byte{0xac, 0xed, 0x00, 0x05, 0x74, 0x00, 0x09})
		w.raw([]byte("CANONICAL"))
		w.raw([]byte{0x74, 0x00, 0x09})
		w.raw([]byte("Savepoint"))
	}
	return w.Bytes()
}

// realSubtask is one subtask's real SourceReaderState: the whole operator
// state stream Flink wrote (backend header + elements) and the offsets.
type realSubtask struct {
	index   int
	data    []byte
	offsets []int64
}

type realSource struct {
	subtasks []realSubtask
	coord    []byte
	expected fixtureExpected
}

// realSourceState cuts the Kafka source state out of a real fixture.
func realSourceState(t testing.TB, fixture string) realSource {
	t.Helper()
	dir := filepath.Join("testdata", "savepoints", fixture)
	sp, err := ReadSavepoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	exp := readExpected(t, dir)
	op := sp.Operator(exp.SourceOperatorID)
	if op == nil {
		t.Fatalf("%s: no operator %s", fixture, exp.SourceOperatorID)
	}
	rs := realSource{coord: op.Coordinator.Data, expected: exp}
	for _, st := range op.Subtasks {
		ns := st.ManagedOperator.State(SourceReaderStateName)
		rs.subtasks = append(rs.subtasks, realSubtask{index: st.Index, data: st.ManagedOperator.Delegate.Data, offsets: ns.Offsets})
	}
	return rs
}

func writeTestFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Kryo encoding of KafkaTopicPartition for the synthetic legacy state.
func kryoVarint(w *jw, v uint32) {
	for v >= 0x80 {
		w.u8(byte(v) | 0x80)
		v >>= 7
	}
	w.u8(byte(v))
}

func kryoString(w *jw, s string) {
	ascii := len(s) > 1 && len(s) < 64
	for i := 0; i < len(s); i++ {
		if s[i] > 127 {
			ascii = false
		}
	}
	if ascii {
		b := []byte(s)
		b[len(b)-1] |= 0x80
		w.raw(b)
		return
	}
	units := encodeModifiedUTF8(s) // Kryo writes NUL as one 0 byte; tests avoid NUL
	n := uint32(len([]rune(s)) + 1)
	if n>>6 == 0 {
		w.u8(byte(n) | 0x80)
	} else {
		w.u8(byte(n&0x3F) | 0xC0)
		kryoVarint(w, n>>6)
	}
	w.raw(units)
}

func kryoTopicPartition(topic string, partition int32, enc kryoInt, registered bool) []byte {
	w := &jw{}
	if registered {
		kryoVarint(w, 12+2)
	} else {
		kryoVarint(w, 1) // NAME + 2
		kryoVarint(w, 0) // name id
		kryoString(w, "org.apache.flink.streaming.connectors.kafka.internals.KafkaTopicPartition")
	}
	hash := 31*javaStringHash(topic) + partition
	for _, v := range []int32{hash, partition} {
		switch enc {
		case kryoFixed:
			w.i32(v)
		case kryoVarZigzag:
			kryoVarint(w, uint32(v<<1^v>>31))
		case kryoVarPos:
			kryoVarint(w, uint32(v))
		}
	}
	kryoString(w, topic)
	return w.Bytes()
}
