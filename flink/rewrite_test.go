package flink

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// targetsFor builds one target per split of the savepoint at dir: topic
// renamed by rename, offset by offset.
func targetsFor(t testing.TB, dir, uid string, rename func(string) string, offset func(PartitionOffset) int64) map[string]SplitTarget {
	t.Helper()
	sp, err := ReadSavepoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	return targetsOf(t, sp, uid, rename, offset)
}

func targetsOf(t testing.TB, sp *Savepoint, uid string, rename func(string) string, offset func(PartitionOffset) int64) map[string]SplitTarget {
	t.Helper()
	k, err := sp.KafkaSourceOffsets(uid)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]SplitTarget{}
	for key, p := range k.Partitions {
		out[key] = SplitTarget{Topic: rename(p.Topic), Offset: offset(p), Why: "test"}
	}
	return out
}

func same(s string) string             { return s }
func keep(p PartitionOffset) int64     { return p.Next }
func primary(s string) string          { return "primary." + s }
func plus1000(p PartitionOffset) int64 { return p.Next + 1000 + int64(p.Partition) }

func readMeta(t testing.TB, dir string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, MetadataFileName))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// assertNothingLeft: no Dest and no hidden temporary directory beside it.
func assertNothingLeft(t *testing.T, dest string) {
	t.Helper()
	if _, err := os.Lstat(dest); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s exists after a failed rewrite", dest)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(dest), "."+filepath.Base(dest)+".rewrite-*"))
	if len(left) > 0 {
		t.Errorf("temporary directories left: %v", left)
	}
}

// TestRewriteIdentity: targets equal to the current topics and offsets give
// back the source's `_metadata` byte for byte, on every real fixture.
func TestRewriteIdentity(t *testing.T) {
	for _, dir := range fixtureDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "sp")
			res, err := Rewrite(context.Background(), RewriteRequest{Source: dir, Dest: dest, Targets: targetsFor(t, dir, "", same, keep)})
			if err != nil {
				t.Fatal(err)
			}
			if res.Path != dest || len(res.RenamedTopics) != 0 || res.CopiedFiles != 0 {
				t.Fatalf("%+v", res)
			}
			if !bytes.Equal(readMeta(t, dest), readMeta(t, dir)) {
				t.Fatal("identity rewrite changed _metadata")
			}
			srcSt, _ := os.Stat(dir)
			if st, err := os.Stat(dest); err != nil || st.Mode().Perm() != srcSt.Mode().Perm() {
				t.Errorf("Dest permissions %v, source's %v", st.Mode(), srcSt.Mode())
			}
		})
	}
}

// opSpans cuts the raw bytes of each operator out of a `_metadata`.
func opSpans(t testing.TB, sp *Savepoint) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for i, op := range sp.Operators {
		end := sp.bodyEnd
		if i+1 < len(sp.Operators) {
			end = sp.Operators[i+1].Pos
		}
		out[op.ID] = sp.raw[op.Pos:end]
	}
	return out
}

