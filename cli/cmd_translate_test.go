package cli

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

// A sync at the top of the offset range: the CLI reports the partition as
// not translatable (exit 3), never a negative offset with exit 0.
func TestTranslateCLINoWrap(t *testing.T) {
	dir := t.TempDir()
	syncs := writeFile(t, dir, "syncs.jsonl", "{\"topic\":\"events\",\"partition\":0,\"upstream\":100,\"downstream\":9223372036854775806}\n")
	offsets := writeFile(t, dir, "offsets.json", `{"events-0": 150}`)
	r := runCLI(t, "", "translate", "--offsets", offsets, "--syncs", syncs)
	if r.code != 3 || strings.Contains(r.stdout, "-9223372036854775808") || !strings.Contains(r.stderr, "refused rather than wrapped") {
		t.Fatalf("exit %d stdout %q stderr %q, want exit 3 and no wrapped offset", r.code, r.stdout, r.stderr)
	}
}
