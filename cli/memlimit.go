package cli

import (
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// memoryLimitShare is the part of the container's memory limit given to
// Go's heap: the rest is SQLite's page caches (up to 48 MiB, see
// storage.writerCache/readerCache), stacks and the runtime's own.
const memoryLimitShare = 0.8

// containerMemoryLimit is the cgroup's memory limit in bytes (v2
// memory.max, else v1 memory.limit_in_bytes), or 0 when there is none:
// "max", an absent file, or v1's "unlimited" (a huge number).
func containerMemoryLimit(root fs.FS) int64 {
	for _, name := range []string{"memory.max", "memory/memory.limit_in_bytes"} {
		b, err := fs.ReadFile(root, name)
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(b))
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 || n >= 1<<62 { // "max"; v1 unlimited is ~2^63 rounded to pages
			return 0
		}
		return n
	}
	return 0
}

// applyMemoryLimit sets Go's soft memory limit to a share of the
// container's, so the garbage collector works harder before the kernel
// kills the console (at 100k partitions an unlimited heap grows to about
// 2.5 times the live one). GOMEMLIMIT, when set, wins. It says what it did.
func applyMemoryLimit(root fs.FS) string {
	if os.Getenv("GOMEMLIMIT") != "" {
		return "GOMEMLIMIT=" + os.Getenv("GOMEMLIMIT") + " (from the environment)"
	}
	limit := containerMemoryLimit(root)
	if limit == 0 {
		return "none (no container memory limit; GOMEMLIMIT unset)"
	}
	soft := int64(float64(limit) * memoryLimitShare)
	debug.SetMemoryLimit(soft)
	return fmt.Sprintf("%d MiB (%.0f%% of the container's %d MiB)", soft>>20, memoryLimitShare*100, limit>>20)
}
