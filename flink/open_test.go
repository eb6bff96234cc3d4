package flink

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drconsole/drconsole/flink/flinktest"
)

// secret is what a crafted savepoint tries to read: text, as a secrets
// file holds.
const secret = "db_password=Hunter2-TOPSECRET-7f3a9c\napi_token=ZXhmaWx0cmF0ZWQ\n"

// leaks returns the forms of secret's bytes found in s.
func leaks(s string) []string { return flinktest.Leaks(secret, s) }

// writeSecret writes the secret into a directory of its own.
func writeSecret(t *testing.T) string {
	t.Helper()
	return writeTestFile(t, t.TempDir(), "secrets.env", []byte(secret))
}

// offsetsErr reads dir (with roots) and returns the error of reading its
// Kafka offsets, or of reading the savepoint.
func offsetsErr(t *testing.T, dir string, roots ...string) error {
	t.Helper()
	sp, err := ReadSavepoint(dir, roots...)
	if err != nil {
		return err
	}
	_, err = sp.KafkaSourceOffsets("")
	return err
}

// A _metadata naming an absolute path outside the savepoint: refused, the
// error names the handle and holds none of the file's bytes, whatever the
// offsets _metadata gives.
func TestAbsoluteHandleOutsideRefused(t *testing.T) {
	p := writeSecret(t)
	for _, off := range []int64{0, 3, 12, 40} {
		dir := t.TempDir()
		writeTestFile(t, dir, MetadataFileName, flinktest.Metadata(flinktest.FileHandle(p, int64(len(secret))), off))
		err := offsetsErr(t, dir)
		if !errors.Is(err, ErrOutsideRoots) || !strings.Contains(err.Error(), p) {
			t.Fatalf("offset %d: %v, want ErrOutsideRoots naming %s", off, err, p)
		}
		if l := leaks(err.Error()); len(l) > 0 {
			t.Fatalf("offset %d: the error shows the secret (%q): %v", off, l, err)
		}
		// file: URI form too.
		writeTestFile(t, dir, MetadataFileName, flinktest.Metadata(flinktest.FileHandle("file://"+p, int64(len(secret))), off))
		if err := offsetsErr(t, dir); !errors.Is(err, ErrOutsideRoots) || len(leaks(err.Error())) > 0 {
			t.Fatalf("offset %d, file: URI: %v", off, err)
		}
	}
}

// Inside a configured root the same absolute handle is read; moving the
// savepoint away from its absolute state leaves it refused, and when the
// old place is a root but gone, missing.
func TestAbsoluteHandleInsideRoot(t *testing.T) {
	state := flinktest.ReaderState("orders", 3, 1234)
	root := t.TempDir()
	abs := writeTestFile(t, root, "job/chk-1/state", state)
	dir := filepath.Join(root, "job", "chk-1")
	writeTestFile(t, dir, MetadataFileName, flinktest.Metadata(flinktest.FileHandle(abs, int64(len(state))), 0))
	sp, err := ReadSavepoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	if k, err := sp.KafkaSourceOffsets(""); err != nil || k.Partitions["orders-3"].Next != 1234 {
		t.Fatalf("own directory: %+v %v", k, err)
	}
	other := t.TempDir()
	writeTestFile(t, other, MetadataFileName, flinktest.Metadata(flinktest.FileHandle(abs, int64(len(state))), 0))
	if err := offsetsErr(t, other); !errors.Is(err, ErrOutsideRoots) {
		t.Fatalf("outside, no root: %v", err)
	}
	if err := offsetsErr(t, other, "s3://b/x", "file:"+root); err != nil {
		t.Fatalf("inside a configured root: %v", err)
	}
	if err := os.Remove(abs); err != nil {
		t.Fatal(err)
	}
	if err := offsetsErr(t, other, root); !errors.Is(err, ErrStateFileMissing) {
		t.Fatalf("gone: %v", err)
	}
}

// A _metadata that is a symbolic link leading out of the directory is
// refused, even to a sound _metadata; one leading to a file inside is read.
func TestSymlinkedMetadata(t *testing.T) {
	state := flinktest.ReaderState("orders", 0, 5)
	outside := writeTestFile(t, t.TempDir(), MetadataFileName, flinktest.Metadata(flinktest.RelativeHandle("state", int64(len(state))), 0))
	writeTestFile(t, filepath.Dir(outside), "state", state)
	dir := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, MetadataFileName)); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, filepath.Join(dir, MetadataFileName)} {
		if _, err := ReadSavepoint(p); !errors.Is(err, ErrOutsideRoots) {
			t.Fatalf("%s: %v, want ErrOutsideRoots", p, err)
		}
	}
	// A link to the secret: refused before a byte is parsed.
	secretLink := t.TempDir()
	if err := os.Symlink(writeSecret(t), filepath.Join(secretLink, MetadataFileName)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSavepoint(secretLink); !errors.Is(err, ErrOutsideRoots) || len(leaks(err.Error())) > 0 {
		t.Fatalf("link to a secret: %v", err)
	}
	// Inside: a link to a sound _metadata in a subdirectory is read.
	inside := t.TempDir()
	real := writeTestFile(t, inside, "real/"+MetadataFileName, flinktest.Metadata(flinktest.RelativeHandle("real/state", int64(len(state))), 0))
	writeTestFile(t, inside, "real/state", state)
	if err := os.Symlink(real, filepath.Join(inside, MetadataFileName)); err != nil {
		t.Fatal(err)
	}
	if err := offsetsErr(t, inside); err != nil {
		t.Fatalf("link inside: %v", err)
	}
}

