package scale

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drconsole/drconsole/views"
)

// Options configure a rig run.
type Options struct {
	Partitions      []int // N of each run, in order
	PerTopic        int
	SyncsPerPart    int
	Checkpoints     bool
	Concurrency     []int
	PhaseDuration   time.Duration // each closed-loop phase
	Rounds          int           // interleaved rounds of every phase; figures are their medians
	RefreshInterval time.Duration
	RPOHistory      time.Duration
	PartHistory     time.Duration
	Binary          string // a drconsole binary to measure instead of this executable's
	ProfileDir      string // CPU and heap profiles of the console go here when set
	// StartupProfile, with ProfileDir, is how long a CPU profile of the
	// start-up runs from the console's /readyz (ingestion, first refreshes).
	StartupProfile time.Duration
	WorkDir        string // data directories; a temporary one when empty
	SetupTimeout   time.Duration
	Progress       io.Writer // one line per step; nil: quiet
	// MemoryLimit, when set, is the console's GOMEMLIMIT (Go's soft memory
	// limit, e.g. "180MiB"); the rig's own process is not limited.
	MemoryLimit string
	// SyncsBound, when set, is the console's retention.syncs_per_partition.
	SyncsBound int
}

// Result is one N's figures.
type Result struct {
	Shape     Shape
	Fill      time.Duration // writing the estate into the clusters
	Ingest    time.Duration // console start until every sync is stored and every partition shown
	IngestCPU time.Duration // the console's CPU time in that while: its share of the start-up
	Seen      Seen          // the estate as /metrics showed it before the load
	IdleCPU   float64       // the console's CPU use with no requests, in cores
	RSSIdle   int64         // KiB, after ingestion, before load
	RSSLoad   []int64       // KiB, sampled every 250 ms during the load phases
	HWM       int64         // KiB, VmHWM at the end: the peak of the console's life
	Rounds    [][]Phase
	Refreshes []int64 // refresh start times (ms) during the load phases
	LoadStart time.Time
	LoadEnd   time.Time
	Metrics   struct{ Raw, Gzip int64 }
	LogErrors int // level=ERROR lines in the console's log
	Deadlines int // of which "context deadline exceeded"
	Profiles  []string
}

