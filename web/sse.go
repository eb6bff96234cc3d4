package web

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/drconsole/drconsole/handlers"
	"github.com/drconsole/drconsole/identity"
)

// Streams serves the live pages' Server-Sent Events: per stream, a loop in
// the request's own goroutine renders the page's fragments every Tick and
// sends a named event only for a fragment whose bytes changed, so an idle
// page costs a render per tick and no bytes. The first tick sends every
// fragment: a page that reconnects (or is shown again) catches up at once.
// Comments every Heartbeat keep proxies from closing a quiet stream. The
// request's context ends a stream; so does CloseAll (server shutdown, or a
// test dropping connections), and MaxAge: the browser reconnects through
// the sign-in check. Still is asked every tick whether the request is
// still signed in as the same user with the same role: a sign-out (this
// session, or everywhere), an expired session, a disabled account or a
// changed role ends the stream within a tick. At most Max streams are
// open at once (the next one: 503, and the browser retries later), at
// most MaxPerUser per user and MaxPerAddr per client address (the next
// one: 429), so one viewer cannot hold every stream.
//
// The loop lives here rather than in handlers (which start no goroutines
// and stay thin): a handler only builds the page's handlers.Fragments.
type Streams struct {
	Tick      time.Duration
	Heartbeat time.Duration
	Max       int
	MaxAge    time.Duration
	// MaxPerUser and MaxPerAddr bound one user's and one client
	// address's open streams.
	MaxPerUser, MaxPerAddr int
	// Still reports whether r, which opened a stream, is still signed in
	// as the same user with the same role (nil: not checked).
	Still func(ctx context.Context, r *http.Request) bool

	open   atomic.Int64
	mu     sync.Mutex
	cancel map[*context.CancelFunc]struct{}
	byUser map[string]int
	byAddr map[string]int
	shared tickMemo
}

// Stream defaults: a tick like the 2 s polls they replace; a heartbeat
// well under common proxy idle timeouts (60 s); a bound far above the
// number of people who look at a DR console at once.
const (
	DefaultStreamTick      = 2 * time.Second
	DefaultStreamHeartbeat = 20 * time.Second
	DefaultMaxStreams      = 256
	DefaultStreamMaxAge    = 5 * time.Minute
	// A person with a tab per page they watch, well below the total.
	DefaultMaxStreamsPerUser = 16
	// Several people behind one NAT or proxy, still a quarter of the total.
	DefaultMaxStreamsPerAddr = 64
)

// or returns v, or def when v is not set.
func or[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Open is the number of streams open now.
func (s *Streams) Open() int { return int(s.open.Load()) }

// CloseAll ends every open stream; browsers reconnect on their own.
func (s *Streams) CloseAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.cancel {
		(*c)()
	}
}

// Handler serves one page's events: page checks the request (and answers
// it when refused, through the handlers' error mapper) and returns the
// fragments to push.
func (s *Streams) Handler(page func(http.ResponseWriter, *http.Request) (handlers.Fragments, bool)) http.HandlerFunc {
	return s.handler(nil, page)
}

// Shared serves a page whose fragments depend only on key(r) and the time,
// not on who asks: its streams share one render per tick (the first
// stream to ask renders, the others reuse those bytes), so N open
// overviews cost one render, not N. Each stream still sends only what
// changed since its own last tick.
func (s *Streams) Shared(key func(*http.Request) string, page func(http.ResponseWriter, *http.Request) (handlers.Fragments, bool)) http.HandlerFunc {
	return s.handler(key, page)
}

// Renders counts the shared renders made so far (tests).
func (s *Streams) Renders() int64 { return s.shared.renders.Load() }

func (s *Streams) handler(key func(*http.Request) string, page func(http.ResponseWriter, *http.Request) (handlers.Fragments, bool)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		frags, ok := page(w, r)
		if !ok {
			return
		}
		render := func(ctx context.Context) ([]rendered, error) { return renderAll(ctx, frags) }
		if key != nil {
			k := key(r)
			// Valid for under a tick: a stream never reuses bytes from its
			// own previous tick, and "as of" stays the render's own time.
			valid := or(s.Tick, DefaultStreamTick) * 3 / 4
			render = func(ctx context.Context) ([]rendered, error) {
				return s.shared.get(ctx, k, valid, frags)
			}
		}
		if s.open.Add(1) > int64(or(s.Max, DefaultMaxStreams)) {
			s.open.Add(-1)
			w.Header().Set("Retry-After", "10")
			http.Error(w, "too many live streams open; retry later", http.StatusServiceUnavailable)
			return
		}
		defer s.open.Add(-1)
		ctx, cancel := context.WithTimeout(r.Context(), or(s.MaxAge, DefaultStreamMaxAge))
		defer cancel()
		user, addr := "", identity.ClientIP(r)
		if u := identity.UserFrom(r.Context()); u != nil {
			user = u.Name
		}
		if why := s.take(user, addr, &cancel); why != "" {
			w.Header().Set("Retry-After", "10")
			http.Error(w, why, http.StatusTooManyRequests)
			return
		}
		defer s.give(user, addr, &cancel)
		still := func(context.Context) bool { return true }
		if s.Still != nil {
			still = func(ctx context.Context) bool { return s.Still(ctx, r) }
		}
		s.serve(ctx, w, render, still)
	}
}