// A state file inside the directory that is a link leading out: refused.
func TestSymlinkedStateFile(t *testing.T) {
	state := flinktest.ReaderState("orders", 0, 5)
	target := writeTestFile(t, t.TempDir(), "state", state)
	dir := t.TempDir()
	writeTestFile(t, dir, MetadataFileName, flinktest.Metadata(flinktest.RelativeHandle("state", int64(len(state))), 0))
	if err := os.Symlink(target, filepath.Join(dir, "state")); err != nil {
		t.Fatal(err)
	}
	if err := offsetsErr(t, dir); !errors.Is(err, ErrOutsideRoots) || !strings.Contains(err.Error(), filepath.Join(dir, "state")) {
		t.Fatalf("link to a sound state file outside: %v", err)
	}
	// A directory link leading out, under a relative path.
	if err := os.Remove(filepath.Join(dir, "state")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(target), filepath.Join(dir, "sub")); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, dir, MetadataFileName, flinktest.Metadata(flinktest.RelativeHandle("sub/state", int64(len(state))), 0))
	if err := offsetsErr(t, dir); !errors.Is(err, ErrOutsideRoots) {
		t.Fatalf("directory link outside: %v", err)
	}
	// The same link is fine when the target is inside a configured root.
	if err := offsetsErr(t, dir, filepath.Dir(target)); err != nil {
		t.Fatalf("link into a root: %v", err)
	}
}

func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

// FIFOs as _metadata, as a state file and as the path itself are refused
// at once, never opened.
func TestFIFORefused(t *testing.T) {
	dir := t.TempDir()
	mkfifo(t, filepath.Join(dir, MetadataFileName))
	for _, p := range []string{dir, filepath.Join(dir, MetadataFileName)} {
		err := flinktest.Within(t, 5*time.Second, "reading a FIFO", func() error { _, err := ReadSavepoint(p); return err })
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "FIFO") {
			t.Fatalf("%s: %v", p, err)
		}
	}
	dir = t.TempDir()
	writeTestFile(t, dir, MetadataFileName, flinktest.Metadata(flinktest.RelativeHandle("state", 10), 0))
	mkfifo(t, filepath.Join(dir, "state"))
	err := flinktest.Within(t, 5*time.Second, "reading a FIFO", func() error { return offsetsErr(t, dir) })
	if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), filepath.Join(dir, "state")) {
		t.Fatalf("FIFO state file: %v", err)
	}
}

// A character device (/dev/zero: endless) and a sparse file over the limit
// are refused before a byte is read.
func TestDeviceAndHugeFilesRefusedBeforeReading(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	dir := t.TempDir()
	writeTestFile(t, dir, MetadataFileName, flinktest.Metadata(flinktest.FileHandle("/dev/zero", 10), 0))
	if err := offsetsErr(t, dir, "/dev"); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "character device") {
		t.Fatalf("/dev/zero state file: %v", err)
	}
	allocated := func(f func()) uint64 {
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		f()
		runtime.ReadMemStats(&b)
		return b.TotalAlloc - a.TotalAlloc
	}
	var err error
	if n := allocated(func() { _, err = ReadSavepoint("/dev/zero") }); !errors.Is(err, ErrNotRegular) || n > 1<<20 {
		t.Fatalf("/dev/zero as _metadata: %v after allocating %d bytes", err, n)
	}
	big := t.TempDir()
	f, err := os.Create(filepath.Join(big, MetadataFileName))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxMetadataSize + 1); err != nil { // sparse
		t.Fatal(err)
	}
	f.Close()
	if n := allocated(func() { _, err = ReadSavepoint(big) }); !errors.Is(err, ErrTooLarge) || n > 1<<20 {
		t.Fatalf("sparse %d-byte _metadata: %v after allocating %d bytes", maxMetadataSize+1, err, n)
	}
}

// Errors of malformed bytes never show them: a state file whose bytes are
// the secret, inside the savepoint (so it is read), decoded at every
// offset.
func TestDecodeErrorsShowNoBytes(t *testing.T) {
	dir := t.TempDir()
	writeTestFile(t, dir, "state", []byte(secret))
	for off := int64(0); off < int64(len(secret)); off++ {
		writeTestFile(t, dir, MetadataFileName, flinktest.Metadata(flinktest.RelativeHandle("state", int64(len(secret))), off))
		err := offsetsErr(t, dir)
		if err == nil {
			t.Fatalf("offset %d: no error", off)
		}
		if l := leaks(err.Error()); len(l) > 0 {
			t.Fatalf("offset %d: the error shows the file's bytes (%q): %v", off, l, err)
		}
	}
	// And _metadata's own: the secret as _metadata, with the magic, and
	// with magic and a version in front.
	for _, b := range [][]byte{[]byte(secret),
		append(binary.BigEndian.AppendUint32(nil, metadataMagic), secret...),
		append(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, metadataMagic), 3), secret...)} {
		_, err := ParseMetadata(b)
		if err == nil || len(leaks(err.Error())) > 0 {
			t.Fatalf("secret as _metadata: %v (%q)", err, leaks(fmt.Sprint(err)))
		}
	}
}

// hdfs:// and other schemes are named, not "does not exist".
func TestUnsupportedSchemeNamed(t *testing.T) {
	for _, p := range []string{"hdfs://namenode:8020/flink/savepoints/sp-1", "gs://bucket/sp-1"} {
		_, err := ReadSavepoint(p)
		scheme := p[:strings.Index(p, ":")]
		if !errors.Is(err, ErrUnsupportedLocation) || !strings.Contains(err.Error(), scheme+"://") || strings.Contains(err.Error(), "does not exist") {
			t.Fatalf("%s: %v", p, err)
		}
	}
}
