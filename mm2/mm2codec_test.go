package mm2

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/model"
)

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(strings.ReplaceAll(s, " ", ""), "|", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The byte examples below are the worked examples of shared/reference/mm2.md
// section 1, derived from MM2's Java schemas, not from this encoder.

func TestOffsetSyncReferenceBytes(t *testing.T) {
	key := mustHex(t, "00 06 65 76 65 6e 74 73 | 00 00 00 07")
	value := mustHex(t, "00 00 00 00 00 00 03 e8 | 00 00 00 00 00 00 03 d4")
	want := model.OffsetSync{Topic: "events", Partition: 7, Upstream: 1000, Downstream: 980}
	got, err := DecodeOffsetSync(key, value)
	if err != nil || got != want {
		t.Fatalf("decode = %+v, %v; want %+v", got, err, want)
	}
	if !bytes.Equal(EncodeKey(want), key) || !bytes.Equal(EncodeValue(want), value) {
		t.Fatalf("encode = %x %x; want %x %x", EncodeKey(want), EncodeValue(want), key, value)
	}
}

func TestCheckpointReferenceBytes(t *testing.T) {
	key := mustHex(t, "00 0c 66 6c 69 6e 6b 2d 65 76 65 6e 74 73 | 00 06 65 76 65 6e 74 73 | 00 00 00 07")
	value := mustHex(t, "00 00 | 00 00 00 00 00 00 03 ed | 00 00 00 00 00 00 03 d5 | 00 00")
	want := model.Checkpoint{Group: "flink-events", Topic: "events", Partition: 7, Upstream: 1005, Downstream: 981}
	got, err := DecodeCheckpoint(key, value)
	if err != nil || got != want {
		t.Fatalf("decode = %+v, %v; want %+v", got, err, want)
	}
	if !bytes.Equal(EncodeKey(want), key) || !bytes.Equal(EncodeValue(want), value) {
		t.Fatalf("encode = %x %x; want %x %x", EncodeKey(want), EncodeValue(want), key, value)
	}
}

func TestHeartbeatReferenceBytes(t *testing.T) {
	key := mustHex(t, "00 02 64 72 | 00 07 70 72 69 6d 61 72 79")
	value := mustHex(t, "00 00 | 00 00 01 9b 76 da a8 00")
	want := model.Heartbeat{SourceAlias: "dr", TargetAlias: "primary", EmittedMs: 1767225600000}
	got, err := DecodeHeartbeat(key, value)
	if err != nil || got != want {
		t.Fatalf("decode = %+v, %v; want %+v", got, err, want)
	}
	if !bytes.Equal(EncodeKey(want), key) || !bytes.Equal(EncodeValue(want), value) {
		t.Fatalf("encode = %x %x; want %x %x", EncodeKey(want), EncodeValue(want), key, value)
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name       string
		decode     func(k, v []byte) error
		key, value string
		want       string
	}{
		{"sync empty key", decSync, "", "0000000000000001 0000000000000002", "too short"},
		{"sync short value", decSync, "0001 61 00000000", "00000000000001", "too short"},
		{"sync string past end", decSync, "0009 6576", "", "too short"},
		{"sync negative string length", decSync, "ffff 00000000", "00000000000000010000000000000002", "negative string length"},
		{"checkpoint version 1", decCheckpoint, "0001 67 0001 74 00000000", "0001 0000000000000001 0000000000000002 0000", "version 1"},
		{"checkpoint missing metadata", decCheckpoint, "0001 67 0001 74 00000000", "0000 0000000000000001 0000000000000002", "too short"},
		{"heartbeat version 2", decHeartbeat, "0001 61 0001 62", "0002 0000000000000001", "version 2"},
		{"heartbeat null value", decHeartbeat, "0001 61 0001 62", "", "too short"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.decode(mustHex(t, tc.key), mustHex(t, tc.value))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestTrailingBytesIgnoredLikeJava(t *testing.T) {
	s := model.OffsetSync{Topic: "t", Partition: 1, Upstream: 2, Downstream: 3}
	got, err := DecodeOffsetSync(append(EncodeKey(s), 0xff), append(EncodeValue(s), 1, 2, 3))
	if err != nil || got != s {
		t.Fatalf("got %+v, %v", got, err)
	}
}

func decSync(k, v []byte) error       { _, err := DecodeOffsetSync(k, v); return err }
func decCheckpoint(k, v []byte) error { _, err := DecodeCheckpoint(k, v); return err }
func decHeartbeat(k, v []byte) error  { _, err := DecodeHeartbeat(k, v); return err }

func TestDecodeConnectOffset(t *testing.T) {
	for _, tc := range []struct {
		name, key, value string
		want             model.ConnectOffset
		wantErr          string
	}{
		{
			name:  "source connector, keys in MM2 order",
			key:   `["MirrorSourceConnector",{"cluster":"primary","partition":7,"topic":"events"}]`,
			value: `{"offset":12345}`,
			want:  model.ConnectOffset{Connector: "MirrorSourceConnector", Cluster: "primary", Topic: "events", Partition: 7, LastOffset: 12345},
		},
		{
			name:  "keys in another order",
			key:   `["primary->dr.MirrorSourceConnector",{"topic":"orders","partition":0,"cluster":"primary"}]`,
			value: `{"offset":0}`,
			want:  model.ConnectOffset{Connector: "primary->dr.MirrorSourceConnector", Cluster: "primary", Topic: "orders", Partition: 0, LastOffset: 0},
		},
		{name: "checkpoint connector", key: `["MirrorCheckpointConnector",{"group":"g","topic":"events","partition":1}]`, value: `{"offset":0}`, wantErr: "not a MirrorSourceConnector"},
		{name: "heartbeat connector", key: `["MirrorHeartbeatConnector",{"sourceClusterAlias":"dr","targetClusterAlias":"primary"}]`, value: `{"offset":0}`, wantErr: "not a MirrorSourceConnector"},
		{name: "tombstone", key: `["MirrorSourceConnector",{"cluster":"primary","partition":7,"topic":"events"}]`, wantErr: "not a MirrorSourceConnector"},
		{name: "not json", key: `nope`, value: `{}`, wantErr: "connect offset key"},
		{name: "three elements", key: `["a",{},1]`, value: `{}`, wantErr: "got 3 elements"},
		{name: "no offset", key: `["MirrorSourceConnector",{"cluster":"p","partition":1,"topic":"t"}]`, value: `{"position":3}`, wantErr: "no \"offset\""},
		{name: "partition out of range", key: `["MirrorSourceConnector",{"cluster":"p","partition":4294967296,"topic":"t"}]`, value: `{"offset":3}`, wantErr: "out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var value []byte
			if tc.value != "" {
				value = []byte(tc.value)
			}
			got, err := DecodeConnectOffset([]byte(tc.key), value)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
			back, err := DecodeConnectOffset(EncodeKey(got), EncodeValue(got))
			if err != nil || back != got {
				t.Fatalf("round trip = %+v, %v", back, err)
			}
		})
	}
	_, err := DecodeConnectOffset([]byte(`["MirrorCheckpointConnector",{"group":"g"}]`), []byte(`{"offset":0}`))
	if !errors.Is(err, ErrNotSourceOffset) {
		t.Fatalf("want ErrNotSourceOffset, got %v", err)
	}
}

func FuzzDecodeOffsetSync(f *testing.F) {
	f.Add(EncodeKey(model.OffsetSync{Topic: "events", Partition: 7, Upstream: 1000, Downstream: 980}), EncodeValue(model.OffsetSync{Upstream: 1000, Downstream: 980}))
	f.Add([]byte{0xff, 0xff}, []byte{})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		s, err := DecodeOffsetSync(key, value)
		if err != nil {
			return
		}
		// Whatever decodes must re-encode to the prefix it was read from.
		if !bytes.HasPrefix(key, EncodeKey(s)) || !bytes.HasPrefix(value, EncodeValue(s)) {
			t.Fatalf("re-encode mismatch for %+v", s)
		}
	})
}

func FuzzDecodeCheckpoint(f *testing.F) {
	c := model.Checkpoint{Group: "g", Topic: "events", Partition: 1, Upstream: 5, Downstream: 4, Metadata: "m"}
	f.Add(EncodeKey(c), EncodeValue(c))
	f.Add([]byte{0, 1}, []byte{0, 1})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		c, err := DecodeCheckpoint(key, value)
		if err != nil {
			return
		}
		if !bytes.HasPrefix(key, EncodeKey(c)) || !bytes.HasPrefix(value, EncodeValue(c)) {
			t.Fatalf("re-encode mismatch for %+v", c)
		}
	})
}

func FuzzDecodeHeartbeat(f *testing.F) {
	h := model.Heartbeat{SourceAlias: "dr", TargetAlias: "primary", EmittedMs: 1767225600000}
	f.Add(EncodeKey(h), EncodeValue(h))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		h, err := DecodeHeartbeat(key, value)
		if err != nil {
			return
		}
		if !bytes.HasPrefix(key, EncodeKey(h)) || !bytes.HasPrefix(value, EncodeValue(h)) {
			t.Fatalf("re-encode mismatch for %+v", h)
		}
	})
}

func FuzzDecodeConnectOffset(f *testing.F) {
	f.Add([]byte(`["MirrorSourceConnector",{"cluster":"primary","partition":7,"topic":"events"}]`), []byte(`{"offset":12345}`))
	f.Add([]byte(`[]`), []byte(`null`))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		_, _ = DecodeConnectOffset(key, value) // must not panic
	})
}