// TestRewriteRename: events -> primary.events with new offsets. Read back
// with the reader, every split is at its target in its subtask, the
// enumerator decodes with the new names (its markers kept), and every
// other operator's bytes and the trailing properties are unchanged.
func TestRewriteRename(t *testing.T) {
	for _, dir := range fixtureDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			exp := readExpected(t, dir)
			targets := targetsFor(t, dir, exp.SourceUID, primary, plus1000)
			dest := filepath.Join(t.TempDir(), "sp")
			res, err := Rewrite(context.Background(), RewriteRequest{Source: dir, Dest: dest, SourceUID: exp.SourceUID, Targets: targets})
			if err != nil {
				t.Fatal(err)
			}
			old, err := ReadSavepoint(dir)
			if err != nil {
				t.Fatal(err)
			}
			sp, err := ReadSavepoint(dest)
			if err != nil {
				t.Fatal(err)
			}
			k, err := sp.KafkaSourceOffsets(exp.SourceOperatorID)
			if err != nil {
				t.Fatal(err)
			}
			oldK, _ := old.KafkaSourceOffsets(exp.SourceOperatorID)
			if len(k.Partitions) != len(targets) || len(res.Splits) != len(targets) {
				t.Fatalf("%d splits, want %d", len(k.Partitions), len(targets))
			}
			for key, tg := range targets {
				was := oldK.Partitions[key]
				p, ok := k.Partitions[tg.Topic+"-"+key[strings.LastIndex(key, "-")+1:]]
				if !ok || p.Next != tg.Offset || p.Subtask != was.Subtask || rawStopping(p) != rawStopping(was) {
					t.Errorf("%s: %+v, want %+v in subtask %d", key, p, tg, was.Subtask)
				}
			}
			for from, to := range res.RenamedTopics {
				if to != "primary."+from {
					t.Errorf("renamed %s -> %s", from, to)
				}
			}
			if len(res.RenamedTopics) != len(exp.topics()) {
				t.Errorf("renamed %v", res.RenamedTopics)
			}
			if k.Enumerator == nil {
				t.Fatalf("enumerator: %s", k.EnumeratorErr)
			}
			oldEnum := oldK.Enumerator
			if len(k.Enumerator.Splits) != len(oldEnum.Splits) || k.Enumerator.SerializerVersion != oldEnum.SerializerVersion {
				t.Fatalf("enumerator %+v, was %+v", k.Enumerator, oldEnum)
			}
			for i, e := range k.Enumerator.Splits {
				o := oldEnum.Splits[i]
				if e.Topic != "primary."+o.Topic || e.Partition != o.Partition || e.Status != o.Status || e.Marker != o.Marker {
					t.Errorf("enumerator split %+v, was %+v", e, o)
				}
			}
			newSpans, oldSpans := opSpans(t, sp), opSpans(t, old)
			for id, b := range oldSpans {
				if id == exp.SourceOperatorID {
					if bytes.Equal(b, newSpans[id]) {
						t.Error("source operator unchanged")
					}
					continue
				}
				if !bytes.Equal(b, newSpans[id]) {
					t.Errorf("operator %s changed", id)
				}
			}
			if !bytes.Equal(sp.raw[sp.bodyEnd:], old.raw[old.bodyEnd:]) || !bytes.Equal(sp.raw[:old.Operators[0].Pos], old.raw[:old.Operators[0].Pos]) {
				t.Error("header or CheckpointProperties changed")
			}
		})
	}
}

func (e fixtureExpected) topics() map[string]bool {
	out := map[string]bool{}
	for k := range e.TopicPartitions {
		out[k[:strings.LastIndex(k, "-")]] = true
	}
	return out
}

// fileBacked writes a V6 savepoint in dir around the real events4 reader
// state: subtask 0's stream in a relative file with a second named state
// ("other", two elements after the splits), subtask 1's in an absolute
// file inside dir; a keyed operator with a relative key-groups file and an
// incremental handle's private relative file; relative channel state. It
// returns the extra state's element bytes. absDir names dir in the
// absolute handle ("": dir as a file: URI).
func fileBacked(t testing.TB, dir, absDir string) (other [][]byte) {
	t.Helper()
	rs := realSourceState(t, "flink-2.2.1-p2-events4-stop")
	other = [][]byte{appendI32(nil, 0x0badcafe), []byte("\x00\x00\x00\x03xyz")}
	sub0 := append(append([]byte(nil), rs.subtasks[0].data...), append(other[0], other[1]...)...)
	otherOffs := []int64{int64(len(rs.subtasks[0].data)), int64(len(rs.subtasks[0].data) + len(other[0]))}
	writeTestFile(t, dir, "state/sub0", sub0)
	abs := "file://" + filepath.ToSlash(writeTestFile(t, dir, "abs/sub1", rs.subtasks[1].data))
	if absDir != "" {
		abs = absDir + "/abs/sub1"
	}
	writeTestFile(t, dir, "keyed-state", []byte("kkkkk"))
	writeTestFile(t, dir, "priv", []byte("p"))
	writeTestFile(t, dir, "channel", []byte("123456789"))
	subs := []synthSub{
		{idx: 0, states: []synthState{{SourceReaderStateName, 0, rs.subtasks[0].offsets}, {"other", 1, otherOffs}},
			delegate: relativeHandle("state/sub0", int64(len(sub0)))},
		{idx: 1, states: []synthState{{SourceReaderStateName, 0, rs.subtasks[1].offsets}},
			delegate: fileHandle(abs, int64(len(rs.subtasks[1].data))),
			output: func(w *jw) {
				w.i32(1).u8(4).i32(0).i64(9)
				relativeHandle("channel", 9)(w)
				w.i32(2).raw([]byte{7, 8})
			}},
	}
	ops := []synthOp{
		{name: "count-per-key", uid: "count-per-key", id: OperatorIDFromUID("count-per-key"), par: 2, maxPar: 128,
			subs: []synthSub{{idx: 0, keyed: keyedKinds["key-groups-v2(12)"]}, {idx: 1, keyed: keyedKinds["incremental-v2(11)"]}}},
		{name: "Source: kafka-source", uid: "kafka-source", id: OperatorIDFromUID("kafka-source"), par: 2, maxPar: 128, coord: rs.coord, subs: subs},
	}
	writeTestFile(t, dir, MetadataFileName, encodeMetadata(6, 42, ops))
	return other
}

