package s3

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/flink/flinktest"
	"github.com/drconsole/drconsole/flink/s3/s3test"
)

// newStore returns a Store on an in-memory S3 with a bucket "flink".
func newStore(t *testing.T) (*Store, *s3test.Server) {
	t.Helper()
	srv := s3test.Start(t, "flink")
	s, err := New(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	return s, srv
}

// A real Flink 2.2.1 savepoint read from S3 gives what it gives locally.
func TestReadSavepointFromS3(t *testing.T) {
	fixture := filepath.Join("..", "testdata", "savepoints", "flink-2.2.1-p2-events4-stop")
	meta, err := os.ReadFile(filepath.Join(fixture, flink.MetadataFileName))
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		CheckpointID int64            `json:"checkpoint_id"`
		SourceUID    string           `json:"source_uid"`
		Offsets      map[string]int64 `json:"topic_partitions"`
	}
	if b, err := os.ReadFile(filepath.Join(fixture, "expected.json")); err != nil || json.Unmarshal(b, &want) != nil || len(want.Offsets) == 0 {
		t.Fatalf("expected.json: %v %+v", err, want)
	}
	s, srv := newStore(t)
	srv.Put(t, "savepoints/savepoint-a1b2c3-5f0e1d2c3b4a/_metadata", meta)

	for _, uri := range []string{
		"s3://flink/savepoints/savepoint-a1b2c3-5f0e1d2c3b4a",
		"s3://flink/savepoints/savepoint-a1b2c3-5f0e1d2c3b4a/",
		"s3a://flink/savepoints/savepoint-a1b2c3-5f0e1d2c3b4a/_metadata",
		"s3p://flink/savepoints/savepoint-a1b2c3-5f0e1d2c3b4a",
	} {
		sp, err := flink.ReadSavepointFrom(s, uri)
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		k, err := sp.KafkaSourceOffsets("")
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		got := map[string]int64{}
		for _, p := range k.Sorted() {
			got[p.Key()] = p.Next
		}
		if sp.CheckpointID != want.CheckpointID || k.UID != want.SourceUID || !maps.Equal(got, want.Offsets) {
			t.Fatalf("%s: checkpoint %d uid %q offsets %v; want %d %q %v", uri, sp.CheckpointID, k.UID, got, want.CheckpointID, want.SourceUID, want.Offsets)
		}
		if !strings.HasSuffix(sp.Dir, "/savepoint-a1b2c3-5f0e1d2c3b4a") {
			t.Fatalf("%s: Dir %q", uri, sp.Dir)
		}
	}

	if _, err := flink.ReadSavepointFrom(s, "s3://flink/savepoints/nothing-here"); err == nil || !strings.Contains(err.Error(), "no _metadata") {
		t.Fatalf("missing savepoint: %v", err)
	}
	if _, err := flink.ReadSavepointFrom(s, "/local/path"); !errors.Is(err, flink.ErrUnsupportedLocation) {
		t.Fatalf("local path through the S3 store: %v", err)
	}
}

func TestReadFileListExists(t *testing.T) {
	ctx := context.Background()
	s, srv := newStore(t)
	srv.Put(t, "sp/savepoint-1/_metadata", []byte("0123456789"))
	srv.Put(t, "sp/savepoint-1/op-state", []byte("abc"))
	srv.Put(t, "sp/ckpt/0123456789abcdef0123456789abcdef/chk-7/_metadata", []byte("x"))
	srv.Put(t, "sp/loose-file", []byte("y"))

	if b, err := s.ReadFile("s3://flink/sp/savepoint-1/_metadata", 10); err != nil || string(b) != "0123456789" {
		t.Fatalf("ReadFile: %q %v", b, err)
	}
	if _, err := s.ReadFile("s3://flink/sp/savepoint-1/_metadata", 9); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("ReadFile over the limit: %v", err)
	}
	for _, uri := range []string{"s3://flink/sp/savepoint-1/gone", "s3://no-such-bucket/x"} {
		if _, err := s.ReadFile(uri, 10); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("ReadFile(%s): %v, want fs.ErrNotExist", uri, err)
		}
	}
	for _, uri := range []string{"file:///tmp/x", "s3:///no-bucket", "http://flink/x"} {
		if _, err := s.ReadFile(uri, 10); err == nil || errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("ReadFile(%s): %v", uri, err)
		}
	}

	files, dirs, err := s.List(ctx, "s3://flink/sp")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].URI != "s3://flink/sp/loose-file" || files[0].Size != 1 || files[0].ModTime.IsZero() {
		t.Fatalf("files %+v", files)
	}
	if want := []string{"s3://flink/sp/ckpt", "s3://flink/sp/savepoint-1"}; !slices.Equal(dirs, want) {
		t.Fatalf("subdirs %v, want %v", dirs, want)
	}
	files, dirs, err = s.List(ctx, "s3a://flink/sp/savepoint-1/")
	if err != nil || len(dirs) != 0 || len(files) != 2 || files[0].URI != "s3a://flink/sp/savepoint-1/_metadata" || files[1].Size != 3 {
		t.Fatalf("List savepoint-1: %+v %v %v", files, dirs, err)
	}

	// Keys are literal: "%2e%2e" is not "..", and "#" is part of the key.
	srv.Put(t, "sp/%2e%2e/x#1", []byte("literal"))
	srv.Put(t, "x#1", []byte("outside"))
	if b, err := s.ReadFile("s3://flink/sp/%2e%2e/x#1", 10); err != nil || string(b) != "literal" {
		t.Fatalf("ReadFile of a key with %%2e%%2e and #: %q %v", b, err)
	}
	if ok, err := s.Exists(ctx, "s3://flink/sp/savepoint-1/op-state"); !ok || err != nil {
		t.Fatalf("Exists: %v %v", ok, err)
	}
	if ok, err := s.Exists(ctx, "s3://flink/sp/savepoint-1/nope"); ok || err != nil {
		t.Fatalf("Exists(missing): %v %v", ok, err)
	}
}

