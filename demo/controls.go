package demo

import (
	"errors"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// errPrimaryDown is returned from the kfake control hook; kfake answers a
// handled request with an error by closing the client connection, which is
// what clients see when a broker dies.
var errPrimaryDown = errors.New("demo: primary cluster is down")

// controls holds the demo knobs. changed wakes the mirror when a knob moves.
type controls struct {
	primary *kfake.Cluster

	mu          sync.Mutex
	rate        int
	running     bool
	runChanges  uint64 // how many times running was set, by anyone
	primaryDown bool
	hookActive  bool  // a kfake control function is installed on primary
	refused     int64 // requests refused while down, for tests and logs

	// rounds is held by the mirror while it copies, commits or writes
	// checkpoints, so that pausing returns only once nothing is in flight.
	rounds sync.Mutex

	changed chan struct{}
}

func newControls(primary *kfake.Cluster) *controls {
	return &controls{primary: primary, running: true, changed: make(chan struct{}, 1)}
}

func (c *controls) snapshot() (rate int, running, down bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rate, c.running, c.primaryDown
}

func (c *controls) mirror() (rate int, running bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rate, c.running
}

// runState is running and how many times it was set.
func (c *controls) runState() (running bool, changes uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.running, c.runChanges
}

func (c *controls) setRate(r int) {
	c.mu.Lock()
	c.rate = max(r, 0)
	c.mu.Unlock()
	c.notify()
}

func (c *controls) setRunning(running bool) {
	c.mu.Lock()
	c.running = running
	c.runChanges++
	c.mu.Unlock()
	c.notify()
	if !running {
		// Wait out a round in progress: after this, the mirror writes nothing.
		c.rounds.Lock()
		c.rounds.Unlock() //nolint:staticcheck // empty critical section is the point
	}
}

// round runs fn under the rounds lock if the mirror is running and reports
// whether it ran.
func (c *controls) round(fn func()) bool {
	c.rounds.Lock()
	defer c.rounds.Unlock()
	if _, running := c.mirror(); !running {
		return false
	}
	fn()
	return true
}

func (c *controls) notify() {
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

// setPrimaryDown installs one kfake control function while the primary is
// down. It keeps itself (KeepControl) for every request while down and drops
// itself (DropControl, not handled) on the first request after the primary
// is back, so an up cluster pays nothing for it.
func (c *controls) setPrimaryDown(down bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.primaryDown = down
	if !down || c.hookActive {
		return
	}
	c.hookActive = true
	// Lock order everywhere: c.mu, then kfake's control mutex.
	c.primary.Control(func(kmsg.Request) (kmsg.Response, error, bool) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.primaryDown {
			c.refused++
			c.primary.KeepControl()
			return nil, errPrimaryDown, true
		}
		c.hookActive = false
		c.primary.DropControl()
		return nil, nil, false
	})
}

// bucket is a token bucket for the mirror rate; one token = one record.
// Only the mirror goroutine uses it.
type bucket struct {
	rate   int
	tokens float64
	last   time.Time
}

// available refills for the current rate and returns how many records may be
// copied now (-1 = unlimited) and, when none, how long until the next one.
func (b *bucket) available(rate int, now time.Time) (int, time.Duration) {
	if rate <= 0 {
		b.rate, b.last = 0, now
		return -1, 0
	}
	// Burst of a fifth of a second keeps the flow smooth at low rates.
	burst := max(float64(rate)/5, 1)
	if b.rate != rate || b.last.IsZero() {
		b.rate, b.tokens, b.last = rate, min(b.tokens, burst), now
	}
	b.tokens = min(b.tokens+now.Sub(b.last).Seconds()*float64(rate), burst)
	b.last = now
	if b.tokens < 1 {
		return 0, time.Duration((1 - b.tokens) / float64(rate) * float64(time.Second))
	}
	return int(b.tokens), 0
}

func (b *bucket) spend(n int) {
	if b.rate > 0 {
		b.tokens -= float64(n)
	}
}