// TestRewriteFileBacked: file-backed reader state goes to new relative
// files, the other named state's elements keep their bytes at their moved
// offsets, every other state file is copied under its name, the absolute
// handle inside the source becomes relative, and the old reader files are
// not carried over.
func TestRewriteFileBacked(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	other := fileBacked(t, src, "")
	dest := filepath.Join(t.TempDir(), "sp")
	targets := targetsFor(t, src, "kafka-source", primary, plus1000)
	checked, err := CheckRewrite(context.Background(), RewriteRequest{Source: src, Dest: dest, Targets: targets})
	if err != nil || checked.CopiedFiles != 3 || checked.CopiedBytes != 5+1+9 || len(checked.Splits) != 4 || checked.Path != "" {
		t.Fatalf("check: %v %+v", err, checked)
	}
	assertNothingLeft(t, dest)
	var written []string
	res, err := Rewrite(context.Background(), RewriteRequest{Source: src, Dest: dest, Targets: targets,
		OnWrite: func(n string) error { written = append(written, n); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if res.CopiedFiles != 3 || res.CopiedBytes != 5+1+9 {
		t.Errorf("copied %d files, %d bytes", res.CopiedFiles, res.CopiedBytes)
	}
	if len(written) != 6 || written[len(written)-1] != MetadataFileName {
		t.Errorf("written %v", written)
	}
	for _, name := range []string{"keyed-state", "priv", "channel"} {
		a, _ := os.ReadFile(filepath.Join(src, name))
		b, err := os.ReadFile(filepath.Join(dest, name))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s not copied: %v", name, err)
		}
	}
	for _, gone := range []string{"state", "abs"} {
		if _, err := os.Stat(filepath.Join(dest, gone)); err == nil {
			t.Errorf("old reader state %s carried over", gone)
		}
	}
	sp, err := ReadSavepoint(dest)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range sp.fileHandles {
		if h.Kind != HandleRelative {
			t.Errorf("%s handle left", h)
		}
	}
	k, err := sp.KafkaSourceOffsets("kafka-source")
	if err != nil {
		t.Fatal(err)
	}
	for key, tg := range targets {
		if p := k.Partitions["primary."+key]; p.Next != tg.Offset {
			t.Errorf("%s: %+v, want %d", key, p, tg.Offset)
		}
	}
	h := sp.Operator(OperatorIDFromUID("kafka-source")).Subtasks[0].ManagedOperator
	data, err := sp.HandleBytes(h.Delegate)
	if err != nil {
		t.Fatal(err)
	}
	for i, off := range h.State("other").Offsets {
		if got := data[off : off+int64(len(other[i]))]; !bytes.Equal(got, other[i]) {
			t.Errorf("other element %d at %d: % x, want % x", i, off, got, other[i])
		}
	}
	if int(h.State("other").Offsets[1])+len(other[1]) != len(data) {
		t.Error("other state's last element no longer ends the stream")
	}

	// Identity on the same source: the reader files are unchanged, so they
	// are copied, the absolute one under a relative handle.
	dest2 := filepath.Join(t.TempDir(), "same")
	res, err = Rewrite(context.Background(), RewriteRequest{Source: src, Dest: dest2, Targets: targetsFor(t, src, "", same, keep)})
	if err != nil {
		t.Fatal(err)
	}
	if res.CopiedFiles != 5 {
		t.Errorf("identity copied %d files", res.CopiedFiles)
	}
	sp2, err := ReadSavepoint(dest2)
	if err != nil {
		t.Fatal(err)
	}
	if h := sp2.Operator(OperatorIDFromUID("kafka-source")).Subtasks[1].ManagedOperator.Delegate; h.Kind != HandleRelative || h.Path != "abs/sub1" {
		t.Errorf("absolute handle inside the source: %s", h)
	}
}

// TestRewriteManySplits: 1,000 splits, every one at its target.
func TestRewriteManySplits(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	targets := bigSavepoint(t, src, 1000)
	dest := filepath.Join(t.TempDir(), "sp")
	res, err := Rewrite(context.Background(), RewriteRequest{Source: src, Dest: dest, Targets: targets})
	if err != nil {
		t.Fatal(err)
	}
	sp, err := ReadSavepoint(dest)
	if err != nil {
		t.Fatal(err)
	}
	k, err := sp.KafkaSourceOffsets("")
	if err != nil {
		t.Fatal(err)
	}
	if len(k.Partitions) != 1000 || len(res.Splits) != 1000 || k.Enumerator == nil || len(k.Enumerator.Splits) != 1000 {
		t.Fatalf("%d splits", len(k.Partitions))
	}
	for key, tg := range targets {
		if p := k.Partitions["primary."+key]; p.Next != tg.Offset {
			t.Fatalf("%s: %+v", key, p)
		}
	}
}

// refuse runs a rewrite expected to be refused with a message holding
// want, and checks nothing is left.
func refuse(t *testing.T, req RewriteRequest, want string) {
	t.Helper()
	if req.Dest == "" {
		req.Dest = filepath.Join(t.TempDir(), "sp")
	}
	_, err := Rewrite(context.Background(), req)
	if !errors.Is(err, ErrRewriteRefused) || !strings.Contains(err.Error(), want) {
		t.Fatalf("err %v, want ErrRewriteRefused with %q", err, want)
	}
	assertNothingLeft(t, req.Dest)
}

func withMeta(t *testing.T, meta []byte) string {
	dir := filepath.Join(t.TempDir(), "src")
	writeTestFile(t, dir, MetadataFileName, meta)
	return dir
}

func TestRewriteRefusals(t *testing.T) {
	fixture := filepath.Join("testdata", "savepoints", "flink-2.2.1-p2-events4-stop")
	good := func() map[string]SplitTarget { return targetsFor(t, fixture, "", primary, plus1000) }
	rs := realSourceState(t, "flink-2.2.1-p2-events4-stop")
	sourceOp := func(coord []byte, subs ...synthSub) []synthOp {
		return []synthOp{{name: "Source: kafka-source", uid: "kafka-source", id: OperatorIDFromUID("kafka-source"), par: 1, maxPar: 128, coord: coord, subs: subs}}
	}
	inlineSub := func(data []byte, states ...synthState) synthSub {
		return synthSub{idx: 0, states: states, delegate: inlineHandle("x", data)}
	}
	reader := synthState{SourceReaderStateName, 0, rs.subtasks[0].offsets}
	sub0Targets := func(dir string) map[string]SplitTarget { return targetsFor(t, dir, "", primary, plus1000) }

	t.Run("missing target", func(t *testing.T) {
		tg := good()
		delete(tg, "events-2")
		delete(tg, "events-0")
		refuse(t, RewriteRequest{Source: fixture, Targets: tg}, "no target for 2 split(s): events-0, events-2")
		if _, err := CheckRewrite(context.Background(), RewriteRequest{Source: fixture, Targets: tg}); !errors.Is(err, ErrRewriteRefused) {
			t.Fatalf("check: %v", err)
		}
	})
	t.Run("committed marker", func(t *testing.T) {
		tg := good()
		tg["events-1"] = SplitTarget{Topic: "primary.events", Offset: OffsetCommitted}
		refuse(t, RewriteRequest{Source: fixture, Targets: tg}, "events-1: the committed-offset marker")
	})
	t.Run("unknown marker", func(t *testing.T) {
		tg := good()
		tg["events-1"] = SplitTarget{Topic: "primary.events", Offset: -7}
		refuse(t, RewriteRequest{Source: fixture, Targets: tg}, "offset -7")
	})
	t.Run("no topic", func(t *testing.T) {
		tg := good()
		tg["events-1"] = SplitTarget{Offset: 5}
		refuse(t, RewriteRequest{Source: fixture, Targets: tg}, "events-1: no DR topic")
	})
	t.Run("split topic", func(t *testing.T) {
		tg := good()
		tg["events-1"] = SplitTarget{Topic: "other", Offset: 5}
		refuse(t, RewriteRequest{Source: fixture, Targets: tg}, "goes to both")
	})
	t.Run("extra target", func(t *testing.T) {
		tg := good()
		tg["events-9"] = SplitTarget{Topic: "primary.events", Offset: 5}
		refuse(t, RewriteRequest{Source: fixture, Targets: tg}, "no split of: events-9")
	})
	t.Run("dest exists", func(t *testing.T) {
		for _, mk := range []func(string) error{
			func(p string) error { return os.Mkdir(p, 0o755) },
			func(p string) error { return os.WriteFile(p, []byte("x"), 0o644) },
		} {
			dest := filepath.Join(t.TempDir(), "sp")
			if err := mk(dest); err != nil {
				t.Fatal(err)
			}
			_, err := Rewrite(context.Background(), RewriteRequest{Source: fixture, Dest: dest, Targets: good()})
			if !errors.Is(err, ErrRewriteRefused) || !strings.Contains(err.Error(), "exists") {
				t.Fatalf("err %v", err)
			}
			if left, _ := filepath.Glob(filepath.Join(filepath.Dir(dest), ".sp.rewrite-*")); len(left) > 0 {
				t.Fatalf("left %v", left)
			}
		}
	})
	t.Run("dest inside source", func(t *testing.T) {
		src := withMeta(t, readMeta(t, fixture))
		refuse(t, RewriteRequest{Source: src, Dest: filepath.Join(src, "new"), Targets: good()}, "overlaps the source")
		link := filepath.Join(t.TempDir(), "link")
		if err := os.Symlink(src, link); err != nil {
			t.Fatal(err)
		}
		refuse(t, RewriteRequest{Source: src, Dest: filepath.Join(link, "new"), Targets: good()}, "through a symbolic link")
		if ents, _ := os.ReadDir(src); len(ents) != 1 {
			t.Errorf("source directory holds %d entries", len(ents))
		}
	})
	t.Run("unknown enumerator version", func(t *testing.T) {
		coord := (&jw{}).i32(1).i32(9).i32(0).Bytes()
		src := withMeta(t, encodeMetadata(6, 1, sourceOp(coord, inlineSub(rs.subtasks[0].data, reader))))
		refuse(t, RewriteRequest{Source: src, Targets: sub0Targets(src)}, "KafkaSourceEnumStateSerializer version 9")
	})
	t.Run("unknown coordinator serde version", func(t *testing.T) {
		coord := append([]byte{0, 0, 0, 2}, rs.coord[4:]...)
		src := withMeta(t, encodeMetadata(6, 1, sourceOp(coord, inlineSub(rs.subtasks[0].data, reader))))
		refuse(t, RewriteRequest{Source: src, Targets: sub0Targets(src)}, "coordinator serde version 2")
	})
	t.Run("compressed operator state", func(t *testing.T) {
		data := append([]byte(nil), rs.subtasks[0].data...)
		data[4] = 1
		src := withMeta(t, encodeMetadata(6, 1, sourceOp(rs.coord, inlineSub(data, reader))))
		refuse(t, RewriteRequest{Source: src, Targets: sub0Targets(src)}, "snapshot compression")
	})
	t.Run("unknown backend version", func(t *testing.T) {
		data := append([]byte(nil), rs.subtasks[0].data...)
		data[3] = 7
		src := withMeta(t, encodeMetadata(6, 1, sourceOp(rs.coord, inlineSub(data, reader))))
		refuse(t, RewriteRequest{Source: src, Targets: sub0Targets(src)}, "operator state backend version 7")
	})
	t.Run("unknown split serializer version", func(t *testing.T) {
		data := append([]byte(nil), rs.subtasks[0].data...)
		data[rs.subtasks[0].offsets[0]+7] = 1
		src := withMeta(t, encodeMetadata(6, 1, sourceOp(rs.coord, inlineSub(data, reader))))
		_, err := Rewrite(context.Background(), RewriteRequest{Source: src, Dest: filepath.Join(t.TempDir(), "sp"), Targets: map[string]SplitTarget{}})
		if !errors.Is(err, ErrRewriteRefused) || !strings.Contains(err.Error(), "serializer version 1 is not supported") {
			t.Fatal(err)
		}
	})
	t.Run("other state inside a split", func(t *testing.T) {
		off := rs.subtasks[0].offsets
		src := withMeta(t, encodeMetadata(6, 1, sourceOp(rs.coord, inlineSub(rs.subtasks[0].data, reader, synthState{"x", 0, []int64{off[0] + 3}}))))
		refuse(t, RewriteRequest{Source: src, Targets: sub0Targets(src)}, `state "x" has an element at byte`)
	})
	t.Run("legacy consumer state", func(t *testing.T) {
		src := withMeta(t, encodeMetadata(6, 1, sourceOp(nil, inlineSub(rs.subtasks[0].data, reader, synthState{LegacyKafkaStateName, 1, nil}))))
		refuse(t, RewriteRequest{Source: src, Targets: map[string]SplitTarget{}}, "legacy FlinkKafkaConsumer")
	})
	t.Run("absolute file outside", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "src")
		buildSynthetic(t, 6, dir)
		writeTestFile(t, dir, "channel", []byte("123456789"))
		refuse(t, RewriteRequest{Source: dir, Targets: targetsFor(t, dir, "", primary, keep)}, "file:///tmp/shared/000001.sst")
	})
	t.Run("relative file missing", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "src")
		fileBacked(t, dir, "")
		os.Remove(filepath.Join(dir, "priv"))
		refuse(t, RewriteRequest{Source: dir, Targets: targetsFor(t, dir, "", primary, keep)}, "priv")
	})
	t.Run("relative file shorter than declared", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "src")
		fileBacked(t, dir, "")
		os.WriteFile(filepath.Join(dir, "channel"), []byte("1234"), 0o644)
		refuse(t, RewriteRequest{Source: dir, Targets: targetsFor(t, dir, "", primary, keep)}, "channel has 4 bytes")
	})
	t.Run("v3 trailing bytes", func(t *testing.T) {
		meta := append(encodeMetadata(3, 1, sourceOp(rs.coord, inlineSub(rs.subtasks[0].data, reader))), 1, 2, 3)
		src := withMeta(t, meta)
		refuse(t, RewriteRequest{Source: src, Targets: sub0Targets(src)}, "3 bytes after its body")
	})
	t.Run("bounded split moved", func(t *testing.T) {
		stop := int64(5000)
		data, offsets := readerStream(t, rs, []PartitionOffset{{Topic: "events", Partition: 0, Next: 10, Stopping: &stop}}, nil)
		src := withMeta(t, encodeMetadata(6, 1, sourceOp(nil, inlineSub(data, synthState{SourceReaderStateName, 0, offsets}))))
		refuse(t, RewriteRequest{Source: src, Targets: sub0Targets(src)}, "events-0: a bounded split stopping at offset 5000")
		// Same offsets (an offset-preserving mirror): the stop still holds.
		dest := filepath.Join(t.TempDir(), "sp")
		if _, err := Rewrite(context.Background(), RewriteRequest{Source: src, Dest: dest, Targets: targetsFor(t, src, "", primary, keep)}); err != nil {
			t.Fatal(err)
		}
		sp, _ := ReadSavepoint(dest)
		if k, err := sp.KafkaSourceOffsets(""); err != nil || *k.Partitions["primary.events-0"].Stopping != 5000 {
			t.Fatalf("%v %+v", err, k)
		}
	})
	t.Run("enumerator offset without reader split", func(t *testing.T) {
		f := byte(1)
		l := &enumLayout{coordVersion: 1, enumVersion: 3, finished: &f, splits: []enumEntry{
			{topic: "events", partition: 1, start: OffsetCommitted, stop: NoStoppingOffset},
			{topic: "events", partition: 7, start: 123, stop: NoStoppingOffset},
		}}
		coord, _ := l.encode()
		src := withMeta(t, encodeMetadata(6, 1, sourceOp(coord, inlineSub(rs.subtasks[0].data, reader))))
		refuse(t, RewriteRequest{Source: src, Targets: sub0Targets(src)}, "holds an offset for partition events-7")
	})
	t.Run("enumerator partition without reader split", func(t *testing.T) {
		coord := enumV3(t, []PartitionOffset{{Topic: "events", Partition: 1}, {Topic: "events", Partition: 3}, {Topic: "orders", Partition: 0}})
		src := withMeta(t, encodeMetadata(6, 1, sourceOp(coord, inlineSub(rs.subtasks[0].data, reader))))
		refuse(t, RewriteRequest{Source: src, Targets: sub0Targets(src)}, "partition orders-0, whose topic no reader split holds")
	})
}