// take counts a stream for user and addr and registers its cancel, or
// says why not (a cap reached).
func (s *Streams) take(user, addr string, cancel *context.CancelFunc) (why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel == nil {
		s.cancel, s.byUser, s.byAddr = map[*context.CancelFunc]struct{}{}, map[string]int{}, map[string]int{}
	}
	switch {
	case s.byUser[user] >= or(s.MaxPerUser, DefaultMaxStreamsPerUser):
		return "too many live streams open for " + user + "; close a tab or retry later"
	case s.byAddr[addr] >= or(s.MaxPerAddr, DefaultMaxStreamsPerAddr):
		return "too many live streams open from " + addr + "; retry later"
	}
	s.byUser[user]++
	s.byAddr[addr]++
	s.cancel[cancel] = struct{}{}
	return ""
}

// give undoes take.
func (s *Streams) give(user, addr string, cancel *context.CancelFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.cancel, cancel)
	for _, c := range []struct {
		m map[string]int
		k string
	}{{s.byUser, user}, {s.byAddr, addr}} {
		if c.m[c.k]--; c.m[c.k] <= 0 {
			delete(c.m, c.k) // the maps stay as small as the set of streamers
		}
	}
}

func (s *Streams) serve(ctx context.Context, w http.ResponseWriter, render func(context.Context) ([]rendered, error), still func(context.Context) bool) {
	rc := http.NewResponseController(w)
	heartbeat := or(s.Heartbeat, DefaultStreamHeartbeat)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	// retry: how soon the browser reconnects after a drop.
	if !s.write(rc, w, heartbeat, []byte("retry: 2000\n\n")) {
		return
	}
	tick := time.NewTicker(or(s.Tick, DefaultStreamTick))
	defer tick.Stop()
	last := map[string][]byte{}
	lastWrite := time.Now()
	var out bytes.Buffer
	for first := true; ; first = false {
		// Signed out, expired, disabled or given another role since the
		// stream opened: end it (the browser reconnects through sign-in).
		if !first && !still(ctx) {
			return
		}
		out.Reset()
		fs, err := render(ctx)
		if err != nil {
			return // the page went away (run deleted, ...): the browser's retry asks again
		}
		for _, f := range fs {
			if prev, sent := last[f.event]; sent && bytes.Equal(prev, f.body) {
				continue
			}
			last[f.event] = f.body // never written to: shared bytes stay as rendered
			writeEvent(&out, f.event, f.body)
		}
		if out.Len() == 0 && time.Since(lastWrite) >= heartbeat {
			out.WriteString(": ping\n\n")
		}
		if out.Len() > 0 {
			if !s.write(rc, w, heartbeat, out.Bytes()) {
				return
			}
			lastWrite = time.Now()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// write sends b at once; a client that does not read within a heartbeat
// (and the server's WriteTimeout, which a stream outlives) ends the stream.
func (s *Streams) write(rc *http.ResponseController, w http.ResponseWriter, heartbeat time.Duration, b []byte) bool {
	_ = rc.SetWriteDeadline(time.Now().Add(heartbeat + 10*time.Second))
	if _, err := w.Write(b); err != nil {
		return false
	}
	return rc.Flush() == nil
}

// writeEvent frames one named event; every line of data gets its own
// "data:" field (the browser joins them with newlines).
func writeEvent(out *bytes.Buffer, name string, data []byte) {
	out.WriteString("event: ")
	out.WriteString(name)
	out.WriteByte('\n')
	for _, line := range strings.Split(string(data), "\n") {
		out.WriteString("data: ")
		out.WriteString(strings.TrimSuffix(line, "\r"))
		out.WriteByte('\n')
	}
	out.WriteByte('\n')
}

// rendered is one fragment's bytes as of one tick.
type rendered struct {
	event string
	body  []byte
}

// renderAll renders a page's fragments as of now.
func renderAll(ctx context.Context, frags handlers.Fragments) ([]rendered, error) {
	fs, err := frags(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]rendered, len(fs))
	var buf bytes.Buffer
	for i, f := range fs {
		buf.Reset()
		if err := f.View.Render(ctx, &buf); err != nil {
			return nil, err
		}
		out[i] = rendered{f.Event, bytes.Clone(buf.Bytes())}
	}
	return out, nil
}

// tickMemo holds the last render of each shared key for under a tick.
type tickMemo struct {
	mu      sync.Mutex
	entries map[string]*memoEntry
	renders atomic.Int64
}

type memoEntry struct {
	mu  sync.Mutex // held while rendering: streams asking at once wait and reuse
	at  time.Time
	out []rendered
}

// get returns key's render if it is younger than valid, else renders it
// with frags. A failed render is not kept: the next asker tries again.
func (m *tickMemo) get(ctx context.Context, key string, valid time.Duration, frags handlers.Fragments) ([]rendered, error) {
	m.mu.Lock()
	if m.entries == nil {
		m.entries = map[string]*memoEntry{}
	}
	e := m.entries[key]
	if e == nil {
		// Keys come from a query string: drop the idle ones so that the
		// map stays as small as the set of keys in use.
		for k, old := range m.entries {
			if old.mu.TryLock() {
				if time.Since(old.at) > valid {
					delete(m.entries, k)
				}
				old.mu.Unlock()
			}
		}
		e = &memoEntry{}
		m.entries[key] = e
	}
	m.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.out != nil && time.Since(e.at) < valid {
		return e.out, nil
	}
	m.renders.Add(1)
	out, err := renderAll(ctx, frags)
	if err != nil {
		return nil, err
	}
	e.out, e.at = out, time.Now()
	return out, nil
}

// overviewKey is what the overview's fragments depend on besides the time:
// the loss count the page was loaded with (handlers.OverviewEvents).
func overviewKey(r *http.Request) string { return r.URL.Query().Get("losses") }
