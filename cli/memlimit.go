package cli

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drconsole/drconsole/config"
)

// nonHeapReserve is the part of the memory budget left outside Go's soft
// limit: SQLite's page caches (up to 24 MiB, storage.writerCache and
// readerCache, allocated by C and so not counted by Go) and what the
// kernel counts beside the heap: the binary's pages (25-45 MiB resident
// measured at 100k partitions), thread stacks, C's allocator.
const nonHeapReserve = 80 << 20

// memoryPlan is how much memory the console aims to live in and the Go
// soft limit it sets for it.
type memoryPlan struct {
	Budget int64  // bytes the console aims to live in (RSS)
	Soft   int64  // Go's soft memory limit; 0: left alone (GOMEMLIMIT set)
	Hard   int64  // the container's memory limit; 0: none
	From   string // where Budget came from
	Warn   string // a problem met on the way (a cgroup file unread, a setting above the container's limit)
}

func (p memoryPlan) String() string {
	if p.Soft == 0 {
		return p.From
	}
	return fmt.Sprintf("%s (%s); Go soft limit %s", config.ByteSize(p.Budget), p.From, config.ByteSize(p.Soft))
}

// planMemory chooses the budget: memory_limit when set, but never above
// the container's limit; else the container's limit; else the default.
// The soft limit is the budget less nonHeapReserve, at most 90 % and at
// least half of it. GOMEMLIMIT, when set, wins and nothing is set.
func planMemory(setting config.ByteSize, cgroup fs.FS, gomemlimit string) memoryPlan {
	if gomemlimit != "" {
		return memoryPlan{From: "GOMEMLIMIT=" + gomemlimit + " from the environment; memory_limit and the container's limit not used"}
	}
	hard, source, problem := containerMemoryLimit(cgroup)
	p := memoryPlan{Hard: hard, Warn: problem}
	switch {
	case setting > 0 && (hard == 0 || int64(setting) <= hard):
		p.Budget, p.From = int64(setting), "memory_limit"
	case hard > 0:
		p.Budget, p.From = hard, "the container's limit, "+source
		if setting > 0 {
			p.Warn = fmt.Sprintf("memory_limit %s is above the container's limit %s (%s): the container's limit is used",
				setting, config.ByteSize(hard), source)
		}
	default:
		p.Budget, p.From = int64(config.DefaultMemoryLimit), "default: memory_limit unset, no container limit"
	}
	p.Soft = min(p.Budget-nonHeapReserve, p.Budget-p.Budget/10)
	p.Soft = max(p.Soft, p.Budget/2)
	return p
}

// containerMemoryLimit is the cgroup's memory limit in bytes (v2
// memory.max, else v1 memory.limit_in_bytes) and the file it came from, or
// 0 when there is none: "max", no file, or v1's "unlimited" (a huge
// number). A file that holds anything else is no limit, and problem says
// so.
func containerMemoryLimit(root fs.FS) (limit int64, source, problem string) {
	for _, name := range []string{"memory.max", "memory/memory.limit_in_bytes"} {
		b, err := fs.ReadFile(root, name)
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(b))
		if v == "max" {
			return 0, "", ""
		}
		n, err := strconv.ParseInt(v, 10, 64)
		switch {
		case err != nil || n <= 0:
			if len(v) > 40 {
				v = v[:40] + "…"
			}
			return 0, "", fmt.Sprintf("the container's memory limit is unreadable: %s holds %q, not a number of bytes; treated as no limit", name, v)
		case n >= 1<<62: // v1's unlimited is ~2^63 rounded down to pages
			return 0, "", ""
		}
		return n, "cgroup " + name, ""
	}
	return 0, "", ""
}

// applyMemoryLimit plans the memory budget, sets Go's soft memory limit
// and logs both. The soft limit is a garbage collector target, never a
// cap: watchLiveHeap raises it while the live heap needs more.
func applyMemoryLimit(setting config.ByteSize, cgroup fs.FS, log *slog.Logger) memoryPlan {
	p := planMemory(setting, cgroup, os.Getenv("GOMEMLIMIT"))
	if p.Warn != "" {
		log.Warn("memory limit", "problem", p.Warn)
	}
	if p.Soft > 0 {
		debug.SetMemoryLimit(p.Soft)
	}
	log.Info("memory limit", "budget", p.String())
	return p
}

// liveHeapHeadroom: the soft limit is kept at least this many times the
// live heap (plus liveHeapSlack), so the collector runs at most once per
// quarter of a live heap of allocation (plus 16 MiB), never back to back:
// at 100k partitions a refresh allocates about 40 MiB against a live heap
// of about 70 MiB, a collection or two per refresh.
const (
	liveHeapHeadroom = 1.25
	liveHeapSlack    = 16 << 20
)

