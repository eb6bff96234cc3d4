// Command scale runs the scale rig (package scale) and prints its markdown
// table: `make scale`, or go run ./scale/cmd/scale -h for the flags.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/drconsole/drconsole/scale"
)

func ints(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func main() {
	scale.ChildMain() // when started by the rig as its console, never returns
	n := flag.String("n", "1000,10000", "partition counts to measure, in order (e.g. 1000,10000,100000)")
	conc := flag.String("c", "8,32", "client concurrencies")
	o := scale.Options{Progress: os.Stderr}
	flag.IntVar(&o.PerTopic, "per-topic", 100, "partitions per topic")
	flag.IntVar(&o.SyncsPerPart, "syncs", 20, "offset syncs per partition")
	flag.BoolVar(&o.Checkpoints, "checkpoints", true, "one checkpoint per partition (one group per topic)")
	flag.DurationVar(&o.PhaseDuration, "d", 10*time.Second, "duration of each load phase (one endpoint at one concurrency)")
	flag.IntVar(&o.Rounds, "rounds", 3, "interleaved rounds of all phases; the table shows their medians")
	flag.DurationVar(&o.RefreshInterval, "refresh", 5*time.Second, "the console's refresh_interval")
	flag.DurationVar(&o.RPOHistory, "history", 6*time.Hour, "flow (RPO) history seeded before the console starts: one sample per refresh over the last 24h, one a minute before (2160h: the default 90 days of rollups)")
	flag.DurationVar(&o.PartHistory, "partition-history", 0, "per-partition lag history seeded (one sample per partition per minute)")
	flag.StringVar(&o.Binary, "console", "", "a drconsole binary to measure (default: the console built into this rig)")
	flag.StringVar(&o.ProfileDir, "pprof", "", "write CPU (flow page load) and heap profiles of the console to this directory")
	flag.DurationVar(&o.StartupProfile, "pprof-startup", 30*time.Second, "with -pprof: also a CPU profile of the console's start-up, this long from its /readyz")
	flag.StringVar(&o.WorkDir, "work", "", "keep data directories, configs and console logs here (default: a temporary directory)")
	flag.DurationVar(&o.SetupTimeout, "setup-timeout", 10*time.Minute, "bound on the console's start and ingestion at each N")
	flag.IntVar(&o.SyncsBound, "syncs-bound", 0, "the console's retention.syncs_per_partition (default: the console's, 64)")
	flag.StringVar(&o.MemoryLimit, "gomemlimit", "", "run the console with this GOMEMLIMIT (Go's soft memory limit, e.g. 180MiB); the rig itself is not limited")
	soak := flag.Duration("soak", 0, "instead of the table: watch the first N for this long with a tab open and Prometheus scraping, and report RSS drift, refresh gaps and lost syncs")
	churn := flag.Int("churn", 100, "with -soak: offset syncs mirrored per second across the caught-up partitions")
	flag.Parse()
	var err error
	if o.Partitions, err = ints(*n); err == nil {
		o.Concurrency, err = ints(*conc)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *soak > 0 {
		if err := runSoak(ctx, scale.SoakOptions{Options: o, Duration: *soak, ChurnPerSecond: *churn, SampleEvery: 10 * time.Second}); err != nil {
			fmt.Fprintln(os.Stderr, "scale:", err)
			os.Exit(1)
		}
		return
	}
	rs, err := scale.Run(ctx, o)
	fmt.Printf("\nMachine: %d CPUs, %s, %s/%s; command: %s\n\n", runtime.NumCPU(), memTotal(), runtime.GOOS, runtime.GOARCH, strings.Join(os.Args, " "))
	scale.Report(os.Stdout, o, rs)
	if err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

// runSoak runs scale.Soak in a temporary directory unless -work names
// one, and prints its report.
func runSoak(ctx context.Context, so scale.SoakOptions) error {
	if so.WorkDir == "" {
		dir, err := os.MkdirTemp("", "drconsole-soak-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		so.WorkDir = dir
	}
	r, err := scale.Soak(ctx, so)
	fmt.Printf("\nMachine: %d CPUs, %s, %s/%s; command: %s\n\n", runtime.NumCPU(), memTotal(), runtime.GOOS, runtime.GOARCH, strings.Join(os.Args, " "))
	scale.SoakReport(os.Stdout, so, r)
	return err
}

// memTotal is the MemTotal line of /proc/meminfo.
func memTotal() string {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "memory unknown"
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			return "MemTotal " + strings.TrimSpace(v)
		}
	}
	return "memory unknown"
}
