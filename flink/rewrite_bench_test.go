package flink

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkRewrite1000Splits: a savepoint whose Kafka source has 1,000
// splits (inline state, enumerator v3), rewritten to DR names and offsets,
// read back and checked; no state files to copy.
func BenchmarkRewrite1000Splits(b *testing.B) {
	src := filepath.Join(b.TempDir(), "src")
	targets := bigSavepoint(b, src, 1000)
	out := b.TempDir()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if _, err := Rewrite(context.Background(), RewriteRequest{Source: src, Dest: filepath.Join(out, strconv.Itoa(i)), Targets: targets}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRewriteCopy: copying a 64 MiB state file of another operator
// (keyed state) next to the new `_metadata`; bytes/s is the copy
// throughput, fsync included.
func BenchmarkRewriteCopy(b *testing.B) {
	src := filepath.Join(b.TempDir(), "src")
	fileBacked(b, src, "")
	big := make([]byte, 64<<20)
	for i := range big {
		big[i] = byte(i * 7)
	}
	if err := os.WriteFile(filepath.Join(src, "keyed-state"), big, 0o644); err != nil {
		b.Fatal(err)
	}
	targets := targetsFor(b, src, "", primary, plus1000)
	out := b.TempDir()
	b.SetBytes(int64(len(big)))
	i := 0
	for b.Loop() {
		i++
		dest := filepath.Join(out, strconv.Itoa(i))
		if _, err := Rewrite(context.Background(), RewriteRequest{Source: src, Dest: dest, Targets: targets}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		os.RemoveAll(dest)
		b.StartTimer()
	}
}
