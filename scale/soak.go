package scale

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/drconsole/drconsole/views"
)

// SoakOptions configure a long run at one N: the console watched as an
// incident watches it, one tab polling the flow page every 2 s (as htmx
// does) and Prometheus scraping /metrics every 15 s, while the estate
// keeps mirroring (churn).
type SoakOptions struct {
	Options        // shape, refresh, history, work dir; Partitions[0] is N
	Duration       time.Duration
	ChurnPerSecond int           // syncs written per second (see Clusters.churn)
	SampleEvery    time.Duration // RSS sampling
}

// SoakResult is what a soak saw.
type SoakResult struct {
	Shape            Shape
	Start, End       time.Time
	RSS              []int64 // KiB, every SampleEvery
	HWM              int64   // KiB: the peak of the console's life
	Refreshes        []int64 // refresh starts (ms) during the soak
	Tab, Scrapes     int     // requests answered 200
	TabErrs, ScrapeE int     // requests that failed or were not 200
	SyncsWritten     int64   // by the churn
	SyncsStored      int64   // stored by the console at the end, beyond the seeded ones
	ThinPasses       int     // retention passes that deleted syncs (from the console's log)
	SyncsThinned     int64   // syncs they deleted
	LogErrors        int
	Deadlines        int
}

// Soak runs one long observation; see SoakOptions.
func Soak(ctx context.Context, o SoakOptions) (SoakResult, error) {
	n := o.Partitions[0]
	sh := Shape{Partitions: n, PerTopic: o.PerTopic, SyncsPerPart: o.SyncsPerPart, Checkpoints: o.Checkpoints}
	r := SoakResult{Shape: sh}
	o.say("soak N=%d for %s: starting the clusters", n, o.Duration)
	cl, err := StartClusters(ctx, sh)
	if err != nil {
		return r, err
	}
	defer cl.Close()
	con, err := StartConsole(ctx, cl, ConsoleOptions{Dir: filepath.Join(o.WorkDir, fmt.Sprintf("soak%d", n)), Binary: o.Binary, Pprof: o.ProfileDir != "", MemoryLimit: o.MemoryLimit,
		RefreshInterval: o.RefreshInterval, RPOHistory: o.RPOHistory, PartHistory: o.PartHistory, SyncsBound: o.SyncsBound}, o.SetupTimeout)
	if err != nil {
		return r, err
	}
	defer con.Stop()
	seeded := int64(n * sh.SyncsPerPart)
	if err := con.WaitIngested(ctx, seeded, o.SetupTimeout); err != nil {
		return r, err
	}
	l := newLoader(con)
	if _, err := l.waitSeen(ctx, sh, o.SetupTimeout); err != nil {
		return r, err
	}
	o.say("soak N=%d: console ready; watching for %s", n, o.Duration)

	// The live heap at the start and at the end, with -pprof: what grew
	// is then `go tool pprof -diff_base` of the two, not a guess.
	if err := soakHeap(ctx, o, con, n, "start"); err != nil {
		return r, err
	}
	sctx, stop := context.WithTimeout(ctx, o.Duration)
	defer stop()
	r.Start = time.Now()
	mem := sampleMem(con.Pid, o.SampleEvery)
	var wg sync.WaitGroup
	var churnErr error
	wg.Go(func() { r.SyncsWritten, churnErr = cl.churn(sctx, o.ChurnPerSecond) })
	wg.Go(func() {
		r.Tab, r.TabErrs = every(sctx, 2*time.Second, func() bool {
			_, ok := l.get(sctx, Endpoint{Path: views.FlowPath(flowName), Gzip: true})
			return ok
		})
	})
	wg.Go(func() {
		r.Scrapes, r.ScrapeE = every(sctx, 15*time.Second, func() bool {
			_, ok := l.get(sctx, Endpoint{Path: "/metrics", Gzip: true})
			return ok
		})
	})
	wg.Go(func() {
		// Progress every 5 minutes: a soak that goes wrong says so early.
		every(sctx, 5*time.Minute, func() bool {
			rss, _, _ := memKiB(con.Pid)
			o.say("soak N=%d: %s in, RSS %s", n, time.Since(r.Start).Round(time.Second), mib(rss))
			return true
		})
	})
	wg.Wait()
	r.End = time.Now()
	r.RSS = mem.Stop()
	if churnErr != nil {
		return r, churnErr
	}
	if err := soakHeap(ctx, o, con, n, "end"); err != nil {
		return r, err
	}
	// The syncs written in the last seconds are given one refresh interval
	// (and ingestion's own pace) to arrive: lost ones stay missing. What
	// retention deleted (the console logs each pass) counts as stored.
	want := seeded + r.SyncsWritten
	_ = poll(ctx, 4*o.RefreshInterval+30*time.Second, "the churn's syncs stored", func() (bool, error) {
		got, err := con.store.CountSyncs(ctx, flowName)
		l := readConsoleLog(con.LogPath)
		r.ThinPasses, r.SyncsThinned = l.thinPasses, l.thinned
		r.SyncsStored = got + l.thinned - seeded
		return err == nil && got+l.thinned >= want, nil
	})
	if r.Refreshes, err = con.RefreshTimes(ctx, r.Start.UnixMilli()); err != nil {
		return r, err
	}
	if _, r.HWM, err = memKiB(con.Pid); err != nil {
		return r, err
	}
	r.LogErrors, r.Deadlines = countLogErrors(con.LogPath)
	return r, nil
}

