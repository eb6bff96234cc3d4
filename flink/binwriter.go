package flink

// Appending Java DataOutputStream values (big-endian), for the rewriter:
// the inverse of binReader.

import (
	"encoding/binary"
	"fmt"
)

func appendI32(b []byte, v int32) []byte { return binary.BigEndian.AppendUint32(b, uint32(v)) }

func appendI64(b []byte, v int64) []byte { return binary.BigEndian.AppendUint64(b, uint64(v)) }

// appendUTF appends a DataOutput.writeUTF string; Java refuses more than
// 65535 encoded bytes, and so does this.
func appendUTF(b []byte, s string) ([]byte, error) {
	enc := encodeModifiedUTF8(s)
	if len(enc) > 0xffff {
		return nil, fmt.Errorf("flink: a string of %d encoded bytes does not fit Java's writeUTF (65535 at most)", len(enc))
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(enc)))
	return append(b, enc...), nil
}
