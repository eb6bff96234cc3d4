package flink

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type fixtureExpected struct {
	CheckpointID           int64            `json:"checkpoint_id"`
	MetadataVersion        int              `json:"metadata_version"`
	FormatType             string           `json:"format_type"`
	SourceUID              string           `json:"source_uid"`
	SourceOperatorID       string           `json:"source_operator_id"`
	Parallelism            int              `json:"parallelism"`
	SplitSerializerVersion int              `json:"split_serializer_version"`
	TopicPartitions        map[string]int64 `json:"topic_partitions"`
	// CommittedGroupOffsets: the job's consumer group as real Kafka had it
	// when the savepoint was taken (the job had read everything).
	CommittedGroupOffsets  map[string]int64 `json:"committed_group_offsets"`
	EnumeratorSplitOffsets map[string]int64 `json:"enumerator_split_offsets"`
	// EnumeratorSerializerVersion: 3 (connector 5.x) when absent.
	EnumeratorSerializerVersion int `json:"enumerator_serializer_version"`
	JobVertices                 []struct {
		ID             string `json:"id"`
		Name           string `json:"name"`
		Parallelism    int    `json:"parallelism"`
		MaxParallelism int    `json:"maxParallelism"`
	} `json:"job_vertices"`
}

func readExpected(t testing.TB, dir string) fixtureExpected {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e fixtureExpected
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	if e.SourceUID == "" || len(e.TopicPartitions) == 0 {
		t.Fatalf("%s: expected.json lacks source_uid or topic_partitions", dir)
	}
	return e
}

func fixtureDirs(t testing.TB) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("testdata", "savepoints", "*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range dirs {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		t.Fatal("no fixtures in testdata/savepoints")
	}
	return out
}

func offsetsMap(k *KafkaOffsets) map[string]int64 {
	m := map[string]int64{}
	for key, p := range k.Partitions {
		m[key] = p.Next
	}
	return m
}

func equalMaps(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestFixtures reads the savepoints written by real Flink (1.20.3, 2.2.1, 2.3.0).
func TestFixtures(t *testing.T) {
	for _, dir := range fixtureDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			exp := readExpected(t, dir)
			for _, path := range []string{dir, filepath.Join(dir, MetadataFileName)} {
				sp, err := ReadSavepoint(path)
				if err != nil {
					t.Fatal(err)
				}
				if exp.EnumeratorSerializerVersion == 0 {
					exp.EnumeratorSerializerVersion = 3
				}
				if sp.Version != exp.MetadataVersion || sp.CheckpointID != exp.CheckpointID {
					t.Fatalf("version %d checkpoint %d, want %d %d", sp.Version, sp.CheckpointID, exp.MetadataVersion, exp.CheckpointID)
				}
				if sp.FormatType != exp.FormatType {
					t.Errorf("format type %q, want %q", sp.FormatType, exp.FormatType)
				}
				// Every REST job vertex is the operator state of its chain head.
				for _, v := range exp.JobVertices {
					op := sp.Operator(v.ID)
					if op == nil {
						t.Fatalf("no operator state for job vertex %s (%s)", v.ID, v.Name)
					}
					if op.Parallelism != v.Parallelism || op.MaxParallelism != v.MaxParallelism {
						t.Errorf("vertex %s: parallelism %d/%d, want %d/%d", v.ID, op.Parallelism, op.MaxParallelism, v.Parallelism, v.MaxParallelism)
					}
					if op.UID != "" && OperatorIDFromUID(op.UID) != op.ID {
						t.Errorf("operator uid %q: id %s, OperatorIDFromUID says %s", op.UID, op.ID, OperatorIDFromUID(op.UID))
					}
				}
				if got := OperatorIDFromUID(exp.SourceUID); got != exp.SourceOperatorID {
					t.Fatalf("OperatorIDFromUID(%q) = %s, want %s", exp.SourceUID, got, exp.SourceOperatorID)
				}
				for _, sel := range []string{"", exp.SourceUID, exp.SourceOperatorID, strings.ToUpper(exp.SourceOperatorID)} {
					k, err := sp.KafkaSourceOffsets(sel)
					if err != nil {
						t.Fatalf("selector %q: %v", sel, err)
					}
					if !equalMaps(offsetsMap(k), exp.TopicPartitions) || !equalMaps(offsetsMap(k), exp.CommittedGroupOffsets) {
						t.Fatalf("selector %q: offsets %v, want %v (the group committed %v)", sel, offsetsMap(k), exp.TopicPartitions, exp.CommittedGroupOffsets)
					}
					// Before V5 the file carries no uid: only a uid selector
					// (hashed to the id) can name it.
					wantUID := exp.SourceUID
					if sp.Version < 5 && sel != exp.SourceUID {
						wantUID = ""
					}
					if k.CheckpointID != exp.CheckpointID || k.OperatorID != exp.SourceOperatorID || k.UID != wantUID || k.Source != SourceKafkaSource {
						t.Fatalf("selector %q: %+v", sel, k)
					}
					subtasks := map[int]bool{}
					for key, p := range k.Partitions {
						if p.Marker != "" || p.Stopping != nil || p.Key() != key {
							t.Errorf("%s: %+v", key, p)
						}
						subtasks[p.Subtask] = true
					}
					if len(subtasks) != exp.Parallelism {
						t.Errorf("partitions spread over %d subtasks, want %d", len(subtasks), exp.Parallelism)
					}
					// The enumerator holds the initial markers, not positions.
					if k.Enumerator == nil {
						t.Fatalf("enumerator not decoded: %s", k.EnumeratorErr)
					}
					// Connector 5.x writes enumerator v3 with an offset per
					// split; 3.x writes v2 with none.
					enum := map[string]int64{}
					for _, s := range k.Enumerator.Splits {
						if s.Status != "assigned" || (s.Offset == nil) != (k.Enumerator.SerializerVersion < 3) {
							t.Fatalf("enumerator v%d split %+v", k.Enumerator.SerializerVersion, s)
						}
						if s.Offset != nil {
							enum[PartitionOffset{Topic: s.Topic, Partition: s.Partition}.Key()] = *s.Offset
						}
					}
					if len(k.Enumerator.Splits) != len(exp.TopicPartitions) || !equalMaps(enum, exp.EnumeratorSplitOffsets) ||
						k.Enumerator.SerializerVersion != exp.EnumeratorSerializerVersion {
						t.Fatalf("enumerator v%d %v, want v%d %v", k.Enumerator.SerializerVersion, enum, exp.EnumeratorSerializerVersion, exp.EnumeratorSplitOffsets)
					}
				}
			}
		})
	}
}

