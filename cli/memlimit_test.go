package cli

import (
	"bytes"
	"context"
	"log/slog"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/drconsole/drconsole/config"
)

// The container's limit is read from cgroup v2, else v1; "max", v1's
// "unlimited" and garbage are no limit, never a tiny or negative one, and
// garbage is said.
func TestContainerMemoryLimit(t *testing.T) {
	for _, c := range []struct {
		name    string
		files   fstest.MapFS
		want    int64
		problem string
	}{
		{"v2", fstest.MapFS{"memory.max": {Data: []byte("536870912\n")}}, 536870912, ""},
		{"v2 unlimited", fstest.MapFS{"memory.max": {Data: []byte("max\n")}}, 0, ""},
		{"v1", fstest.MapFS{"memory/memory.limit_in_bytes": {Data: []byte("268435456\n")}}, 268435456, ""},
		{"v1 unlimited", fstest.MapFS{"memory/memory.limit_in_bytes": {Data: []byte("9223372036854771712\n")}}, 0, ""},
		{"garbage", fstest.MapFS{"memory.max": {Data: []byte("lots")}}, 0, `memory.max holds "lots"`},
		{"negative", fstest.MapFS{"memory/memory.limit_in_bytes": {Data: []byte("-1")}}, 0, `memory.limit_in_bytes holds "-1"`},
		{"none", fstest.MapFS{}, 0, ""},
	} {
		got, _, problem := containerMemoryLimit(c.files)
		if got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
		if (c.problem == "") != (problem == "") || !strings.Contains(problem, c.problem) {
			t.Errorf("%s: problem %q, want one with %q", c.name, problem, c.problem)
		}
	}
}

// The budget is memory_limit, capped by the container's limit, else the
// container's limit, else the default; garbage in the cgroup file gives
// the default and a warning; GOMEMLIMIT leaves everything alone.
func TestPlanMemory(t *testing.T) {
	v2 := func(s string) fstest.MapFS { return fstest.MapFS{"memory.max": {Data: []byte(s)}} }
	v1 := func(s string) fstest.MapFS { return fstest.MapFS{"memory/memory.limit_in_bytes": {Data: []byte(s)}} }
	const mib = 1 << 20
	for _, c := range []struct {
		name         string
		setting      config.ByteSize
		files        fstest.MapFS
		env          string
		budget, soft int64
		from, warn   string
	}{
		{"default", 0, fstest.MapFS{}, "", 200 * mib, 120 * mib, "default", ""},
		{"setting", 1 << 30, fstest.MapFS{}, "", 1 << 30, (1 << 30) - (1<<30)/10, "memory_limit", ""},
		{"setting below the container", 300 * mib, v2("536870912"), "", 300 * mib, 220 * mib, "memory_limit", ""},
		{"setting above the container", 1 << 30, v2("536870912"), "", 512 * mib, 432 * mib, "memory.max", "above the container's limit"},
		{"cgroup v2", 0, v2("536870912\n"), "", 512 * mib, 432 * mib, "cgroup memory.max", ""},
		{"cgroup v1", 0, v1("268435456\n"), "", 256 * mib, 176 * mib, "memory.limit_in_bytes", ""},
		{"cgroup v2 max", 0, v2("max\n"), "", 200 * mib, 120 * mib, "default", ""},
		{"garbage", 0, v2("12 GB please"), "", 200 * mib, 120 * mib, "default", "not a number of bytes"},
		{"small", 96 * mib, fstest.MapFS{}, "", 96 * mib, 48 * mib, "memory_limit", ""},
		{"GOMEMLIMIT", 300 * mib, v2("536870912"), "180MiB", 0, 0, "GOMEMLIMIT=180MiB", ""},
	} {
		p := planMemory(c.setting, c.files, c.env)
		if p.Budget != c.budget || p.Soft != c.soft {
			t.Errorf("%s: budget %d soft %d, want %d and %d", c.name, p.Budget, p.Soft, c.budget, c.soft)
		}
		if !strings.Contains(p.From, c.from) {
			t.Errorf("%s: from %q, want it to say %q", c.name, p.From, c.from)
		}
		if (c.warn == "") != (p.Warn == "") || !strings.Contains(p.Warn, c.warn) {
			t.Errorf("%s: warning %q, want one with %q", c.name, p.Warn, c.warn)
		}
	}
}

