package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// A cancelled context (run's, on SIGINT/SIGTERM) stops a big translation
// part-way and writes nothing; the old CLI ran to the end regardless.
func TestTranslateCLIStopsWhenCancelled(t *testing.T) {
	dir := t.TempDir()
	syncs := writeFile(t, dir, "syncs.jsonl", syncsJSONL)
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < 1_000_000; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n\"events-%d\": %d", i, 150)
	}
	b.WriteString("}")
	offsets := writeFile(t, dir, "offsets.json", b.String())

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	var out bytes.Buffer
	start := time.Now()
	err := translateCmd(ctx, []string{"--offsets", offsets, "--syncs", syncs, "--allow-partial"}, nil, &out, io.Discard)
	if !errors.Is(err, context.Canceled) || out.Len() != 0 {
		t.Fatalf("after cancel: %v, %d bytes written; want context.Canceled and nothing", err, out.Len())
	}
	t.Logf("stopped %v after the start (cancel at 20ms): %v", time.Since(start), err)
}
