package scale

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// cell is the median over the rounds of one endpoint at one concurrency.
type cell struct {
	rps      float64
	p50, p99 time.Duration
	srv99    time.Duration // server-side p99 (the console's request log)
	cpu      time.Duration
	bytes    int64
	errors   int
}

func (r Result) cell(endpoint string, c int) (cell, bool) {
	var rps []float64
	var p50, p99, srv99, cpu []time.Duration
	var out cell
	for _, round := range r.Rounds {
		for _, ph := range round {
			if ph.Endpoint == endpoint && ph.Concurrency == c {
				rps = append(rps, ph.ReqPerSec())
				p50, p99, cpu = append(p50, ph.P50), append(p99, ph.P99), append(cpu, ph.CPUPerReq())
				srv99 = append(srv99, ph.ServerP99)
				out.bytes = ph.Bytes
				out.errors += ph.Errors
			}
		}
	}
	if len(rps) == 0 {
		return out, false
	}
	out.rps, out.p50, out.p99, out.cpu, out.srv99 = median(rps), median(p50), median(p99), median(cpu), median(srv99)
	return out, true
}

// RefreshStats are the gaps between refresh starts during the load phases,
// the start and end of the load counting as edges (a refresh stuck until
// the end is a gap too), and how many refreshes the target interval called
// for did not happen (a gap of k intervals missed k-1).
func (r Result) RefreshStats(target time.Duration) (med, worst time.Duration, missed int) {
	edges := append([]int64{r.LoadStart.UnixMilli()}, r.Refreshes...)
	edges = append(edges, r.LoadEnd.UnixMilli())
	var gaps []time.Duration
	for i := 1; i < len(edges); i++ {
		g := time.Duration(edges[i]-edges[i-1]) * time.Millisecond
		gaps = append(gaps, g)
		missed += max(0, int(math.Round(float64(g)/float64(target)))-1)
	}
	if len(gaps) == 0 {
		return 0, 0, 0
	}
	return median(gaps), slices.Max(gaps), missed
}

func mib(kib int64) string { return fmt.Sprintf("%.0f MiB", float64(kib)/1024) }