// The soft limit follows the live heap with headroom, never below the
// plan's and never past 90 % of the container's limit.
func TestSoftFor(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name             string
		plan, live, hard int64
		want             int64
	}{
		{"room enough", 120 * mib, 60 * mib, 0, 120 * mib},
		{"just enough", 120 * mib, 83 * mib, 0, 120 * mib},
		{"needs more", 120 * mib, 100 * mib, 0, 141 * mib},
		{"capped by the container", 120 * mib, 400 * mib, 512 * mib, 512*mib - 512*mib/10},
		{"cap below the plan", 448 * mib, 400 * mib, 480 * mib, 448 * mib},
	} {
		if got := softFor(c.plan, c.live, c.hard); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

// A live heap hovering about the plan's line (each refresh's garbage at
// 100k partitions) warns once, not at every tick; a new high 25 % past the
// last warned warns again, and the return to the plan is said once.
func TestHeapWatchSaysOnce(t *testing.T) {
	const mib = 1 << 20
	w := heapWatch{plan: memoryPlan{Budget: 200 * mib, Soft: 120 * mib}, soft: 120 * mib, back: true, window: 1}
	var said []heapEvent
	for _, live := range []int64{70, 84, 89, 70, 86, 91, 72, 88, 85, 150, 152, 60, 61, 90} {
		soft, ev := w.step(live*mib, false)
		if soft != 0 && soft != softFor(120*mib, live*mib, 0) {
			t.Errorf("live %d MiB: soft %d, want %d", live, soft, softFor(120*mib, live*mib, 0))
		}
		if ev != heapQuiet {
			said = append(said, ev)
		}
	}
	want := []heapEvent{heapRaised, heapBack, heapRaised, heapBack}
	if !slices.Equal(said, want) {
		t.Errorf("said %v, want %v (raised at 84 MiB, back at 70, raised again only at 150, back at 60)", said, want)
	}
}

// A live heap that needs more than the plan for a reading or two (a
// refresh holding the next snapshot beside the last) leaves the soft
// limit alone; one that needs it for the whole window raises it, to what
// the smallest reading needs; a smaller reading lowers it at once.
func TestHeapWatchRisesOnlyForASustainedHeap(t *testing.T) {
	const mib = 1 << 20
	w := heapWatch{plan: memoryPlan{Budget: 200 * mib, Soft: 120 * mib}, soft: 120 * mib, back: true, window: 3}
	for _, live := range []int64{60, 100, 110, 62, 105, 61} {
		if soft, ev := w.step(live*mib, false); soft != 0 || ev != heapQuiet {
			t.Fatalf("live %d MiB among smaller readings: soft %d, %v; want the plan's left alone", live, soft, ev)
		}
	}
	var soft int64
	var ev heapEvent
	for _, live := range []int64{100, 110, 104} {
		soft, ev = w.step(live*mib, false)
	}
	if want := softFor(120*mib, 100*mib, 0); soft != want || ev != heapRaised {
		t.Fatalf("three readings of 100-110 MiB: soft %d, %v; want %d raised (for the smallest, 100 MiB)", soft, ev, want)
	}
	if soft, ev = w.step(60*mib, false); soft != 120*mib || ev != heapBack {
		t.Fatalf("back to 60 MiB: soft %d, %v; want the plan's at once", soft, ev)
	}
}

// A collector out of room raises the soft limit at once, for the heap of
// now, whatever smaller readings came before: when the GC CPU limiter
// turned on, or when the live heap is past the limit by more than a
// quarter. A reading within the quarter waits out the window; a later
// smaller reading lowers the limit as usual.
func TestHeapWatchRisesAtOnceForACollectorOutOfRoom(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name         string
		live         int64
		saturated    bool
		raisedAtOnce bool
	}{
		{"within a quarter past the limit", 150, false, false},
		{"limiter on", 140, true, true},
		{"past the limit by more than a quarter", 151, false, true},
	} {
		w := heapWatch{plan: memoryPlan{Budget: 200 * mib, Soft: 120 * mib}, soft: 120 * mib, back: true, window: 10}
		for _, live := range []int64{60, 70, 80} {
			if soft, _ := w.step(live*mib, false); soft != 0 {
				t.Fatalf("%s: live %d MiB: soft %d, want the plan's left alone", tc.name, live, soft)
			}
		}
		soft, ev := w.step(tc.live*mib, tc.saturated)
		if !tc.raisedAtOnce {
			if soft != 0 || ev != heapQuiet {
				t.Errorf("%s: soft %d, %v; want the plan's left alone", tc.name, soft, ev)
			}
			continue
		}
		if want := softFor(120*mib, tc.live*mib, 0); soft != want || ev != heapRaised {
			t.Errorf("%s: soft %d, %v; want %d raised at once", tc.name, soft, ev, want)
		}
		if soft, ev = w.step(60*mib, false); soft != 120*mib || ev != heapBack {
			t.Errorf("%s, then back to 60 MiB: soft %d, %v; want the plan's", tc.name, soft, ev)
		}
	}
}