// State handles naming objects outside the savepoint's directory and the
// configured roots (another bucket, elsewhere in the bucket, keys with
// "..") are refused without reading them; inside (any of the three scheme
// names) they are read.
func TestStateHandleContainment(t *testing.T) {
	s, srv := newStore(t)
	const secret = "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/TOPSECRET"
	srv.PutIn(t, "secrets", "prod/creds.env", []byte(secret))
	srv.Put(t, "other/creds.env", []byte(secret))
	state := flinktest.ReaderState("orders", 2, 77)
	srv.Put(t, "savepoints/sp-1/state", state)
	srv.Put(t, "elsewhere/state", state)

	read := func(handle []byte, roots ...string) error {
		srv.Put(t, "savepoints/sp-1/_metadata", flinktest.Metadata(handle, 0))
		sp, err := flink.ReadSavepointFrom(s, "s3://flink/savepoints/sp-1", roots...)
		if err != nil {
			return err
		}
		k, err := sp.KafkaSourceOffsets("")
		if err == nil && k.Partitions["orders-2"].Next != 77 {
			t.Fatalf("offsets %+v", k.Partitions)
		}
		return err
	}
	for _, uri := range []string{
		"s3://secrets/prod/creds.env",
		"s3a://flink/other/creds.env",
		"s3://flink/savepoints/sp-1/../../other/creds.env",
		"s3://flink/savepoints/sp-10/state", // a sibling sharing the prefix
		"s3://flink/savepoints//sp-1/state",
	} {
		err := read(flinktest.FileHandle(uri, int64(len(secret))), "s3://flink/savepoints/sp-1/sub")
		if !errors.Is(err, flink.ErrOutsideRoots) || !strings.Contains(err.Error(), uri) || strings.Contains(err.Error(), "TOPSECRET") {
			t.Fatalf("%s: %v, want ErrOutsideRoots naming it", uri, err)
		}
	}
	for _, h := range [][]byte{
		flinktest.RelativeHandle("state", int64(len(state))),
		flinktest.FileHandle("s3p://flink/savepoints/sp-1/state", int64(len(state))),
	} {
		if err := read(h); err != nil {
			t.Fatalf("inside the savepoint: %v", err)
		}
	}
	// A configured root on this storage lets a handle out of the savepoint
	// directory; a local root or another bucket's does not.
	h := flinktest.FileHandle("s3://flink/elsewhere/state", int64(len(state)))
	if err := read(h, "/tmp", "s3://secrets", "s3a://flink/elsewhere/"); err != nil {
		t.Fatalf("inside a configured root: %v", err)
	}
	if err := read(h, "/tmp", "s3://secrets", "s3://flink/elsewhere-not"); !errors.Is(err, flink.ErrOutsideRoots) {
		t.Fatalf("outside the configured roots: %v", err)
	}
}

// The store is where flink.Rewrite writes a rewritten savepoint on S3.
var _ flink.WritableFiles = (*Store)(nil)

// WriteFile, Empty and Remove on the in-memory S3: a written object reads
// back, makes its directory (and the object's own key) non-empty, and is
// gone after Remove; removing a missing object is no error.
func TestWriteEmptyRemove(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	if empty, err := s.Empty(ctx, "s3://flink/dr/sp"); err != nil || !empty {
		t.Fatalf("empty: %v %v", empty, err)
	}
	if err := s.WriteFile(ctx, "s3://flink/dr/sp/sub/x", []byte("abc")); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"s3://flink/dr/sp", "s3://flink/dr/sp/", "s3://flink/dr", "s3://flink/dr/sp/sub/x"} {
		if empty, err := s.Empty(ctx, dir); err != nil || empty {
			t.Errorf("%s: empty %v %v", dir, empty, err)
		}
	}
	if empty, err := s.Empty(ctx, "s3://flink/dr/s"); err != nil || !empty {
		t.Errorf("a prefix of a name is not its directory: %v %v", empty, err)
	}
	if b, err := s.ReadFile("s3://flink/dr/sp/sub/x", 10); err != nil || string(b) != "abc" {
		t.Fatalf("%q %v", b, err)
	}
	for range 2 {
		if err := s.Remove(ctx, "s3://flink/dr/sp/sub/x"); err != nil {
			t.Fatal(err)
		}
	}
	if empty, err := s.Empty(ctx, "s3://flink/dr/sp"); err != nil || !empty {
		t.Fatalf("after remove: %v %v", empty, err)
	}
	for _, bad := range []string{"s3://flink", "s3://flink/dir/", "/local"} {
		if err := s.WriteFile(ctx, bad, nil); err == nil {
			t.Errorf("wrote %q", bad)
		}
	}
}