func size(b int64) string {
	switch {
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}

func msText(d time.Duration) string {
	if d >= 10*time.Millisecond {
		return fmt.Sprintf("%.0f ms", ms(d))
	}
	return fmt.Sprintf("%.1f ms", ms(d))
}

// Report writes the markdown table: one column per N.
func Report(w io.Writer, o Options, rs []Result) {
	var b strings.Builder
	b.WriteString("| measure |")
	for _, r := range rs {
		fmt.Fprintf(&b, " %d |", r.Shape.Partitions)
	}
	b.WriteString(" goal (issue 32) |\n|---|")
	for range rs {
		b.WriteString("---|")
	}
	b.WriteString("---|\n")
	goals := map[string]string{
		"RSS median / peak under load":                  "≤ 200 MiB at 100k, ≤ 1 GiB at 1M",
		"RSS idle after ingestion / VmHWM (whole life)": "VmHWM ≤ 200 MiB at 100k, ≤ 1 GiB at 1M",
		"/metrics req/s, p50 / p99 (one scraper)":       "p99 ≤ 1 s",
		"estate written / console start to every sync stored and every partition shown (console CPU in it)": "start ≤ 30 s at 1M",
	}
	row := func(name string, f func(Result) string) {
		b.WriteString("| " + name + " |")
		for _, r := range rs {
			b.WriteString(" " + f(r) + " |")
		}
		goal := goals[name]
		switch {
		case strings.HasPrefix(name, "refresh gap"):
			goal = fmt.Sprintf("max ≤ %s (2× the interval)", 2*o.RefreshInterval)
		case strings.Contains(name, "server p99 (c=32)") && !strings.HasPrefix(name, "metrics"):
			goal = "≥ 3,000 req/s, server p99 ≤ 10 ms"
		}
		b.WriteString(" " + goal + " |\n")
	}
	row("RSS median / peak under load", func(r Result) string {
		if len(r.RSSLoad) == 0 {
			return "?"
		}
		return mib(median(r.RSSLoad)) + " / " + mib(slices.Max(r.RSSLoad))
	})
	row("RSS idle after ingestion / VmHWM (whole life)", func(r Result) string { return mib(r.RSSIdle) + " / " + mib(r.HWM) })
	row("/metrics req/s, p50 / p99 (one scraper)", func(r Result) string {
		x, ok := r.cell("scrape", 1)
		if !ok {
			return "?"
		}
		return fmt.Sprintf("%.0f, %s / %s", x.rps, msText(x.p50), msText(x.p99))
	})
	for _, c := range o.Concurrency {
		for _, e := range []string{"flow", "overview", "topic", "metrics"} {
			row(fmt.Sprintf("%s req/s, p50 / p99, server p99 (c=%d)", e, c), func(r Result) string {
				x, ok := r.cell(e, c)
				if !ok {
					return "?"
				}
				srv := "n/a" // not in the log: /metrics logs at debug
				if x.srv99 > 0 {
					srv = msText(x.srv99)
				}
				s := fmt.Sprintf("%.0f, %s / %s, %s", x.rps, msText(x.p50), msText(x.p99), srv)
				if x.errors > 0 {
					s += fmt.Sprintf(" (%d errors)", x.errors)
				}
				return s
			})
		}
	}
	for _, e := range []string{"flow", "overview", "topic"} {
		row(fmt.Sprintf("console CPU per %s request (c=%d)", e, o.Concurrency[0]), func(r Result) string {
			x, _ := r.cell(e, o.Concurrency[0])
			return msText(x.cpu)
		})
	}
	row("console CPU with no requests (refresh, ingestion)", func(r Result) string { return fmt.Sprintf("%.1f%% of a core", 100*r.IdleCPU) })
	for _, e := range []string{"flow", "overview", "topic"} {
		row(e+" page size (no gzip)", func(r Result) string { x, _ := r.cell(e, o.Concurrency[0]); return size(x.bytes) })
	}
	row("/metrics size raw / gzip", func(r Result) string { return size(r.Metrics.Raw) + " / " + size(r.Metrics.Gzip) })
	row(fmt.Sprintf("refresh gap under load, median / max incl. load start and end (target %s)", o.RefreshInterval), func(r Result) string {
		med, worst, _ := r.RefreshStats(o.RefreshInterval)
		return fmt.Sprintf("%.1f s / %.1f s", med.Seconds(), worst.Seconds())
	})
	row("refreshes missed under load / ERROR log lines (deadline)", func(r Result) string {
		_, _, missed := r.RefreshStats(o.RefreshInterval)
		return fmt.Sprintf("%d / %d (%d)", missed, r.LogErrors, r.Deadlines)
	})
	row("estate written / console start to every sync stored and every partition shown (console CPU in it)", func(r Result) string {
		return fmt.Sprintf("%.1f s / %.1f s (%.1f s)", r.Fill.Seconds(), r.Ingest.Seconds(), r.IngestCPU.Seconds())
	})
	fmt.Fprint(w, b.String())
	fmt.Fprintf(w, "\n%d syncs per partition, %d partitions per topic, %s of seeded RPO history, %s of partition history; "+
		"closed loop on 127.0.0.1, %s per phase, medians of %d interleaved round(s); latency is client-side "+
		"(request sent to body read), server p99 the console's own (its request log: handler start to last byte); CPU per request is all of the console's CPU time during the phase (refresh included) "+
		"divided by the requests; RSS is the console process alone (a child process, /proc/<pid>/status).\n",
		o.SyncsPerPart, o.PerTopic, o.RPOHistory, o.PartHistory, o.PhaseDuration, o.Rounds)
	if o.MemoryLimit != "" {
		fmt.Fprintf(w, "The console ran with GOMEMLIMIT=%s.\n", o.MemoryLimit)
	}
}
