package identity

// Failed sign-ins in the audit log, counted. The chain is append-only, so
// a record per failure would let anyone, without an account, grow it at
// will (300 failed callbacks were 300 permanent records). Instead, per
// source (SourceKey) and window (a minute from the source's first
// failure):
//   - the first failure is written at once, with all its details;
//   - the others are counted in memory, and one summary record with the
//     count, the reasons and the names tried is written when the window
//     closes (a timer), or at shutdown (Flush).
//
// Bounded loss: a crash loses at most the counts of the windows still
// open, at most one window (a minute) per source; the first failure of
// each is already in the log. Bounded growth: at most two records per
// source and window, and at most maxFailureSources sources at a time;
// past that, failures from further sources are counted under one
// overflow source "*" (its first record written at once, like any).

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/storage"
)

// FailureWindow is how long a source's failures are summed into one record.
const FailureWindow = time.Minute

const (
	// maxFailureSources bounds the sources counted at once.
	maxFailureSources = 1000
	// maxTallied bounds the distinct reasons and names a summary lists;
	// the rest are counted under "(others)".
	maxTallied = 8
)

// Failure is one refused sign-in.
type Failure struct {
	Name    string         // the name tried ("" unknown)
	Reason  string         // why, in plain words
	Details map[string]any // the first record's details (method, reason, ...)
}

// SignInFailures writes the login.failed records of one store's chain.
type SignInFailures struct {
	store *storage.Store
	log   *slog.Logger
	// Window is how long a source's failures are summed (0: FailureWindow).
	Window time.Duration

	mu   sync.Mutex
	open map[string]*failureCount
}

type failureCount struct {
	client      audit.Client
	first, last time.Time
	n           int // failures after the written first one
	reasons     map[string]int
	names       map[string]int
	timer       *time.Timer
	done        bool // summarized or being summarized (s.mu)
}

// NewSignInFailures counts the failed sign-ins recorded in store's chain.
func NewSignInFailures(store *storage.Store, log *slog.Logger) *SignInFailures {
	return &SignInFailures{store: store, log: log, open: map[string]*failureCount{}}
}

func (s *SignInFailures) window() time.Duration {
	if s.Window > 0 {
		return s.Window
	}
	return FailureWindow
}

// Record audits f, a failure from the client ctx carries
// (audit.WithClient): its own login.failed record by "anonymous" when it
// is the first from its source in the window (written true), else one
// more in the count of the window's summary. An error is the first
// record's write failing (the sign-in stays refused; the caller logs it).
func (s *SignInFailures) Record(ctx context.Context, f Failure) (written bool, err error) {
	client := audit.ClientFrom(ctx)
	key := SourceKey(client.IP)
	now := time.Now()
	s.mu.Lock()
	c := s.open[key]
	if c == nil && len(s.open) >= maxFailureSources {
		key = "*"
		c = s.open[key]
	}
	if c != nil && now.Sub(c.first) >= s.window() { // its timer is late
		c.timer.Stop()
		c.done = true
		delete(s.open, key)
		s.mu.Unlock()
		s.summarize(key, c)
		s.mu.Lock()
		c = s.open[key]
	}
	if c != nil {
		c.n++
		c.last = now
		tally(c.reasons, clip(f.Reason))
		tally(c.names, clip(f.Name))
		s.mu.Unlock()
		return false, nil
	}
	c = &failureCount{client: client, first: now, last: now, reasons: map[string]int{}, names: map[string]int{}}
	if key == "*" {
		c.client = audit.Client{IP: "*", UserAgent: "(many sources)"}
	}
	s.open[key] = c
	c.timer = time.AfterFunc(s.window(), func() { s.close(key, c) })
	s.mu.Unlock()

	details := map[string]any{}
	for k, v := range f.Details {
		details[k] = v
	}
	details["counted"] = "further failures from " + key + " in the next " + s.window().String() + " are counted in one record"
	if _, err := audit.New(s.store).Record(ctx, "anonymous", audit.LoginFailed, failedSubject(f.Name), details); err != nil {
		return false, err
	}
	return true, nil
}

func failedSubject(name string) string {
	if name == "" {
		return "user:?"
	}
	return "user:" + clip(name)
}

// tally counts v in m, past maxTallied distinct values under "(others)".
func tally(m map[string]int, v string) {
	if v == "" {
		v = "?"
	}
	if _, ok := m[v]; !ok && len(m) >= maxTallied {
		v = "(others)"
	}
	m[v]++
}

// close ends the window of key's count c and writes its summary.
func (s *SignInFailures) close(key string, c *failureCount) {
	s.mu.Lock()
	if c.done { // Flush took it
		s.mu.Unlock()
		return
	}
	c.done = true
	delete(s.open, key)
	s.mu.Unlock()
	s.summarize(key, c)
}

// summarize writes c's summary record, when failures were counted.
func (s *SignInFailures) summarize(key string, c *failureCount) {
	if c.n == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(audit.WithClient(context.Background(), c.client), 10*time.Second)
	defer cancel()
	_, err := audit.New(s.store).Record(ctx, "anonymous", audit.LoginFailed, "source:"+key, map[string]any{
		"repeated": c.n, "first": c.first.UTC(), "last": c.last.UTC(), "window": s.window().String(),
		"reasons": c.reasons, "usernames": c.names,
	})
	if err != nil && s.log != nil {
		s.log.Error("writing the count of failed sign-ins", "source", key, "count", c.n, "err", err)
	}
}

// Flush ends every open window now and writes their summaries: at
// shutdown, before the store closes, so no count is lost.
func (s *SignInFailures) Flush() {
	s.mu.Lock()
	open := s.open
	s.open = map[string]*failureCount{}
	keys := make([]string, 0, len(open))
	for k, c := range open {
		c.timer.Stop()
		c.done = true
		keys = append(keys, k)
	}
	s.mu.Unlock()
	sort.Slice(keys, func(i, j int) bool { return open[keys[i]].first.Before(open[keys[j]].first) })
	for _, k := range keys {
		s.summarize(k, open[k])
	}
}
