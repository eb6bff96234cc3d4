package scale

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// The server-side latencies are the logged durations of that path's
// answered GETs, from the phase's start in the log on: not other paths,
// not errors, not lines from before the phase.
func TestServedDurations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "console.log")
	before := "time=x level=INFO msg=http method=GET path=/flows/a status=200 bytes=1 duration=9s remote=r\n"
	during := "time=x level=INFO msg=http method=GET path=/flows/a status=200 bytes=1 duration=1.5ms remote=r\n" +
		"time=x level=INFO msg=http method=GET path=/flows/ab status=200 bytes=1 duration=7s remote=r\n" +
		"time=x level=ERROR msg=http method=GET path=/flows/a status=500 bytes=1 duration=8s remote=r\n" +
		"time=x level=INFO msg=http method=GET path=/flows/a status=304 bytes=0 duration=250µs remote=r\n" +
		"time=x level=INFO msg=other path=/flows/a status=200 duration=6s\n"
	if err := os.WriteFile(path, []byte(before+during), 0o600); err != nil {
		t.Fatal(err)
	}
	got := servedDurations(path, int64(len(before)), "/flows/%61?sort=lag")
	if want := []time.Duration{1500 * time.Microsecond, 250 * time.Microsecond}; !slices.Equal(got, want) {
		t.Fatalf("durations %v, want %v", got, want)
	}
	if p50, p99 := percentiles(got); p50 != 1500*time.Microsecond || p99 != 1500*time.Microsecond {
		t.Fatalf("p50 %v p99 %v", p50, p99)
	}
}