// Run measures each N in turn and returns the results.
func Run(ctx context.Context, o Options) ([]Result, error) {
	if o.WorkDir == "" {
		dir, err := os.MkdirTemp("", "drconsole-scale-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		o.WorkDir = dir
	}
	var out []Result
	for _, n := range o.Partitions {
		r, err := runOne(ctx, o, n)
		if err != nil {
			return out, fmt.Errorf("N=%d: %w", n, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func (o Options) say(format string, args ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
	}
}

func runOne(ctx context.Context, o Options, n int) (Result, error) {
	sh := Shape{Partitions: n, PerTopic: o.PerTopic, SyncsPerPart: o.SyncsPerPart, Checkpoints: o.Checkpoints}
	r := Result{Shape: sh}
	o.say("N=%d: starting two clusters, %d topics, %d syncs per partition", n, len(sh.topics()), sh.SyncsPerPart)
	t0 := time.Now()
	cl, err := StartClusters(ctx, sh)
	if err != nil {
		return r, err
	}
	defer cl.Close()
	r.Fill = time.Since(t0)
	o.say("N=%d: estate written in %s; starting the console", n, r.Fill.Round(time.Millisecond))
	dir := filepath.Join(o.WorkDir, fmt.Sprintf("n%d", n))
	t0 = time.Now()
	con, err := StartConsole(ctx, cl, ConsoleOptions{Dir: dir, Binary: o.Binary, Pprof: o.ProfileDir != "", MemoryLimit: o.MemoryLimit,
		RefreshInterval: o.RefreshInterval, RPOHistory: o.RPOHistory, PartHistory: o.PartHistory}, o.SetupTimeout)
	if err != nil {
		return r, err
	}
	defer con.Stop()
	startup := profileStartup(ctx, o, con, n)
	if err := con.WaitIngested(ctx, int64(n*sh.SyncsPerPart), o.SetupTimeout); err != nil {
		return r, err
	}
	l := newLoader(con)
	if r.Seen, err = l.waitSeen(ctx, sh, o.SetupTimeout); err != nil {
		return r, err
	}
	r.Ingest = time.Since(t0) - con.Seeding
	// Beside the wall time, the console's own CPU: on 2 cores shared with
	// the rig's clusters, it tells the console's start-up work from waiting
	// on clusters that serve a million partitions slowly.
	if r.IngestCPU, err = cpuTime(con.Pid); err != nil {
		return r, err
	}
	if r.RSSIdle, _, err = memKiB(con.Pid); err != nil {
		return r, err
	}
	if err := <-startup; err != nil {
		return r, err
	}
	// Background work (refresh, ingestion) over two refresh intervals with
	// no requests: what the per-request CPU figures include beside the request.
	if r.IdleCPU, err = idleCPU(ctx, con.Pid, 2*o.RefreshInterval); err != nil {
		return r, err
	}
	o.say("N=%d: history seeded in %s; console ready, syncs ingested and every partition seen in %s (console CPU %s) (%+v), RSS %d MiB; load phases of %s",
		n, con.Seeding.Round(time.Millisecond), r.Ingest.Round(time.Millisecond), r.IngestCPU.Round(time.Millisecond), r.Seen, r.RSSIdle/1024, o.PhaseDuration)

	endpoints := []Endpoint{
		{Name: "flow", Path: views.FlowPath(flowName)},
		{Name: "overview", Path: "/"},
		{Name: "topic", Path: views.TopicPath(flowName, sh.topics()[0])},
		{Name: "metrics", Path: "/metrics", Gzip: true},
	}
	r.Metrics.Raw, _ = l.get(ctx, Endpoint{Path: "/metrics"})
	r.Metrics.Gzip, _ = l.get(ctx, Endpoint{Path: "/metrics", Gzip: true})

	mem := sampleMem(con.Pid, 250*time.Millisecond)
	r.LoadStart = time.Now()
	for round := range o.Rounds {
		// /metrics once more by a single client, as Prometheus scrapes it.
		scrape, err := l.run(ctx, Endpoint{Name: "scrape", Path: "/metrics", Gzip: true}, 1, o.PhaseDuration)
		if err != nil {
			mem.Stop()
			return r, err
		}
		o.say("N=%d round %d: /metrics by one scraper: p50 %.1f ms p99 %.1f ms", n, round+1, ms(scrape.P50), ms(scrape.P99))
		phases := []Phase{scrape}
		for _, c := range o.Concurrency {
			for _, e := range endpoints {
				ph, err := l.run(ctx, e, c, o.PhaseDuration)
				if err != nil {
					mem.Stop()
					return r, err
				}
				o.say("N=%d round %d: %-8s c=%-2d %7.1f req/s p50 %6.1f ms p99 %6.1f ms %7d B cpu/req %.2f ms errors %d",
					n, round+1, e.Name, c, ph.ReqPerSec(), ms(ph.P50), ms(ph.P99), ph.Bytes, ms(ph.CPUPerReq()), ph.Errors)
				phases = append(phases, ph)
			}
		}
		r.Rounds = append(r.Rounds, phases)
	}
	r.LoadEnd = time.Now()
	r.RSSLoad = mem.Stop()
	if r.Refreshes, err = con.RefreshTimes(ctx, r.LoadStart.UnixMilli()); err != nil {
		return r, err
	}
	if o.ProfileDir != "" {
		if r.Profiles, err = profile(ctx, o, con, l, endpoints[0], n); err != nil {
			return r, err
		}
	}
	if _, r.HWM, err = memKiB(con.Pid); err != nil {
		return r, err
	}
	// Before the stop: errors of the shutdown itself are not the load's.
	r.LogErrors, r.Deadlines = countLogErrors(con.LogPath)
	return r, nil
}

// idleCPU is pid's CPU use over d, in cores.
func idleCPU(ctx context.Context, pid int, d time.Duration) (float64, error) {
	c0, err := cpuTime(pid)
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(d):
	}
	c1, err := cpuTime(pid)
	if err != nil {
		return 0, err
	}
	return float64(c1-c0) / float64(time.Since(t0)), nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// profileStartup takes a CPU profile of the console's start-up (from its
// /readyz on, for o.StartupProfile) when asked for; the channel says when
// it is written.
func profileStartup(ctx context.Context, o Options, con *Console, n int) <-chan error {
	done := make(chan error, 1)
	if o.ProfileDir == "" || o.StartupProfile <= 0 {
		done <- nil
		return done
	}
	if err := os.MkdirAll(o.ProfileDir, 0o750); err != nil {
		done <- err
		return done
	}
	file := filepath.Join(o.ProfileDir, fmt.Sprintf("n%d-startup-cpu.pprof", n))
	go func() {
		err := fetchTo(ctx, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", con.PprofURL, max(int(o.StartupProfile.Seconds()), 1)), file)
		if err == nil {
			o.say("N=%d: start-up profile %s", n, file)
		}
		done <- err
	}()
	return done
}

// profile takes a CPU profile of the console under flow-page load at the
// first concurrency, then a heap profile (after a GC: the live heap).
func profile(ctx context.Context, o Options, con *Console, l *loader, e Endpoint, n int) ([]string, error) {
	if err := os.MkdirAll(o.ProfileDir, 0o750); err != nil {
		return nil, err
	}
	secs := max(int(o.PhaseDuration.Seconds()), 1)
	cpuFile := filepath.Join(o.ProfileDir, fmt.Sprintf("n%d-%s-cpu.pprof", n, e.Name))
	heapFile := filepath.Join(o.ProfileDir, fmt.Sprintf("n%d-heap.pprof", n))
	errc := make(chan error, 1)
	go func() {
		errc <- fetchTo(ctx, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", con.PprofURL, secs), cpuFile)
	}()
	if _, err := l.run(ctx, e, o.Concurrency[0], time.Duration(secs)*time.Second+time.Second); err != nil {
		return nil, err
	}
	if err := <-errc; err != nil {
		return nil, err
	}
	if err := fetchTo(ctx, con.PprofURL+"/debug/pprof/heap?gc=1", heapFile); err != nil {
		return nil, err
	}
	o.say("N=%d: profiles %s %s", n, cpuFile, heapFile)
	return []string{cpuFile, heapFile}, nil
}

func fetchTo(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("scale: %s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// countLogErrors counts the console's ERROR lines, and among them the
// deadline ones (a refresh or save that ran out of time).
func countLogErrors(path string) (errs, deadlines int) {
	l := readConsoleLog(path)
	return l.errors, l.deadlines
}

// consoleLog is what the rig counts in the console's log.
type consoleLog struct {
	errors, deadlines int
	thinPasses        int   // retention passes that deleted syncs
	thinned           int64 // syncs they deleted
}

// readConsoleLog counts a console log's ERROR lines (-1 when unreadable)
// and its retention passes.
func readConsoleLog(path string) (l consoleLog) {
	f, err := os.Open(path)
	if err != nil {
		return consoleLog{errors: -1, deadlines: -1}
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "level=ERROR") {
			l.errors++
			if strings.Contains(line, "deadline exceeded") {
				l.deadlines++
			}
		}
		if strings.Contains(line, `msg="thinned offset syncs"`) {
			l.thinPasses++
			if _, rest, ok := strings.Cut(line, " deleted="); ok {
				n, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
				l.thinned += n
			}
		}
	}
	return l
}

// median of xs (not modified); 0 when empty.
func median[T int64 | float64 | time.Duration](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
