package flink

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
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
