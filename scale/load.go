package scale

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// Endpoint is one URL the load generator hits.
type Endpoint struct {
	Name string
	Path string
	Gzip bool // ask for gzip, as Prometheus does for /metrics
}

// Phase is one closed-loop run against one endpoint.
type Phase struct {
	Endpoint    string
	Concurrency int
	Requests    int           // completed with 200
	Errors      int           // failed or not 200
	Elapsed     time.Duration // wall time of the phase
	P50, P99    time.Duration // client-side latency of the 200s
	// ServerP50/P99: the console's own time per request (its request log's
	// duration: handler start to last byte written), without the load
	// generator's share of the 2 cores; 0 when the log held none.
	ServerP50, ServerP99 time.Duration
	Bytes                int64         // body size of the last 200 (as sent: gzip when asked)
	CPU                  time.Duration // the console's CPU time during the phase
}

// ReqPerSec is completed requests per second.
func (p Phase) ReqPerSec() float64 { return float64(p.Requests) / p.Elapsed.Seconds() }

// CPUPerReq is the console's CPU time per completed request (all of its
// CPU, refresh included, so an upper bound on the request's own cost).
func (p Phase) CPUPerReq() time.Duration {
	if p.Requests == 0 {
		return 0
	}
	return p.CPU / time.Duration(p.Requests)
}

// loader sends requests with the rig's session cookie over kept-alive
// connections to 127.0.0.1 only.
type loader struct {
	base    string
	cookie  string
	client  *http.Client
	pid     int
	logPath string // the console's log, for server-side latencies
}

func newLoader(con *Console) *loader {
	tr := &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}
	return &loader{base: con.URL, cookie: con.cookie, pid: con.Pid, logPath: con.LogPath, client: &http.Client{Transport: tr, Timeout: time.Minute}}
}

// get fetches path once: its body size and whether it answered 200.
func (l *loader) get(ctx context.Context, e Endpoint) (int64, bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.base+e.Path, nil)
	if err != nil {
		return 0, false
	}
	req.Header.Set("Cookie", l.cookie)
	if e.Gzip {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	resp, err := l.client.Do(req)
	if err != nil {
		return 0, false
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return n, err == nil && resp.StatusCode == http.StatusOK
}

// run is a closed loop: c workers, each sending its next request when the
// last one is answered, for d.
func (l *loader) run(ctx context.Context, e Endpoint, c int, d time.Duration) (Phase, error) {
	cpu0, err := cpuTime(l.pid)
	if err != nil {
		return Phase{}, err
	}
	logFrom := fileSize(l.logPath)
	var mu sync.Mutex
	var lat []time.Duration
	ph := Phase{Endpoint: e.Name, Concurrency: c}
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for range c {
		wg.Go(func() {
			var mine []time.Duration
			errs := 0
			var size int64
			for time.Now().Before(deadline) && ctx.Err() == nil {
				t0 := time.Now()
				n, ok := l.get(ctx, e)
				if !ok {
					errs++
					continue
				}
				mine = append(mine, time.Since(t0))
				size = n
			}
			mu.Lock()
			lat = append(lat, mine...)
			ph.Errors += errs
			if size > 0 {
				ph.Bytes = size
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	ph.Elapsed = time.Since(start)
	cpu1, err := cpuTime(l.pid)
	if err != nil {
		return Phase{}, err
	}
	ph.CPU = cpu1 - cpu0
	ph.Requests = len(lat)
	if len(lat) == 0 {
		return ph, fmt.Errorf("scale: %s at c=%d: no request succeeded (%d errors)", e.Name, c, ph.Errors)
	}
	ph.P50, ph.P99 = percentiles(lat)
	ph.ServerP50, ph.ServerP99 = percentiles(servedDurations(l.logPath, logFrom, e.Path))
	return ph, nil
}

// percentiles are the median and 99th percentile of xs (sorted in place).
func percentiles(xs []time.Duration) (p50, p99 time.Duration) {
	if len(xs) == 0 {
		return 0, 0
	}
	slices.Sort(xs)
	return xs[len(xs)/2], xs[min(len(xs)-1, len(xs)*99/100)]
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// servedDurations are the durations the console logged for GETs of path
// answered 200 or 304, in its log from byte offset from on (the console
// logs each page request at info: "msg=http ... path=P status=S ...
// duration=D").
func servedDurations(logPath string, from int64, path string) []time.Duration {
	f, err := os.Open(logPath)
	if err != nil {
		return nil
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return nil
	}
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	if p, err := url.PathUnescape(path); err == nil {
		path = p // the log has the decoded path
	}
	var out []time.Duration
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, " msg=http ") || !strings.Contains(line, " path="+path+" ") ||
			!strings.Contains(line, " status=200 ") && !strings.Contains(line, " status=304 ") {
			continue
		}
		_, rest, ok := strings.Cut(line, " duration=")
		if !ok {
			continue
		}
		v, _, _ := strings.Cut(rest, " ")
		if d, err := time.ParseDuration(v); err == nil {
			out = append(out, d)
		}
	}
	return out
}

// memSampler records the console's RSS every interval until stopped.
type memSampler struct {
	stop    chan struct{}
	done    chan struct{}
	samples []int64 // KiB
}

func sampleMem(pid int, every time.Duration) *memSampler {
	m := &memSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if rss, _, err := memKiB(pid); err == nil {
				m.samples = append(m.samples, rss)
			}
			select {
			case <-m.stop:
				return
			case <-t.C:
			}
		}
	}()
	return m
}

// Stop ends sampling and returns the samples in KiB.
func (m *memSampler) Stop() []int64 {
	close(m.stop)
	<-m.done
	return m.samples
}