// TestRewriteEnumeratorKeepsUnassigned: a partition the enumerator knows
// but no reader holds is renamed with its topic, its marker kept; a v3
// offset of a reader's partition moves to that reader's target.
func TestRewriteEnumeratorKeepsUnassigned(t *testing.T) {
	rs := realSourceState(t, "flink-2.2.1-p2-events4-stop")
	f := byte(1)
	l := &enumLayout{coordVersion: 1, enumVersion: 3, finished: &f, splits: []enumEntry{
		{topic: "events", partition: 1, start: 77, stop: NoStoppingOffset},
		{topic: "events", partition: 3, start: OffsetEarliest, stop: NoStoppingOffset},
		{topic: "events", partition: 9, start: OffsetCommitted, stop: NoStoppingOffset, status: 1},
	}}
	coord, _ := l.encode()
	src := withMeta(t, encodeMetadata(6, 1, []synthOp{{name: "s", uid: "s", id: OperatorIDFromUID("s"), par: 1, maxPar: 128, coord: coord,
		subs: []synthSub{{idx: 0, states: []synthState{{SourceReaderStateName, 0, rs.subtasks[0].offsets}}, delegate: inlineHandle("x", rs.subtasks[0].data)}}}}))
	dest := filepath.Join(t.TempDir(), "sp")
	targets := targetsFor(t, src, "", primary, plus1000)
	if _, err := Rewrite(context.Background(), RewriteRequest{Source: src, Dest: dest, Targets: targets}); err != nil {
		t.Fatal(err)
	}
	sp, _ := ReadSavepoint(dest)
	k, _ := sp.KafkaSourceOffsets("")
	e := k.Enumerator.Splits
	if e[0].Topic != "primary.events" || *e[0].Offset != targets["events-1"].Offset || *e[1].Offset != OffsetEarliest ||
		e[2].Topic != "primary.events" || *e[2].Offset != OffsetCommitted || e[2].Status != "unassigned" {
		t.Fatalf("%+v", e)
	}
}

