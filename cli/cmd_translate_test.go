package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A cancelled context (run's, on SIGINT/SIGTERM) stops a big translation
// part-way and writes nothing; the old CLI ran to the end regardless.
func TestTranslateCLIStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	syncs := writeFile(t, dir, "syncs.jsonl", syncsJSONL)
	// A million partitions, written with strconv: fmt under the race
	// detector took ten seconds over the file alone.
	b := make([]byte, 0, 24<<20)
	b = append(b, '{')
	for i := 0; i < 1_000_000; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n\"events-"...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, "\": 150"...)
	}
	b = append(b, '}')
	offsets := writeFile(t, dir, "offsets.json", string(b))

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
