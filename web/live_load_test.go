package web_test

import (
	"context"
	"io"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/drconsole/drconsole/web"
)

// A documented run, not a timed test (skipped unless DRCONSOLE_LIVE_LOAD
// is set): the server's CPU with 50 overview tabs open for a minute.
//
//	DRCONSOLE_LIVE_LOAD=1 go test -count=1 -run TestLoadFiftyOverviewStreams -v ./web/
//
// The sandbox (two Kafka clusters, the mirror, the monitor) runs in the
// same process, so the run measures a minute without streams first and
// reports the difference. DRCONSOLE_LIVE_LOAD may name another count.
func TestLoadFiftyOverviewStreams(t *testing.T) {
	if os.Getenv("DRCONSOLE_LIVE_LOAD") == "" {
		t.Skip("a documented load run: set DRCONSOLE_LIVE_LOAD=1")
	}
	n, err := strconv.Atoi(os.Getenv("DRCONSOLE_LIVE_LOAD"))
	if err != nil || n < 2 {
		n = 50
	}
	c := startConsole(t)
	waitReady(t, c)
	const window = 60 * time.Second
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	idleStart := cpu()
	time.Sleep(window)
	idle := cpu() - idleStart

	streams := c.Handler.(*web.Console).Streams
	// Fifty people, measured as one viewer from one address: lift the
	// per-user and per-address caps (TestStreamCapsPerUserAndAddress
	// holds them) for the measurement, and put them back after.
	streams.MaxPerUser, streams.MaxPerAddr = n, n
	defer func() { streams.MaxPerUser, streams.MaxPerAddr = 0, 0 }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var bytesRead atomic.Int64
	for range n {
		resp := openStream(t, ctx, c.URL+"/events?losses=0&flows=1", sessionCookie(t, c, "viewer"))
		go func() {
			defer resp.Body.Close()
			io.Copy(counter{&bytesRead}, resp.Body)
		}()
	}
	waitOpen(t, streams, n)
	loadStart := cpu()
	time.Sleep(window)
	load := cpu() - loadStart
	cancel()
	waitOpen(t, streams, 0)
	t.Logf("%d overview streams for %s: process CPU %s (%.1f%% of one core); the same minute without streams %s; streams' share %s (%.1f%% of one core, %.2f ms per stream-second); %d bytes sent",
		n, window, load.Round(time.Millisecond), 100*load.Seconds()/window.Seconds(), idle.Round(time.Millisecond),
		(load - idle).Round(time.Millisecond), 100*(load-idle).Seconds()/window.Seconds(),
		float64((load-idle).Milliseconds())/float64(n)/window.Seconds(), bytesRead.Load())
}

// counter counts what is written to it as it comes.
type counter struct{ n *atomic.Int64 }

func (c counter) Write(p []byte) (int, error) { c.n.Add(int64(len(p))); return len(p), nil }
