package cli

import (
	"bytes"
	"context"
	"log/slog"
	"runtime/debug"
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
		{"default", 0, fstest.MapFS{}, "", 200 * mib, 136 * mib, "default", ""},
		{"setting", 1 << 30, fstest.MapFS{}, "", 1 << 30, (1 << 30) - (1<<30)/10, "memory_limit", ""},
		{"setting below the container", 300 * mib, v2("536870912"), "", 300 * mib, 236 * mib, "memory_limit", ""},
		{"setting above the container", 1 << 30, v2("536870912"), "", 512 * mib, 448 * mib, "memory.max", "above the container's limit"},
		{"cgroup v2", 0, v2("536870912\n"), "", 512 * mib, 448 * mib, "cgroup memory.max", ""},
		{"cgroup v1", 0, v1("268435456\n"), "", 256 * mib, 192 * mib, "memory.limit_in_bytes", ""},
		{"cgroup v2 max", 0, v2("max\n"), "", 200 * mib, 136 * mib, "default", ""},
		{"garbage", 0, v2("12 GB please"), "", 200 * mib, 136 * mib, "default", "not a number of bytes"},
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

// The soft limit follows the live heap up with headroom, never down, and
// never past 90 % of the container's limit.
func TestRaisedLimit(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name             string
		soft, live, hard int64
		want             int64
		up               bool
	}{
		{"room enough", 136 * mib, 60 * mib, 0, 136 * mib, false},
		{"just enough", 136 * mib, 80 * mib, 0, 136 * mib, false},
		{"needs more", 136 * mib, 100 * mib, 0, 166 * mib, true},
		{"capped by the container", 136 * mib, 400 * mib, 512 * mib, 512*mib - 512*mib/10, true},
		{"cap below soft", 448 * mib, 400 * mib, 480 * mib, 448 * mib, false},
	} {
		got, up := raisedLimit(c.soft, c.live, c.hard)
		if got != c.want || up != c.up {
			t.Errorf("%s: %d %v, want %d %v", c.name, got, up, c.want, c.up)
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
	if got := debug.SetMemoryLimit(-1); got != p.Soft || got != 136<<20 {
		t.Errorf("soft limit %d, want the plan's %d (136MiB)", got, p.Soft)
	}
	out := buf.String()
	for _, want := range []string{"level=WARN", `holds \"garbage\"`, "200MiB (default", "Go soft limit 136MiB"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

// watchLiveHeap raises the soft limit when the live heap outgrows it, and
// says so.
func TestWatchLiveHeapRaises(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	hold := make([]byte, 32<<20) // live across the GC below
	for i := range hold {
		hold[i] = 1
	}
	var buf syncBuffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	p := memoryPlan{Budget: 8 << 20, Soft: 4 << 20}
	go func() { defer close(done); watchLiveHeap(ctx, p, 5*time.Millisecond, log) }()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(buf.String(), "soft limit raised") && time.Now().Before(deadline) {
		debug.FreeOSMemory() // a GC: the live heap is measured
	}
	cancel()
	<-done
	if got := debug.SetMemoryLimit(-1); got <= 32<<20 {
		t.Fatalf("soft limit %d, want it raised above the 32 MiB live", got)
	}
	if !strings.Contains(buf.String(), "soft limit raised") {
		t.Errorf("no warning logged:\n%s", buf.String())
	}
	_ = hold[len(hold)-1]
}