// applyMemoryLimit sets the soft limit it logs, and logs a cgroup file it
// cannot read as a warning.
func TestApplyMemoryLimitLogs(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	p := applyMemoryLimit(0, fstest.MapFS{"memory.max": {Data: []byte("garbage")}}, log)
	if got := debug.SetMemoryLimit(-1); got != p.Soft || got != 120<<20 {
		t.Errorf("soft limit %d, want the plan's %d (120MiB)", got, p.Soft)
	}
	out := buf.String()
	for _, want := range []string{"level=WARN", `holds \"garbage\"`, "200MiB (default", "Go soft limit 120MiB"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

// watchLiveHeap raises the soft limit while the live heap outgrows the
// plan, says so, and lowers it back once the heap shrinks.
func TestWatchLiveHeapFollows(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	hold := make([]byte, 32<<20) // live across the collections below
	for i := range hold {
		hold[i] = 1
	}
	var buf syncBuffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	// Raised past 40 MiB for the 32 MiB held (x1.25 + 16 MiB), back to it
	// once the live heap is under 19 MiB.
	p := memoryPlan{Budget: 64 << 20, Soft: 40 << 20}
	go func() { defer close(done); watchLiveHeap(ctx, p, 5*time.Millisecond, 3, log) }()
	defer func() { cancel(); <-done }()
	waitLog := func(what string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !strings.Contains(buf.String(), what); {
			if time.Now().After(deadline) {
				t.Fatalf("no %q logged:\n%s", what, buf.String())
			}
			debug.FreeOSMemory() // a collection: the live heap is measured
		}
	}
	waitLog("soft limit raised")
	if got := debug.SetMemoryLimit(-1); got <= 40<<20 {
		t.Fatalf("soft limit %d, want it raised above the plan's 40 MiB", got)
	}
	runtime.KeepAlive(hold)
	hold = nil
	waitLog("back within the budget")
	if got := debug.SetMemoryLimit(-1); got != 40<<20 {
		t.Errorf("soft limit %d, want the plan's 40 MiB again", got)
	}
}

// A soft limit far below the live heap leaves the collector no room; the
// watch raises it without waiting out its window (here far longer than
// the test).
func TestWatchLiveHeapRaisesForACollectorOutOfRoom(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	var buf syncBuffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	p := memoryPlan{Budget: 16 << 20, Soft: 8 << 20}
	debug.SetMemoryLimit(p.Soft)
	go func() { defer close(done); watchLiveHeap(ctx, p, 5*time.Millisecond, 1_000_000, log) }()
	defer func() { cancel(); <-done }()
	// Readings of the small heap first: from then on the smallest reading
	// in the window never asks for more than the plan.
	time.Sleep(50 * time.Millisecond)
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	// A million small objects: marking them is real work, unlike one big
	// byte slice, so a limit below them keeps the collector busy.
	hold := make([]*[4]int64, 1<<20)
	for i := range hold {
		hold[i] = &[4]int64{int64(i)}
	}
	var sink [][]byte
	for deadline := time.Now().Add(20 * time.Second); debug.SetMemoryLimit(-1) <= 32<<20; {
		if time.Now().After(deadline) {
			t.Fatalf("soft limit %d, not raised above the 32 MiB live heap:\n%s", debug.SetMemoryLimit(-1), buf.String())
		}
		sink = append(sink, make([]byte, 64<<10)) // garbage against the limit
		if len(sink) > 64 {
			sink = sink[:0]
		}
	}
	runtime.KeepAlive(hold)
}