// TestRewriteStoppedMidway: a rewrite stopped after each of its writes (an
// error from OnWrite, or its context cancelled there) leaves nothing at
// Dest and no temporary directory; so does a context cancelled up front.
func TestRewriteStoppedMidway(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	fileBacked(t, src, "")
	targets := targetsFor(t, src, "", primary, plus1000)
	const writes = 6 // 2 new reader files, 3 copies, _metadata
	for k := 1; k <= writes; k++ {
		for _, how := range []string{"error", "cancel"} {
			ctx, cancel := context.WithCancel(context.Background())
			dest := filepath.Join(t.TempDir(), "sp")
			n := 0
			_, err := Rewrite(ctx, RewriteRequest{Source: src, Dest: dest, Targets: targets, OnWrite: func(string) error {
				// What a crash here would leave: no Dest, and no
				// `_metadata` anywhere a catalog scan could find it.
				if _, err := os.Lstat(dest); err == nil {
					t.Errorf("Dest exists before the rewrite is checked")
				}
				if m, _ := filepath.Glob(filepath.Join(filepath.Dir(dest), "*", MetadataFileName)); len(m) > 0 {
					t.Errorf("a _metadata before the rewrite is checked: %v", m)
				}
				if m, _ := filepath.Glob(filepath.Join(filepath.Dir(dest), ".*", MetadataFileName)); len(m) > 0 {
					t.Errorf("a _metadata before the rewrite is checked: %v", m)
				}
				if n++; n == k {
					if how == "cancel" {
						cancel()
						return nil
					}
					return errors.New("killed")
				}
				return nil
			}})
			cancel()
			if err == nil || (how == "cancel" && !errors.Is(err, context.Canceled)) {
				t.Fatalf("stopped after %d writes (%s): %v", k, how, err)
			}
			assertNothingLeft(t, dest)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dest := filepath.Join(t.TempDir(), "sp")
	if _, err := Rewrite(ctx, RewriteRequest{Source: src, Dest: dest, Targets: targets}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	assertNothingLeft(t, dest)
}

// TestRewriteCorrupt: mutated real `_metadata` bytes are rewritten or
// refused, never a panic, and a refusal leaves nothing.
func TestRewriteCorrupt(t *testing.T) {
	for _, dir := range fixtureDirs(t) {
		meta := readMeta(t, dir)
		targets := targetsFor(t, dir, "", primary, plus1000)
		rnd := rand.New(rand.NewPCG(1, uint64(len(meta))))
		for i := range 150 {
			b := append([]byte(nil), meta...)
			for range 1 + rnd.IntN(3) {
				b[8+rnd.IntN(len(b)-8)] ^= byte(1 + rnd.IntN(255))
			}
			if i%10 == 0 {
				b = b[:rnd.IntN(len(b))]
			}
			src := withMeta(t, b)
			dest := filepath.Join(t.TempDir(), "sp")
			if _, err := Rewrite(context.Background(), RewriteRequest{Source: src, Dest: dest, Targets: targets}); err != nil {
				assertNothingLeft(t, dest)
			}
		}
	}
}

// TestEnumLayoutRoundTrip: the enumerator layout the decoder and the
// rewriter share writes back exactly what it read, in every version (v2
// and v3 from real Flink 1.20.3, 2.2.1 and 2.3.0, v1 built), and renames v1 topics.
func TestEnumLayoutRoundTrip(t *testing.T) {
	v1 := (&jw{}).i32(2).utf("a").i32(0).utf("b").i32(1).Bytes()
	inputs := [][]byte{(&jw{}).i32(1).i32(1).i32(int32(len(v1))).raw(v1).Bytes()}
	for _, f := range []string{"flink-1.20.3-p2-events4-stop", "flink-2.2.1-p2-events4-stop", "flink-2.2.1-p1-orders2-users3-stop", "flink-2.3.0-p2-events4-stop"} {
		inputs = append(inputs, realSourceState(t, f).coord)
	}
	for i, b := range inputs {
		l, err := parseEnumLayout(b)
		if err != nil {
			t.Fatal(err)
		}
		out, err := l.encode()
		if err != nil || !bytes.Equal(out, b) {
			t.Fatalf("input %d: %v\n% x\n% x", i, err, out, b)
		}
	}
	offs := &KafkaOffsets{Partitions: map[string]PartitionOffset{"a-0": {Topic: "a"}, "b-1": {Topic: "b", Partition: 1}}}
	out, err := rewriteEnumerator(inputs[0], offs, map[string]SplitTarget{"a-0": {Topic: "dr.a"}, "b-1": {Topic: "dr.b"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := DecodeKafkaEnumerator(out)
	if err != nil || e.SerializerVersion != 1 || e.Splits[0].Topic != "dr.a" || e.Splits[1].Topic != "dr.b" || e.Splits[1].Partition != 1 {
		t.Fatalf("%v %+v", err, e)
	}
}

// TestRewriteRemovesLeftoverBuilds: the hidden build directories crashed
// rewrites of the same Dest left (nobody holds their lock) are removed by
// the next rewrite and reported; a running rewrite's (locked), another
// Dest's, and a symbolic link named like one are left alone, and a
// rewrite's own build directory is locked while it runs.
func TestRewriteRemovesLeftoverBuilds(t *testing.T) {
	src := fixtureDirs(t)[0]
	parent := t.TempDir()
	dest := filepath.Join(parent, "sp")
	mk := func(name string, files ...string) string {
		t.Helper()
		dir := filepath.Join(parent, name)
		if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o700); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(dir, f), []byte("half a copy"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	crashed := []string{mk(".sp.rewrite-1111", pendingMetadata, "sub/state"), mk(".sp.rewrite-2222")}
	running := mk(".sp.rewrite-3333", "sub/state")
	lock, err := lockBuild(running)
	if err != nil {
		t.Fatal(err)
	}
	other := mk(".other.rewrite-4444", "sub/state")
	link := filepath.Join(parent, ".sp.rewrite-5555")
	if err := os.Symlink(other, link); err != nil {
		t.Fatal(err)
	}
	var during []string
	res, err := Rewrite(context.Background(), RewriteRequest{Source: src, Dest: dest, Targets: targetsFor(t, src, "", primary, plus1000),
		OnWrite: func(string) error {
			// Another rewrite of the same Dest starting now must not take
			// this one's build directory for a leftover.
			removed, err := removeLeftoverBuilds(parent, "sp")
			during = append(during, removed...)
			return err
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(during) != 0 {
		t.Errorf("while the rewrite ran, a second cleanup removed %v", during)
	}
	if !slices.Equal(res.RemovedLeftovers, crashed) {
		t.Errorf("RemovedLeftovers %v, want %v", res.RemovedLeftovers, crashed)
	}
	for _, d := range crashed {
		if _, err := os.Lstat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s, left by a crashed rewrite, is still there (%v)", d, err)
		}
	}
	for _, d := range []string{running, other, link, filepath.Join(other, "sub", "state")} {
		if _, err := os.Lstat(d); err != nil {
			t.Errorf("%s should be left alone: %v", d, err)
		}
	}
	if _, err := ReadSavepoint(dest); err != nil {
		t.Fatal(err)
	}
	// Once its rewrite is gone (the lock released), it is a leftover too.
	lock.Close()
	if removed, err := removeLeftoverBuilds(parent, "sp"); err != nil || !slices.Equal(removed, []string{running}) {
		t.Errorf("after the lock is released: removed %v (%v), want %s", removed, err, running)
	}
	if left, _ := filepath.Glob(filepath.Join(parent, ".sp.rewrite-*")); !slices.Equal(left, []string{link}) {
		t.Errorf("left %v, want only the symbolic link %s", left, link)
	}
}
