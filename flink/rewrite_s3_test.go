package flink

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/flink/s3"
	"github.com/drconsole/drconsole/flink/s3/s3test"
)

// s3Savepoint uploads the files of the local savepoint dir under key in an
// in-memory S3 (gofakes3) and returns the store.
func s3Savepoint(t *testing.T, dir, key string) *s3.Store {
	t.Helper()
	srv := s3test.Start(t, "flink")
	store, err := s3.New(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		srv.Put(t, key+"/"+filepath.ToSlash(rel), b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return store
}

func assertEmptyS3(t *testing.T, store *s3.Store, dir string) {
	t.Helper()
	if empty, err := store.Empty(context.Background(), dir); err != nil || !empty {
		t.Errorf("%s: objects left after a failed rewrite (%v)", dir, err)
	}
}

// TestRewriteS3: a file-backed savepoint on S3 rewritten to S3: read back
// through the store, splits at their targets, files copied; identity on a
// real fixture is byte-identical; an occupied Dest is refused; a rewrite
// stopped after any write, `_metadata`'s included, leaves no object.
func TestRewriteS3(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	fileBacked(t, src, "s3://flink/savepoints/sp-1")
	fixture := filepath.Join("testdata", "savepoints", "flink-2.2.1-p2-events4-stop")
	store := s3Savepoint(t, src, "savepoints/sp-1")
	for _, name := range []string{MetadataFileName} {
		b, _ := os.ReadFile(filepath.Join(fixture, name))
		if err := store.WriteFile(context.Background(), "s3://flink/savepoints/real/"+name, b); err != nil {
			t.Fatal(err)
		}
	}
	srcSP, err := ReadSavepointFrom(store, "s3://flink/savepoints/sp-1")
	if err != nil {
		t.Fatal(err)
	}
	targets := targetsOf(t, srcSP, "", primary, plus1000)
	const dest = "s3://flink/dr/sp-1"
	// `_metadata` is the last object written: no write before it sees it.
	var order []string
	res, err := Rewrite(context.Background(), RewriteRequest{Source: "s3://flink/savepoints/sp-1", Dest: dest + "/", Files: store, Targets: targets,
		OnWrite: func(name string) error {
			order = append(order, name)
			if ok, err := store.Exists(context.Background(), dest+"/"+MetadataFileName); err != nil || ok != (name == MetadataFileName) {
				t.Errorf("after writing %s: _metadata exists %v (%v)", name, ok, err)
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(order) != 6 || order[5] != MetadataFileName {
		t.Errorf("write order %v", order)
	}
	if res.Path != dest || res.CopiedFiles != 3 {
		t.Fatalf("%+v", res)
	}
	sp, err := ReadSavepointFrom(store, dest)
	if err != nil {
		t.Fatal(err)
	}
	k, err := sp.KafkaSourceOffsets("")
	if err != nil {
		t.Fatal(err)
	}
	for key, tg := range targets {
		if p := k.Partitions["primary."+key]; p.Next != tg.Offset {
			t.Errorf("%s: %+v", key, p)
		}
	}
	for _, name := range []string{"keyed-state", "priv", "channel"} {
		want, _ := os.ReadFile(filepath.Join(src, name))
		if got, err := store.ReadFile(dest+"/"+name, 100); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %v", name, err)
		}
	}

	_, err = Rewrite(context.Background(), RewriteRequest{Source: "s3://flink/savepoints/sp-1", Dest: dest, Files: store, Targets: targets})
	if !errors.Is(err, ErrRewriteRefused) {
		t.Fatalf("occupied Dest: %v", err)
	}

	res, err = Rewrite(context.Background(), RewriteRequest{Source: "s3://flink/savepoints/real", Dest: "s3://flink/dr/real", Files: store,
		Targets: targetsFor(t, fixture, "", same, keep)})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := store.ReadFile("s3://flink/dr/real/"+MetadataFileName, maxMetadataSize)
	if !bytes.Equal(got, readMeta(t, fixture)) {
		t.Error("identity rewrite on S3 changed _metadata")
	}

	// Stopped after each write, by an error or by its context ending (the
	// clean-up must not use that context).
	for k := 1; k <= 6; k++ {
		for _, cancelIt := range []bool{false, true} {
			d := "s3://flink/dr/killed"
			ctx, cancel := context.WithCancel(context.Background())
			n := 0
			_, err := Rewrite(ctx, RewriteRequest{Source: "s3://flink/savepoints/sp-1", Dest: d, Files: store, Targets: targets,
				OnWrite: func(string) error {
					if n++; n == k {
						if cancelIt {
							cancel()
							return nil
						}
						return errors.New("killed")
					}
					return nil
				}})
			cancel()
			if err == nil {
				t.Fatalf("stopped after %d writes: no error", k)
			}
			assertEmptyS3(t, store, d)
		}
	}

	// Identity: the unchanged reader files are copied, the absolute one
	// inside the source under a relative handle.
	res, err = Rewrite(context.Background(), RewriteRequest{Source: "s3://flink/savepoints/sp-1", Dest: "s3://flink/dr/same", Files: store,
		Targets: targetsOf(t, srcSP, "", same, keep)})
	if err != nil || res.CopiedFiles != 5 {
		t.Fatalf("identity: %v %+v", err, res)
	}
	sameSP, err := ReadSavepointFrom(store, "s3://flink/dr/same")
	if err != nil {
		t.Fatal(err)
	}
	if h := sameSP.Operator(OperatorIDFromUID("kafka-source")).Subtasks[1].ManagedOperator.Delegate; h.Kind != HandleRelative || h.Path != "abs/sub1" {
		t.Errorf("absolute handle inside the source: %s", h)
	}
	if _, err := sameSP.KafkaSourceOffsets(""); err != nil {
		t.Fatal(err)
	}

	// S3 source, local Dest; local source, S3 Dest.
	local := filepath.Join(t.TempDir(), "sp")
	if _, err := Rewrite(context.Background(), RewriteRequest{Source: "s3://flink/savepoints/sp-1", Dest: local, Files: store, Targets: targets}); err != nil {
		t.Fatal(err)
	}
	if _, err := Rewrite(context.Background(), RewriteRequest{Source: local, Dest: "s3://flink/dr/from-local", Files: store,
		Targets: targetsFor(t, local, "", same, keep)}); err != nil {
		t.Fatal(err)
	}
}

// TestRewriteLeftoverNamesWhatToDelete: a destination holding what a rewrite
// stopped midway leaves (objects or a directory, no `_metadata`) is refused
// with exactly what to delete; a real savepoint there is refused without
// that advice.
func TestRewriteLeftoverNamesWhatToDelete(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	fileBacked(t, src, "s3://flink/savepoints/sp-1")
	store := s3Savepoint(t, src, "savepoints/sp-1")
	srcSP, err := ReadSavepointFrom(store, "s3://flink/savepoints/sp-1")
	if err != nil {
		t.Fatal(err)
	}
	targets := targetsOf(t, srcSP, "", primary, plus1000)
	ctx := context.Background()
	if err := store.WriteFile(ctx, "s3://flink/dr/left/keyed-state", []byte("half")); err != nil {
		t.Fatal(err)
	}
	localLeft := filepath.Join(t.TempDir(), "left")
	if err := os.MkdirAll(localLeft, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(localLeft, pendingMetadata), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for dest, want := range map[string][]string{
		"s3://flink/dr/left/": {"no _metadata", "delete every object under s3://flink/dr/left/", "aws s3 rm --recursive s3://flink/dr/left/"},
		localLeft:             {"without _metadata", "remove the directory " + localLeft + " (rm -r " + localLeft + ")"},
	} {
		_, err := Rewrite(ctx, RewriteRequest{Source: "s3://flink/savepoints/sp-1", Dest: dest, Files: store, Targets: targets})
		if !errors.Is(err, ErrRewriteRefused) {
			t.Fatalf("%s: %v, want refused", dest, err)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", dest, err, w)
			}
		}
		t.Logf("%s: %v", dest, err)
	}
	// A real savepoint at Dest: no advice to delete it.
	if _, err := Rewrite(ctx, RewriteRequest{Source: "s3://flink/savepoints/sp-1", Dest: "s3://flink/dr/sp", Files: store, Targets: targets}); err != nil {
		t.Fatal(err)
	}
	_, err = Rewrite(ctx, RewriteRequest{Source: "s3://flink/savepoints/sp-1", Dest: "s3://flink/dr/sp", Files: store, Targets: targets})
	if !errors.Is(err, ErrRewriteRefused) || strings.Contains(err.Error(), "delete") {
		t.Errorf("a savepoint at Dest: %v, want refused without advice to delete it", err)
	}
	if got, ok := Leftover(store, "s3://flink/dr/sp"); ok {
		t.Errorf("Leftover of a savepoint: %q", got)
	}
	if _, ok := Leftover(store, "s3://flink/dr/left"); !ok {
		t.Error("Leftover of objects without _metadata: false")
	}
}