// softFor is the soft limit for a live heap of live bytes: the plan's,
// or more when the live heap needs it, never past 90 % of the container's
// limit (past it the kernel kills the console; a busy collector is better
// than that), never below the plan's.
func softFor(plan, live, hard int64) int64 {
	need := int64(float64(live)*liveHeapHeadroom) + liveHeapSlack
	if hard > 0 {
		need = min(need, hard-hard/10)
	}
	return max(plan, need)
}

// liveHeapSustain is how many readings (one a second) the live heap must
// need more than the plan for the soft limit to rise: a refresh at 100k
// partitions holds the next snapshot beside the last for a second or two,
// and raising the limit for that moment let the heap grow into it (RSS
// up ~20 MiB at every refresh); the start-up's reading of history or a
// larger estate needs it for far longer.
const liveHeapSustain = 10

// heapWatch is watchLiveHeap's state between ticks.
type heapWatch struct {
	plan memoryPlan
	soft int64
	// recent are the last readings (at most window, at least 1): the
	// soft limit follows the smallest, so it rises only for a live heap
	// that stays large, and falls as soon as it shrinks.
	recent []int64
	window int
	// warned: the highest soft limit a warning named. A live heap that
	// hovers about the plan's line (each refresh's garbage) would else
	// warn every few seconds: only a new high, 25 % past the last one
	// named, is said again, and the return to the plan once after it.
	warned int64
	back   bool
}

// heapEvent is what a tick has to say: nothing, a raise past the plan
// (a warning) or the return to it.
type heapEvent int

const (
	heapQuiet heapEvent = iota
	heapRaised
	heapBack
)

// step takes a live heap reading: the soft limit to set (0: unchanged)
// and what to say. The limit follows the smallest reading of the window,
// except when the collector is out of room: the runtime's GC CPU limiter
// turned on since the last reading (saturated), or the live heap is past
// the soft limit by more than a quarter, so the collector runs back to
// back and cannot bring the heap under it. The smaller readings before
// are then forgotten and the limit follows this one at once. At a million
// partitions the start-up's growing heap kept the limit ten seconds
// behind it (a live heap of 828 MiB against a limit of 466), and the
// collector took half the console's CPU. A refresh's passing peak at 100k
// stays within the quarter and still waits out the window.
func (w *heapWatch) step(live int64, saturated bool) (int64, heapEvent) {
	if saturated || live > w.soft+w.soft/4 {
		w.recent = w.recent[:0]
	}
	if len(w.recent) >= max(w.window, 1) {
		w.recent = w.recent[1:]
	}
	w.recent = append(w.recent, live)
	next := softFor(w.plan.Soft, slices.Min(w.recent), w.plan.Hard)
	if next == w.soft {
		return 0, heapQuiet
	}
	w.soft = next
	switch {
	case next > w.plan.Soft && next > w.warned+w.warned/4:
		w.warned, w.back = next, false
		return next, heapRaised
	case next == w.plan.Soft && !w.back:
		w.back = true
		return next, heapBack
	}
	return next, heapQuiet
}

// watchLiveHeap checks the live heap every tick and moves Go's soft limit
// with it: up when the estate needs more than the plan allows (the
// start-up's reading of history, a larger estate), saying so, and back
// down to the plan once the live heap shrinks, so a start-up peak does
// not leave the heap at its size for the console's life. It returns when
// ctx ends.
func watchLiveHeap(ctx context.Context, p memoryPlan, every time.Duration, window int, log *slog.Logger) {
	if p.Soft == 0 {
		return
	}
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/limiter/last-enabled:gc-cycle"}}
	limited := func() uint64 { // the cycle the GC CPU limiter last turned on in; 0: never, or not reported
		if sample[1].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return sample[1].Value.Uint64()
	}
	t := time.NewTicker(every)
	defer t.Stop()
	w := heapWatch{plan: p, soft: p.Soft, back: true, window: window}
	metrics.Read(sample)
	lastLimited := limited()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return // the runtime does not report it
		}
		live := int64(sample[0].Value.Uint64())
		cycle := limited()
		saturated := cycle > lastLimited
		lastLimited = cycle
		soft, ev := w.step(live, saturated)
		if soft == 0 {
			continue
		}
		debug.SetMemoryLimit(soft)
		switch ev {
		case heapRaised:
			log.Warn("memory limit: the live heap needs more than the budget allows; Go's soft limit raised (raise memory_limit or the container's limit if it stays)",
				"live_heap", config.ByteSize(live).String(), "soft_limit", config.ByteSize(soft).String(), "budget", config.ByteSize(p.Budget).String())
		case heapBack:
			log.Info("memory limit: the live heap is back within the budget; Go's soft limit back to the plan's",
				"live_heap", config.ByteSize(live).String(), "soft_limit", config.ByteSize(soft).String())
		}
	}
}