// soakHeap writes the console's live heap profile as soak-n<N>-heap-<when>
// in o.ProfileDir; nothing without one.
func soakHeap(ctx context.Context, o SoakOptions, con *Console, n int, when string) error {
	if o.ProfileDir == "" {
		return nil
	}
	if err := os.MkdirAll(o.ProfileDir, 0o750); err != nil {
		return err
	}
	path := filepath.Join(o.ProfileDir, fmt.Sprintf("soak-n%d-heap-%s.pprof", n, when))
	if err := fetchTo(ctx, con.PprofURL+"/debug/pprof/heap?gc=1", path); err != nil {
		return err
	}
	o.say("soak N=%d: heap profile %s", n, path)
	return nil
}

// every calls f each period until ctx ends, counting its successes and
// failures. A call that overruns delays the next one (a tab does not
// stack requests either).
func every(ctx context.Context, period time.Duration, f func() bool) (ok, failed int) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ok, failed
		case <-t.C:
		}
		if f() {
			ok++
		} else if ctx.Err() == nil {
			failed++
		}
	}
}

// RSSDrift is the median RSS of the soak's first and of its last fifth:
// memory that stays flat gives a ratio close to 1.
func (r SoakResult) RSSDrift() (first, last int64) {
	k := len(r.RSS) / 5
	if k == 0 {
		return 0, 0
	}
	return median(r.RSS[:k]), median(r.RSS[len(r.RSS)-k:])
}

// WindowDrift is issue 32's flat-memory check: the median RSS of the
// soak's second window and of its last, from samples taken every every
// since the start. The window is an hour, as the issue asks, when the soak
// ran three hours or more; a shorter soak (a session on our machines ends
// at three hours) is cut in quarters, so the second quarter, past start-up, meets
// the last. ok is false under four samples a window.
func (r SoakResult) WindowDrift(every time.Duration) (window time.Duration, second, last int64, ok bool) {
	every = max(every, time.Millisecond)
	per := int(time.Hour / every)
	if len(r.RSS) < 3*per {
		per = len(r.RSS) / 4
	}
	if per < 4 {
		return 0, 0, 0, false
	}
	return time.Duration(per) * every, median(r.RSS[per : 2*per]), median(r.RSS[len(r.RSS)-per:]), true
}

// SoakReport writes the soak's figures as a short markdown list.
func SoakReport(w io.Writer, o SoakOptions, r SoakResult) {
	res := Result{Refreshes: r.Refreshes, LoadStart: r.Start, LoadEnd: r.End}
	med, worst, missed := res.RefreshStats(o.RefreshInterval)
	first, last := r.RSSDrift()
	peak := int64(0)
	if len(r.RSS) > 0 {
		peak = slices.Max(r.RSS)
	}
	fmt.Fprintf(w, "Soak at N=%d (%d syncs per partition, churn %d syncs/s) for %s, refresh_interval %s:\n\n",
		r.Shape.Partitions, r.Shape.SyncsPerPart, o.ChurnPerSecond, r.End.Sub(r.Start).Round(time.Second), o.RefreshInterval)
	fmt.Fprintf(w, "- RSS: median of the first fifth %s, of the last fifth %s (ratio %.2f); peak sampled %s; VmHWM %s\n",
		mib(first), mib(last), float64(last)/float64(max(first, 1)), mib(peak), mib(r.HWM))
	if window, second, last, ok := r.WindowDrift(o.SampleEvery); ok {
		ratio := float64(last) / float64(max(second, 1))
		verdict := "within"
		if ratio > 1.05 || ratio < 0.95 {
			verdict = "NOT within"
		}
		fmt.Fprintf(w, "- RSS: median of the second %[1]s %[2]s, of the last %[1]s %[3]s (ratio %.3[4]f: %[5]s the goal's 5 %%)\n",
			window, mib(second), mib(last), ratio, verdict)
	}
	fmt.Fprintf(w, "- refreshes: %d, gap median %s, worst %s, refreshes missed %d\n", len(r.Refreshes), msText(med), msText(worst), missed)
	fmt.Fprintf(w, "- flow page polls: %d answered, %d failed; /metrics scrapes: %d answered, %d failed\n", r.Tab, r.TabErrs, r.Scrapes, r.ScrapeE)
	fmt.Fprintf(w, "- offset syncs written by the churn %d, stored by the console %d (of which retention deleted %d in %d passes)\n", r.SyncsWritten, r.SyncsStored, r.SyncsThinned, r.ThinPasses)
	fmt.Fprintf(w, "- console log: %d ERROR lines, %d of them deadlines\n", r.LogErrors, r.Deadlines)
}
