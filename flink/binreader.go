package flink

// A bounds-checked reader for Java DataOutputStream bytes (big-endian), used
// for `_metadata`, inline state and Kafka split bytes. Every read checks the
// remaining length first, so a truncated or hostile file gives an error that
// names the byte position, never a panic or an allocation from an unchecked
// length.

import (
	"encoding/binary"
	"fmt"
	"unicode/utf16"
)

// FormatError is a malformed byte sequence at a position of a named input.
type FormatError struct {
	Where string // "_metadata", "state of operator ...", ...
	Pos   int    // byte offset in that input
	Why   string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("flink: %s at byte %d of %s", e.Why, e.Pos, e.Where)
}

type binReader struct {
	buf   []byte
	pos   int
	where string
}

func newBinReader(b []byte, where string) *binReader { return &binReader{buf: b, where: where} }

func (r *binReader) remaining() int { return len(r.buf) - r.pos }

// fileInt formats an integer read from a file for an error message. Errors
// never echo a file's bytes (a _metadata can point the reader at any offset
// of a state file, and errors reach every viewer's page): strings and raw
// bytes are never shown, and a number only when it is small, as versions,
// codes, indexes and lengths of a sound file are; otherwise its size class.
func fileInt(v int64) string {
	if v >= -1 && v <= 0xffff {
		return fmt.Sprint(v)
	}
	if v < 0 {
		return "(a large negative number)"
	}
	return "(a number above 65535)"
}

// failAt returns a FormatError at pos.
func (r *binReader) failAt(pos int, format string, args ...any) error {
	return &FormatError{Where: r.where, Pos: pos, Why: fmt.Sprintf(format, args...)}
}

func (r *binReader) need(n int, what string) error {
	if n < 0 || r.remaining() < n {
		return r.failAt(r.pos, "truncated: %s needs %d bytes, %d left", what, n, r.remaining())
	}
	return nil
}

func (r *binReader) u8(what string) (byte, error) {
	if err := r.need(1, what); err != nil {
		return 0, err
	}
	b := r.buf[r.pos]
	r.pos++
	return b, nil
}

func (r *binReader) i32(what string) (int32, error) {
	if err := r.need(4, what); err != nil {
		return 0, err
	}
	v := int32(binary.BigEndian.Uint32(r.buf[r.pos:]))
	r.pos += 4
	return v, nil
}

func (r *binReader) i64(what string) (int64, error) {
	if err := r.need(8, what); err != nil {
		return 0, err
	}
	v := int64(binary.BigEndian.Uint64(r.buf[r.pos:]))
	r.pos += 8
	return v, nil
}

// count reads an int32 element count and checks it against the bytes left,
// given that every element takes at least minSize bytes.
func (r *binReader) count(what string, minSize int) (int, error) {
	at := r.pos
	n, err := r.i32(what)
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, r.failAt(at, "negative %s %s", what, fileInt(int64(n)))
	}
	if minSize > 0 && int64(n)*int64(minSize) > int64(r.remaining()) {
		return 0, r.failAt(at, "%s %s cannot fit in the %d bytes left", what, fileInt(int64(n)), r.remaining())
	}
	return int(n), nil
}

// bytes returns the next n bytes (a sub-slice, not a copy).
func (r *binReader) bytes(n int, what string) ([]byte, error) {
	if err := r.need(n, what); err != nil {
		return nil, err
	}
	b := r.buf[r.pos : r.pos+n : r.pos+n]
	r.pos += n
	return b, nil
}

// lenBytes reads an int32 length and that many bytes.
func (r *binReader) lenBytes(what string) ([]byte, error) {
	at := r.pos
	n, err := r.i32(what + " length")
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, r.failAt(at, "negative %s length %s", what, fileInt(int64(n)))
	}
	if int(n) > r.remaining() {
		return nil, r.failAt(at, "%s length %s exceeds the %d bytes left", what, fileInt(int64(n)), r.remaining())
	}
	return r.bytes(int(n), what)
}

// utf reads a Java DataInput.readUTF string: a uint16 byte length, then
// modified UTF-8 (NUL as C0 80, supplementary characters as surrogate
// pairs, each encoded in 3 bytes).
func (r *binReader) utf(what string) (string, error) {
	at := r.pos
	if err := r.need(2, what+" length"); err != nil {
		return "", err
	}
	n := int(binary.BigEndian.Uint16(r.buf[r.pos:]))
	if n > r.remaining()-2 {
		// Not need's message: the length is two bytes of the file.
		return "", r.failAt(at, "truncated: %s length exceeds the %d bytes left", what, r.remaining()-2)
	}
	r.pos += 2
	b, err := r.bytes(n, what)
	if err != nil {
		return "", err
	}
	s, bad := decodeModifiedUTF8(b)
	if bad >= 0 {
		return "", r.failAt(at+2+bad, "malformed modified UTF-8 in %s", what)
	}
	return s, nil
}

// decodeModifiedUTF8 decodes Java's modified UTF-8. It returns the index of
// the first malformed byte, or -1. Surrogate pairs become one rune; a lone
// surrogate becomes U+FFFD (as Go's UTF-16 decoder does).
func decodeModifiedUTF8(b []byte) (string, int) {
	ascii := true
	for _, c := range b {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return string(b), -1
	}
	units := make([]uint16, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c < 0x80:
			units = append(units, uint16(c))
			i++
		case c>>5 == 0x6: // 110xxxxx 10xxxxxx
			if i+1 >= len(b) || b[i+1]&0xC0 != 0x80 {
				return "", i
			}
			units = append(units, uint16(c&0x1F)<<6|uint16(b[i+1]&0x3F))
			i += 2
		case c>>4 == 0xE: // 1110xxxx 10xxxxxx 10xxxxxx
			if i+2 >= len(b) || b[i+1]&0xC0 != 0x80 || b[i+2]&0xC0 != 0x80 {
				return "", i
			}
			units = append(units, uint16(c&0x0F)<<12|uint16(b[i+1]&0x3F)<<6|uint16(b[i+2]&0x3F))
			i += 3
		default:
			return "", i
		}
	}
	return string(utf16.Decode(units)), -1
}

// encodeModifiedUTF8 is the inverse (Java DataOutput.writeUTF without the
// length); used by tests and by the legacy-state decoder's hash check.
func encodeModifiedUTF8(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, u := range utf16.Encode([]rune(s)) {
		switch {
		case u != 0 && u < 0x80:
			out = append(out, byte(u))
		case u < 0x800:
			out = append(out, 0xC0|byte(u>>6), 0x80|byte(u&0x3F))
		default:
			out = append(out, 0xE0|byte(u>>12), 0x80|byte(u>>6&0x3F), 0x80|byte(u&0x3F))
		}
	}
	return out
}

// javaStringHash is Java's String.hashCode over UTF-16 code units.
func javaStringHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}
