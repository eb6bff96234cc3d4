package demo

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// TestSandboxSoak runs the sandbox at a high rate and checks that its memory
// stops growing once retention has started deleting: without retention the
// in-process clusters keep every record (about 10 MB/min at the default
// rate). By default it runs ~25 s with a short retention so it fits in make
// test; DRCONSOLE_SOAK=20m runs it that long with the shipped retention
// defaults and logs the figures the README quotes.
func TestSandboxSoak(t *testing.T) {
	total, rate := 25*time.Second, 4000
	opts := Options{Seed: 7, Logger: testLogger(),
		Retention: 2 * time.Second, RetentionBytes: 256 << 10, CleanerInterval: 250 * time.Millisecond}
	if v := os.Getenv("DRCONSOLE_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("DRCONSOLE_SOAK=%q: %v", v, err)
		}
		total, rate = d, 2000
		opts = Options{Seed: 7, Logger: testLogger()} // the shipped retention
	} else if testing.Short() {
		t.Skip("soak: skipped with -short")
	}
	opts.TrafficRate = rate
	// Memory is judged after a warm-up long enough for retention to have
	// filled every partition to its bound.
	warm := total / 3

	ctx, cancel := context.WithTimeout(context.Background(), total+time.Minute)
	defer cancel()
	sb, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer sb.Close()

	type sample struct {
		at        time.Duration
		heap, rss uint64
		produced  int64
	}
	var samples []sample
	start := time.Now()
	every := max(total/40, time.Second)
	for time.Since(start) < total {
		select {
		case <-ctx.Done():
			t.Fatalf("soak: %v", ctx.Err())
		case <-time.After(every):
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		s := sample{at: time.Since(start).Round(time.Second), heap: ms.HeapAlloc, rss: rssBytes(t), produced: sb.State().Produced}
		samples = append(samples, s)
		if os.Getenv("DRCONSOLE_SOAK") != "" {
			t.Logf("soak %v: heap %d MiB, rss %d MiB, produced %d", s.at, s.heap>>20, s.rss>>20, s.produced)
		}
	}

	// The plateau: the highest heap seen in the second third (retention is
	// deleting by then). The bound: the rest may not exceed it by more than
	// a fifth plus 1 MiB (GC and batch-size noise). Without retention the
	// heap grows with every record produced, well past that.
	var plateau, peak, peakRSS, plateauRSS uint64
	for _, s := range samples {
		switch {
		case s.at < warm:
		case s.at < 2*warm:
			plateau, plateauRSS = max(plateau, s.heap), max(plateauRSS, s.rss)
		default:
			peak, peakRSS = max(peak, s.heap), max(peakRSS, s.rss)
		}
	}
	last := samples[len(samples)-1]
	t.Logf("soak %v at %d records/s (%d produced): heap plateau %.1f MiB, later peak %.1f MiB; RSS plateau %.1f MiB, later peak %.1f MiB",
		total, rate, last.produced, mib(plateau), mib(peak), mib(plateauRSS), mib(peakRSS))
	if plateau == 0 || peak == 0 {
		t.Fatalf("soak: too few samples (%d)", len(samples))
	}
	if bound := plateau + plateau/5 + 1<<20; peak > bound {
		t.Errorf("heap kept growing: %.1f MiB after the plateau of %.1f MiB (bound %.1f MiB)", mib(peak), mib(plateau), mib(bound))
	}
	if last.produced < int64(rate)*int64(total/time.Second)/4 {
		t.Errorf("traffic too slow to prove anything: %d records in %v", last.produced, total)
	}

	// Retention really deleted records in both clusters.
	for name, seeds := range map[string][]string{"primary": sb.PrimaryBootstrap(), "dr": sb.DRBootstrap()} {
		cl, err := sb.newClient("soak-check-"+name, seeds)
		if err != nil {
			t.Fatal(err)
		}
		starts, err := kadm.NewClient(cl).ListStartOffsets(ctx, "events")
		if err != nil {
			t.Fatalf("%s: list start offsets: %v", name, err)
		}
		if o, _ := starts.Lookup("events", 0); o.Offset <= 0 {
			t.Errorf("%s: events/0 starts at %d: retention deleted nothing", name, o.Offset)
		}
	}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// rssBytes reads VmRSS from /proc/self/status (0 where there is none).
func rssBytes(t *testing.T) uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) >= 2 && string(f[0]) == "VmRSS:" {
			kb, err := strconv.ParseUint(string(f[1]), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS %q: %v", f[1], err)
			}
			return kb << 10
		}
	}
	return 0
}
