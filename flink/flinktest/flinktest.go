// Package flinktest builds small Flink savepoint files for tests outside
// package flink: a `_metadata` whose one Kafka source operator keeps its
// reader state behind a file or relative state handle, and such state.
// The bytes follow the reader's understanding of Flink's format (the
// real-format proof is flink/testdata); they are for tests of what is
// around the reader: containment, file types, pages, the catalog.
package flinktest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"
)

type writer struct{ bytes.Buffer }

func (w *writer) put(vs ...any) *writer {
	for _, v := range vs {
		if s, ok := v.(string); ok { // Java writeUTF (ASCII here)
			_ = binary.Write(&w.Buffer, binary.BigEndian, uint16(len(s)))
			w.WriteString(s)
			continue
		}
		_ = binary.Write(&w.Buffer, binary.BigEndian, v)
	}
	return w
}

// FileHandle is a FileStateHandle (an absolute path or URI); RelativeHandle
// a RelativeFileStateHandle (relative to the `_metadata` directory).
func FileHandle(path string, size int64) []byte {
	return (&writer{}).put(uint8(2), size, path).Bytes()
}

// RelativeHandle: see FileHandle.
func RelativeHandle(path string, size int64) []byte {
	return (&writer{}).put(uint8(6), path, size).Bytes()
}

// Metadata is a version 3 `_metadata` (checkpoint 7) with one operator,
// parallelism 1, whose subtask 0 holds the KafkaSource SourceReaderState
// elements at offsets of the stream behind handle.
func Metadata(handle []byte, offsets ...int64) []byte {
	w := (&writer{}).put(int32(0x4960672d), int32(3), int64(7), int32(0), int32(1))
	w.Write(make([]byte, 16)) // operator id
	w.put(int32(1), int32(128), uint8(0), int32(1), int32(0))
	w.put(int32(1), uint8(4), int32(1), "SourceReaderState", uint8(0), int32(len(offsets)))
	for _, o := range offsets {
		w.put(o)
	}
	w.Write(handle)
	// no raw operator state, no keyed state, no channel state
	w.put(int32(0), uint8(0), uint8(0), int32(0), int32(0))
	return w.Bytes()
}

// ReaderState is SourceReaderState stream bytes holding one
// KafkaPartitionSplit (topic, partition, next offset, no stopping offset),
// its element at offset 0.
func ReaderState(topic string, partition int32, next int64) []byte {
	split := (&writer{}).put(topic, partition, next, int64(-9223372036854775808)).Bytes()
	elem := (&writer{}).put(int32(0), int32(len(split))).Bytes()
	elem = append(elem, split...)
	return append((&writer{}).put(int32(len(elem))).Bytes(), elem...)
}

// Leaks returns the forms of secret's bytes found in s: every 4-byte
// window as text, as hex and as the big-endian 32-bit integer a reader
// would decode from it (signed and unsigned). For tests that a file's
// contents reach no error or page.
func Leaks(secret, s string) []string {
	var out []string
	for i := 0; i+4 <= len(secret); i++ {
		w := secret[i : i+4]
		v := binary.BigEndian.Uint32([]byte(w))
		for _, form := range []string{w, fmt.Sprintf("%08x", v), fmt.Sprint(int32(v)), fmt.Sprint(v)} {
			if strings.Contains(s, form) {
				out = append(out, form)
			}
		}
	}
	return out
}

// Within returns what f returns, and fails the test when f has not
// returned after d (a FIFO opened for reading would block it forever; f is
// then left running).
func Within[T any](t testing.TB, d time.Duration, what string, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(d):
		t.Fatalf("%s: still blocked after %s", what, d)
		panic("unreachable")
	}
}
