package mm2

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// offsetsFile is an offsets object with n partitions, one per line.
func offsetsFile(n int) []byte {
	var b bytes.Buffer
	b.Grow(n * 24)
	b.WriteString("{")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n  \"events-%d\": %d", i, int64(i)*1000+7)
	}
	b.WriteString("\n}\n")
	return b.Bytes()
}

// Parsing is linear: 200k partitions in well under a second of CPU (the
// old parser recounted lines from the start for every key: 120k took 22 s
// on the loaded test machine, 200k about a minute), and a bad entry near
// the end still carries its line number. BenchmarkParseOffsets1MPartitions
// has the figure for a million.
func TestReadOffsetsJSONLinear(t *testing.T) {
	const n = 200_000
	data := offsetsFile(n)
	start := time.Now()
	got, err := ReadOffsetsJSON(context.Background(), "big", bytes.NewReader(data), 0)
	took := time.Since(start)
	if err != nil || len(got) != n || got[n-1].Offset != int64(n-1)*1000+7 {
		t.Fatalf("%d entries, err %v", len(got), err)
	}
	// Generous for a loaded machine and -race; quadratic takes minutes.
	if took > 20*time.Second {
		t.Fatalf("%d partitions took %v", n, took)
	}
	t.Logf("%d partitions parsed in %v", n, took)

	bad := bytes.Replace(data, []byte(`"events-199998": 199998007`), []byte(`"events-199998": -1`), 1)
	_, err = ReadOffsetsJSON(context.Background(), "big", bytes.NewReader(bad), 0)
	if err == nil || !strings.Contains(err.Error(), "big:200000:") {
		t.Fatalf("bad entry on line 200000: %v", err)
	}
}

func TestReadOffsetsJSONLimitsAndCancel(t *testing.T) {
	data := offsetsFile(1000)
	if _, err := ReadOffsetsJSON(context.Background(), "f", bytes.NewReader(data), 1000); err != nil {
		t.Fatalf("exactly at the limit: %v", err)
	}
	_, err := ReadOffsetsJSON(context.Background(), "f", bytes.NewReader(data), 999)
	if !errors.Is(err, ErrTooManyOffsets) || !strings.Contains(err.Error(), "more than 999 partitions") {
		t.Fatalf("over the limit: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ReadOffsetsJSON(ctx, "f", bytes.NewReader(data), 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v, want context.Canceled", err)
	}
}

// BenchmarkParseOffsets1MPartitions: `make bench` reports it; the
// figure to beat is about a second per million partitions.
func BenchmarkParseOffsets1MPartitions(b *testing.B) {
	data := offsetsFile(1_000_000)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ReadOffsetsJSON(context.Background(), "bench", bytes.NewReader(data), 0); err != nil {
			b.Fatal(err)
		}
	}
}