// TestOperatorIDFromUID: the fixture ids are the authority (REST vertex
// ids of real Flink 2.2.1); the other vectors are Guava murmur3_128(0)
// results as published in its tests/docs.
func TestOperatorIDFromUID(t *testing.T) {
	for uid, want := range map[string]string{
		"kafka-source":        "61252f73469d3ffba207c548d29a0267",
		"orders-users-source": "16d755f5c80e861deed0e46256bddf0d",
		"count-per-key":       "5b61d6019ab04da71a4e62533c1a8c40",
		"discard":             "298755e8e632b439cafe5a0c747de7e1",
		"":                    "00000000000000000000000000000000",
		"The quick brown fox jumps over the lazy dog": "6c1b07bc7bbc4be347939ac4a93c437a",
	} {
		if got := OperatorIDFromUID(uid); got != want {
			t.Errorf("OperatorIDFromUID(%q) = %s, want %s", uid, got, want)
		}
	}
	if h1, h2 := murmur3x64128([]byte("hell"), 0); h1 != 0x629942693e10f867 || h2 != 0x92db0b82baeb5347 {
		t.Errorf("murmur3 hell = %x %x", h1, h2)
	}
}

func TestSelectorErrors(t *testing.T) {
	sp, err := ReadSavepoint(filepath.Join("testdata", "savepoints", "flink-2.2.1-p2-events4-stop"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = sp.KafkaSourceOffsets("no-such-uid")
	if !errors.Is(err, ErrOperatorNotFound) || !strings.Contains(err.Error(), `"no-such-uid"`) || !strings.Contains(err.Error(), `uid "kafka-source"`) {
		t.Fatalf("wrong uid: %v", err)
	}
	_, err = sp.KafkaSourceOffsets("count-per-key")
	if !errors.Is(err, ErrNoKafkaSource) || !strings.Contains(err.Error(), "count-per-key") {
		t.Fatalf("non-source uid: %v", err)
	}
	_, err = sp.KafkaSourceOffsets("00000000000000000000000000000000")
	if !errors.Is(err, ErrOperatorNotFound) {
		t.Fatalf("unknown id: %v", err)
	}

	// Two sources: auto-detection refuses and lists both.
	rs := realSourceState(t, "flink-2.2.1-p2-events4-stop")
	op := func(uid string) synthOp {
		return synthOp{name: "Source: " + uid, uid: uid, id: OperatorIDFromUID(uid), par: 1, maxPar: 128,
			subs: []synthSub{{idx: 0, states: []synthState{{SourceReaderStateName, 0, rs.subtasks[0].offsets}},
				delegate: inlineHandle("x", rs.subtasks[0].data)}}}
	}
	sp2, err := ParseMetadata(encodeMetadata(6, 1, []synthOp{op("a"), op("b")}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = sp2.KafkaSourceOffsets("")
	if !errors.Is(err, ErrAmbiguousSource) || !strings.Contains(err.Error(), `uid "a"`) || !strings.Contains(err.Error(), `uid "b"`) {
		t.Fatalf("ambiguous: %v", err)
	}
	if _, err := sp2.KafkaSourceOffsets("b"); err != nil {
		t.Fatal(err)
	}
	sp3, err := ParseMetadata(encodeMetadata(6, 1, nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sp3.KafkaSourceOffsets(""); !errors.Is(err, ErrNoKafkaSource) {
		t.Fatalf("no source: %v", err)
	}
}

// keyed handle encoders of every kind, to prove they are stepped over.
var keyedKinds = map[string]func(*jw){
	"key-groups(3)": func(w *jw) {
		w.u8(3).i32(0).i32(2).i64(10).i64(20)
		inlineHandle("k", []byte("keyed"))(w)
	},
	"key-groups-v2(12)": func(w *jw) {
		w.u8(12).i32(64).i32(1).i64(0)
		relativeHandle("keyed-state", 5)(w)
		w.utf("handle-id")
	},
	"savepoint-key-groups(7)": func(w *jw) {
		w.u8(7).i32(0).i32(1).i64(7)
		// a key-groups handle used as a stream handle, nesting an inline one
		w.u8(3).i32(0).i32(1).i64(0)
		inlineHandle("n", []byte{1, 2})(w)
	},
	"incremental(5)": func(w *jw) {
		w.u8(5).i64(3).utf("backend").i32(0).i32(128)
		inlineHandle("meta", []byte("m"))(w)
		w.i32(1).utf("000001.sst")
		fileHandle("file:///tmp/shared/000001.sst", 100)(w)
		w.i32(0)
	},
	"incremental-v2(11)": func(w *jw) {
		w.u8(11).i64(3).utf("backend").i32(0).i32(128).i64(999)
		inlineHandle("meta", []byte("m"))(w)
		w.i32(0)
		w.i32(1).utf("MANIFEST")
		relativeHandle("priv", 1)(w)
		w.utf("id")
	},
	"changelog-v2(14)": func(w *jw) {
		w.u8(14).i32(0).i32(128).i64(10)
		w.i32(1) // materialized
		keyedKinds7(w)
		w.i32(2) // non-materialized
		w.u8(9).i32(0).i32(128).i64(1).i64(2).i32(1).i32(5).i32(3).raw([]byte("abc")).utf("id9")
		w.u8(13).i32(0).i32(128).i32(1).i64(0)
		inlineHandle("c", []byte("c"))(w)
		w.i64(1).i64(1).utf("id13").utf("filesystem")
		w.i64(4).i64(5).utf("id14")
	},
	"changelog(8)+file(10)": func(w *jw) {
		w.u8(8).i32(0).i32(128).i64(10)
		w.i32(0)
		w.i32(1)
		w.u8(10).i32(0).i32(128).i32(0).i64(0).i64(0).utf("id10")
		w.i64(4).utf("id8")
	},
}

func keyedKinds7(w *jw) {
	w.u8(7).i32(0).i32(1).i64(0)
	inlineHandle("s", []byte("s"))(w)
}

// buildSynthetic builds a savepoint of the given version around the real
// reader state of the events4 fixture: subtask 0's state in a relative
// file, subtask 1's in an absolute file (file: URI), a finished subtask, a
// fully finished operator, an operator with every keyed handle kind, and
// channel state.
func buildSynthetic(t testing.TB, version int, dir string) (meta []byte, rs realSource) {
	t.Helper()
	rs = realSourceState(t, "flink-2.2.1-p2-events4-stop")
	writeTestFile(t, dir, "state/sub0", rs.subtasks[0].data)
	abs := writeTestFile(t, dir, "abs/sub1", rs.subtasks[1].data)
	var subs []synthSub
	for i, h := range []func(*jw){
		relativeHandle("state/sub0", int64(len(rs.subtasks[0].data))),
		fileHandle("file://"+filepath.ToSlash(abs), int64(len(rs.subtasks[1].data))),
	} {
		s := synthSub{idx: int32(rs.subtasks[i].index), states: []synthState{{SourceReaderStateName, 0, rs.subtasks[i].offsets}}, delegate: h}
		if version >= 6 {
			s.input = func(w *jw) {
				w.i32(1).u8(1).i32(0).i32(0).i32(1).i32(1).i64(0).i64(3)
				inlineHandle("ch", []byte("abc"))(w)
			}
			s.output = func(w *jw) {
				w.i32(1).u8(4).i32(0).i64(9)
				relativeHandle("channel", 9)(w)
				w.i32(2).raw([]byte{7, 8})
			}
		} else {
			s.output = func(w *jw) {
				w.i32(2)
				for range 2 {
					w.i32(0).i32(0).i32(1).i32(1).i64(0).i64(3)
					inlineHandle("ch", []byte("abc"))(w)
				}
			}
		}
		if version >= 7 {
			ref := int64(5)
			s.ref = &ref
		}
		subs = append(subs, s)
	}
	subs = append(subs, synthSub{idx: 2, finished: true})
	var keyedSubs []synthSub
	i := int32(0)
	for _, k := range keyedKinds {
		keyedSubs = append(keyedSubs, synthSub{idx: i, keyed: k})
		i++
	}
	ops := []synthOp{
		{name: "count-per-key", uid: "count-per-key", id: OperatorIDFromUID("count-per-key"), par: i, maxPar: 128, subs: keyedSubs},
		{name: "Source: kafka-source", uid: "kafka-source", id: OperatorIDFromUID("kafka-source"), par: 3, maxPar: 128, coord: rs.coord, subs: subs},
		{name: "done", uid: "done", id: OperatorIDFromUID("done"), par: 1, maxPar: 128, fullyFinished: true},
	}
	meta = encodeMetadata(version, 42, ops)
	writeTestFile(t, dir, MetadataFileName, meta)
	return meta, rs
}

func TestSyntheticVersions(t *testing.T) {
	for _, version := range []int{3, 4, 5, 6, 7} {
		t.Run("v"+string(rune('0'+version)), func(t *testing.T) {
			dir := t.TempDir()
			_, rs := buildSynthetic(t, version, dir)
			sp, err := ReadSavepoint(dir)
			if err != nil {
				t.Fatal(err)
			}
			if sp.Version != version || sp.CheckpointID != 42 || len(sp.Operators) != 3 || !sp.Operators[2].FullyFinished {
				t.Fatalf("%+v", sp)
			}
			if version >= 4 && (sp.FormatType != "CANONICAL" || sp.SnapshotName != "Savepoint") {
				t.Errorf("properties %q %q", sp.FormatType, sp.SnapshotName)
			}
			if version >= 7 && (sp.Operators[1].Subtasks[0].RefCheckpointID == nil || *sp.Operators[1].Subtasks[0].RefCheckpointID != 5) {
				t.Errorf("V7 ref checkpoint id not read")
			}
			if !sp.Operators[0].HasKeyedState() || len(sp.Operators[0].Subtasks) != len(keyedKinds) {
				t.Fatalf("keyed operator: %+v", sp.Operators[0])
			}
			src := &sp.Operators[1]
			if src.Subtasks[0].ResultSubpartitions == 0 || !src.Subtasks[2].Finished || src.Subtasks[2].Index != 2 {
				t.Fatalf("subtasks: %+v", src.Subtasks)
			}
			for _, sel := range []string{"", "kafka-source", OperatorIDFromUID("kafka-source")} {
				k, err := sp.KafkaSourceOffsets(sel)
				if err != nil {
					t.Fatalf("selector %q: %v", sel, err)
				}
				if !equalMaps(offsetsMap(k), rs.expected.TopicPartitions) {
					t.Fatalf("offsets %v, want %v", offsetsMap(k), rs.expected.TopicPartitions)
				}
				wantUID := "kafka-source"
				if version < 5 && sel != "kafka-source" {
					wantUID = "" // not stored before V5
				}
				if k.UID != wantUID || k.OperatorID != OperatorIDFromUID("kafka-source") || k.Enumerator == nil {
					t.Fatalf("%+v %s", k, k.EnumeratorErr)
				}
			}
		})
	}
}

// TestRelocated: a savepoint with relative handles can be moved.
func TestRelocated(t *testing.T) {
	dir := t.TempDir()
	buildSynthetic(t, 6, dir)
	moved := filepath.Join(t.TempDir(), "moved")
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	sp, err := ReadSavepoint(moved)
	if err != nil {
		t.Fatal(err)
	}
	// subtask 1 used an absolute path into the old place, now outside the
	// savepoint: refused, named; missing when the old place is a root.
	_, err = sp.KafkaSourceOffsets("")
	if !errors.Is(err, ErrOutsideRoots) || !strings.Contains(err.Error(), filepath.Join("abs", "sub1")) {
		t.Fatalf("moved absolute file: %v", err)
	}
	if sp, err = ReadSavepoint(moved, dir); err != nil {
		t.Fatal(err)
	}
	if _, err = sp.KafkaSourceOffsets(""); !errors.Is(err, ErrStateFileMissing) || !strings.Contains(err.Error(), filepath.Join("abs", "sub1")) {
		t.Fatalf("moved absolute file, old place a root: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	fixture, err := os.ReadFile(filepath.Join("testdata", "savepoints", "flink-2.2.1-p2-events4-stop", MetadataFileName))
	if err != nil {
		t.Fatal(err)
	}
	bodyEnd := bytes.Index(fixture, []byte{0xac, 0xed, 0x00, 0x05})
	if bodyEnd < 0 {
		t.Fatal("fixture has no properties trailer")
	}
	// Every truncation inside the body (and of the trailer's magic) fails.
	for cut := 0; cut < bodyEnd+4; cut++ {
		if _, err := ParseMetadata(fixture[:cut]); err == nil {
			t.Fatalf("truncated at %d of %d: no error", cut, len(fixture))
		}
	}
	_, err = ParseMetadata(fixture[:0x9c8])
	var fe *FormatError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "at byte") {
		t.Fatalf("truncated: %v", err)
	}

	withVersion := func(v int32) []byte {
		b := bytes.Clone(fixture)
		b[4], b[5], b[6], b[7] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
		return b
	}
	huge := (&jw{}).i32(metadataMagic).i32(6).i64(1).i32(0).i32(0x7fffffff).Bytes()
	hugeInline := (&jw{}).i32(metadataMagic).i32(6).i64(1).i32(0).i32(1).utf("").utf("").raw(make([]byte, 16)).i32(1).i32(1).u8(1).utf("x").i32(0x7ffffff0).Bytes()
	negCP := (&jw{}).i32(metadataMagic).i32(6).i64(-5).Bytes()
	badMaster := (&jw{}).i32(metadataMagic).i32(6).i64(1).i32(1).i32(1234).i32(8).i64(0).i32(0).Bytes()
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "not a Flink _metadata file"},
		{"three bytes", fixture[:3], "not a Flink _metadata file"},
		{"wrong magic", append([]byte{0xca, 0xfe, 0xba, 0xbe}, fixture[4:]...), "not the magic number 4960672d"},
		{"version 99", withVersion(99), "flink: _metadata version 99 is not supported (know 3-7)"},
		{"version 2", withVersion(2), "older than 1.11"},
		{"version -1", withVersion(-1), "version -1 is not supported"},
		{"huge operator count", huge, "cannot fit"},
		{"huge inline length", hugeInline, "exceeds the"},
		{"negative checkpoint id", negCP, "invalid checkpoint id"},
		{"bad master magic", badMaster, "bad master state magic"},
		{"v5 without properties", withVersion(5)[:bodyEnd], "CheckpointProperties"},
	}
	for _, c := range cases {
		_, err := ParseMetadata(c.data)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		b := make([]byte, rng.IntN(300))
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		if i%2 == 0 && len(b) >= 8 { // get past the magic and version
			copy(b, []byte{0x49, 0x60, 0x67, 0x2d, 0, 0, 0, byte(3 + i%5)})
		}
		_, _ = ParseMetadata(b) // must not panic
	}
	// Random byte flips in the real file never panic.
	for range 3000 {
		b := bytes.Clone(fixture)
		for range 1 + rng.IntN(4) {
			b[8+rng.IntN(len(b)-8)] = byte(rng.Uint32())
		}
		if sp, err := ParseMetadata(b); err == nil {
			sp.inlineOnly = true
			_, _ = sp.KafkaSourceOffsets("")
		}
	}
}

func TestBadFiles(t *testing.T) {
	// Not a directory with _metadata / not existing.
	if _, err := ReadSavepoint(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no _metadata") {
		t.Errorf("empty dir: %v", err)
	}
	if _, err := ReadSavepoint(filepath.Join(t.TempDir(), "nope")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing: %v", err)
	}

	rs := realSourceState(t, "flink-2.2.1-p2-events4-stop")
	sub := rs.subtasks[0]
	build := func(dir string, handle func(*jw), keyed func(*jw)) *Savepoint {
		t.Helper()
		writeTestFile(t, dir, MetadataFileName, encodeMetadata(6, 9, []synthOp{{
			name: "Source", uid: "kafka-source", id: OperatorIDFromUID("kafka-source"), par: 1, maxPar: 128,
			subs: []synthSub{{idx: 0, states: []synthState{{SourceReaderStateName, 0, sub.offsets}}, delegate: handle, keyed: keyed}},
		}}))
		sp, err := ReadSavepoint(dir)
		if err != nil {
			t.Fatal(err)
		}
		return sp
	}
	// Missing relative state file: the error names it.
	dir := t.TempDir()
	sp := build(dir, relativeHandle("chk-9/missing-state", int64(len(sub.data))), nil)
	_, err := sp.KafkaSourceOffsets("")
	if !errors.Is(err, ErrStateFileMissing) || !strings.Contains(err.Error(), filepath.Join(dir, "chk-9", "missing-state")) {
		t.Errorf("missing relative file: %v", err)
	}
	// Present: real split bytes through a relative handle.
	writeTestFile(t, dir, "chk-9/missing-state", sub.data)
	k, err := sp.KafkaSourceOffsets("")
	if err != nil || len(k.Partitions) != len(sub.offsets) {
		t.Fatalf("relative file: %v %+v", err, k)
	}
	// Truncated copy of the state file.
	writeTestFile(t, dir, "chk-9/missing-state", sub.data[:len(sub.data)-3])
	if _, err := sp.KafkaSourceOffsets(""); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("truncated state file: %v", err)
	}
	// A relative path may not leave the savepoint directory.
	sp = build(t.TempDir(), relativeHandle("../../etc/passwd", 10), nil)
	if _, err := sp.KafkaSourceOffsets(""); err == nil || !strings.Contains(err.Error(), "escapes") {
		t.Errorf("escaping relative path: %v", err)
	}
	// Object stores: a clear error naming the scheme.
	for _, uri := range []string{"s3://bucket/savepoints/sp-1/abc", "hdfs://nn:8020/flink/sp/abc", "gs://b/x"} {
		sp = build(t.TempDir(), fileHandle(uri, 100), nil)
		_, err = sp.KafkaSourceOffsets("")
		if !errors.Is(err, ErrUnsupportedLocation) || !strings.Contains(err.Error(), uri) {
			t.Errorf("%s: %v", uri, err)
		}
	}
	// Plain absolute path: inside the savepoint directory.
	dir = t.TempDir()
	abs := writeTestFile(t, dir, "state", sub.data)
	sp = build(dir, fileHandle(abs, int64(len(sub.data))), nil)
	if _, err := sp.KafkaSourceOffsets(""); err != nil {
		t.Errorf("plain absolute path: %v", err)
	}
	// Unknown keyed handle type: error names the code and position.
	dir = t.TempDir()
	writeTestFile(t, dir, MetadataFileName, encodeMetadata(6, 9, []synthOp{{
		id: OperatorIDFromUID("x"), par: 1, maxPar: 128, subs: []synthSub{{idx: 0, keyed: func(w *jw) { w.u8(17).i32(0) }}},
	}}))
	_, err = ReadSavepoint(dir)
	var uh *UnknownHandleError
	if !errors.As(err, &uh) || uh.Code != 17 || !strings.Contains(err.Error(), "unknown keyed state handle type 17 at byte") {
		t.Errorf("unknown handle: %v", err)
	}
	// Nesting beyond the limit.
	deep := func(w *jw) {
		w.u8(7).i32(0).i32(0)
		for range 100 {
			w.u8(3).i32(0).i32(0)
		}
		w.u8(0)
	}
	if _, err := ParseMetadata(encodeMetadata(6, 1, []synthOp{{id: OperatorIDFromUID("x"), par: 1, maxPar: 1, subs: []synthSub{{idx: 0, keyed: deep}}}})); err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Errorf("deep nesting: %v", err)
	}
	// A SourceReaderState that is not Kafka splits.
	bad := bytes.Clone(sub.data)
	off := sub.offsets[0]
	bad[off+7] = 9 // split serializer version 9
	sp = build(t.TempDir(), inlineHandle("x", bad), nil)
	if _, err := sp.KafkaSourceOffsets(""); err == nil || !strings.Contains(err.Error(), "serializer version 9 is not supported") {
		t.Errorf("split version: %v", err)
	}
	// An element offset outside the state.
	writeTestFile(t, dir, MetadataFileName, encodeMetadata(6, 9, []synthOp{{
		id: OperatorIDFromUID("x"), par: 1, maxPar: 128,
		subs: []synthSub{{idx: 0, states: []synthState{{SourceReaderStateName, 0, []int64{1 << 40}}}, delegate: inlineHandle("x", sub.data)}},
	}}))
	sp, err = ReadSavepoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sp.KafkaSourceOffsets(""); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("offset outside: %v", err)
	}
}

func TestMarkersAndUTF(t *testing.T) {
	topic := "t\x00é-😀"
	split := func(topic string, p int32, start, stop int64) []byte {
		s := (&jw{}).utf(topic).i32(p).i64(start).i64(stop).Bytes()
		return (&jw{}).i32(int32(8 + len(s))).i32(0).i32(int32(len(s))).raw(s).Bytes()
	}
	state := &jw{}
	state.raw([]byte("header"))
	var offs []int64
	for _, e := range [][]byte{
		split(topic, 0, 17, NoStoppingOffset),
		split("x", 1, OffsetEarliest, 500),
		split("x", 2, OffsetCommitted, OffsetLatest),
		split("x", 3, OffsetLatest, NoStoppingOffset),
	} {
		offs = append(offs, int64(state.Len()))
		state.raw(e)
	}
	sp, err := ParseMetadata(encodeMetadata(6, 1, []synthOp{{uid: "s", id: OperatorIDFromUID("s"), par: 1, maxPar: 1,
		subs: []synthSub{{idx: 0, states: []synthState{{SourceReaderStateName, 0, offs}}, delegate: inlineHandle("x", state.Bytes())}}}}))
	if err != nil {
		t.Fatal(err)
	}
	k, err := sp.KafkaSourceOffsets("s")
	if err != nil {
		t.Fatal(err)
	}
	got := k.Sorted()
	if len(got) != 4 || got[0].Topic != topic || got[0].Next != 17 || got[0].Marker != "" || got[0].Stopping != nil {
		t.Fatalf("%+v", got)
	}
	if got[1].Marker != "earliest" || *got[1].Stopping != 500 || got[1].StoppingMarker != "" {
		t.Errorf("%+v", got[1])
	}
	if got[2].Marker != "committed" || got[2].Next != -3 || *got[2].Stopping != -1 || got[2].StoppingMarker != "latest" {
		t.Errorf("%+v", got[2])
	}
	if got[3].Marker != "latest" {
		t.Errorf("%+v", got[3])
	}
	// Modified UTF-8 details: C0 80 is NUL, a surrogate pair is one rune,
	// a raw 4-byte UTF-8 sequence is malformed.
	if s, bad := decodeModifiedUTF8([]byte{0xC0, 0x80, 0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80}); bad >= 0 || s != "\x00😀" {
		t.Errorf("decode %q %d", s, bad)
	}
	if _, bad := decodeModifiedUTF8([]byte("a\xF0\x9F\x98\x80")); bad != 1 {
		t.Errorf("4-byte UTF-8 accepted: %d", bad)
	}
	if !bytes.Equal(encodeModifiedUTF8("\x00"), []byte{0xC0, 0x80}) {
		t.Error("NUL encoding")
	}
}

// TestLegacyUnionState: FlinkKafkaConsumer's union state. SYNTHETIC: no
// real fixture exists (Flink 2.x removed the consumer); the Kryo bytes are
// our own encoding of KafkaTopicPartition, in each int encoding the decoder
// accepts, checked by the cachedHash.
func TestLegacyUnionState(t *testing.T) {
	elem := func(topic string, p int32, enc kryoInt, registered bool, last int64) []byte {
		return (&jw{}).raw(kryoTopicPartition(topic, p, enc, registered)).i64(last).Bytes()
	}
	type entry struct {
		topic      string
		p          int32
		enc        kryoInt
		registered bool
		last       int64
	}
	sub := func(idx int32, es []entry) synthSub {
		state := (&jw{}).raw([]byte("backend header"))
		var offs []int64
		for _, e := range es {
			offs = append(offs, int64(state.Len()))
			state.raw(elem(e.topic, e.p, e.enc, e.registered, e.last))
		}
		// another state after it, as the backend writes them back to back
		other := int64(state.Len())
		state.raw([]byte{0, 0, 0, 1, 42})
		return synthSub{idx: idx, states: []synthState{{LegacyKafkaStateName, 1, offs}, {"other", 0, []int64{other}}}, delegate: inlineHandle("x", state.Bytes())}
	}
	long := strings.Repeat("t", 70) // > 63 chars: UTF-8 length form
	sp, err := ParseMetadata(encodeMetadata(4, 7, []synthOp{{id: OperatorIDFromUID("legacy"), par: 2, maxPar: 128, subs: []synthSub{
		sub(0, []entry{{"events", 0, kryoVarZigzag, false, 799}, {"events", 1, kryoFixed, false, legacyGroupOffs}}),
		sub(1, []entry{{"é", 2, kryoVarPos, true, 0}, {long, 12345, kryoVarZigzag, true, 41}}),
	}}}))
	if err != nil {
		t.Fatal(err)
	}
	k, err := sp.KafkaSourceOffsets("legacy") // V4: no uid field, found by the hashed id
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"events-0": 800, "events-1": legacyGroupOffs, "é-2": 1, long + "-12345": 42}
	if k.Source != SourceFlinkKafkaConsumer || !equalMaps(offsetsMap(k), want) || k.UID != "legacy" {
		t.Fatalf("%+v", k)
	}
	if p := k.Partitions["events-1"]; p.Marker != "committed" {
		t.Errorf("sentinel: %+v", p)
	}
	// A corrupted hash is refused rather than guessed.
	b := kryoTopicPartition("events", 3, kryoFixed, true)
	b[1] ^= 0x40
	if _, _, err := decodeKryoTopicPartition(b); err == nil {
		t.Error("bad cachedHash accepted")
	}
}

func TestEnumeratorVersions(t *testing.T) {
	wrap := func(ver int32, enum []byte) []byte {
		return (&jw{}).i32(1).i32(ver).i32(int32(len(enum))).raw(enum).Bytes()
	}
	v1 := (&jw{}).i32(2).utf("a").i32(0).utf("b").i32(1).Bytes()
	e, err := DecodeKafkaEnumerator(wrap(1, v1))
	if err != nil || len(e.Splits) != 2 || e.Splits[1].Topic != "b" || e.InitialDiscoveryFinished != nil {
		t.Fatalf("v1: %v %+v", err, e)
	}
	v2 := (&jw{}).i32(1).utf("a").i32(4).i32(1).u8(1).Bytes()
	e, err = DecodeKafkaEnumerator(wrap(2, v2))
	if err != nil || e.Splits[0].Status != "unassigned" || e.Splits[0].Partition != 4 || !*e.InitialDiscoveryFinished {
		t.Fatalf("v2: %v %+v", err, e)
	}
	for _, bad := range [][]byte{wrap(9, nil), wrap(2, v2[:len(v2)-1]), append(wrap(2, v2), 0), (&jw{}).i32(0).Bytes()} {
		if _, err := DecodeKafkaEnumerator(bad); err == nil {
			t.Errorf("accepted %x", bad)
		}
	}
}
