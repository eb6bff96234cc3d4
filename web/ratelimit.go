package web

import (
	"sync"
	"time"
)

// LoginLimiter counts failed sign-ins per key and locks a key that reached
// max failures within window until the window ends. The server locks per
// name+address, so guessing one name takes max tries per window from each
// address. Per name alone and per address alone it only slows (Delay): a
// lock per name would let anyone with a few addresses keep the approver
// out during an incident, and a lock per address would keep out everyone
// behind a proxy that is not in auth.trusted_proxies (its address is then
// everyone's); so the real user always gets in, after at most
// NameDelayMax. Single sign-on uses it too (handlers/oidc.go).
//
// Memory is bounded: at most maxKeys keys are tracked. When full, expired
// windows are dropped first, then the oldest window; an attacker flooding
// with fresh names can only push out the oldest entries, and each of their
// addresses is still limited on its own key.
type LoginLimiter struct {
	max     int
	window  time.Duration
	maxKeys int
	now     func() time.Time

	// NameDelayBase and NameDelayMax shape Delay: the first failure past
	// max waits the base, each further one doubles it, up to the max.
	NameDelayBase, NameDelayMax time.Duration

	mu      sync.Mutex
	entries map[string]*failures
}

type failures struct {
	n     int
	start time.Time // first failure of the current window
}

// NewLoginLimiter allows max failures per key per window, tracking at most
// maxKeys keys.
func NewLoginLimiter(max int, window time.Duration, maxKeys int) *LoginLimiter {
	return &LoginLimiter{max: max, window: window, maxKeys: maxKeys, now: time.Now, entries: map[string]*failures{},
		NameDelayBase: 500 * time.Millisecond, NameDelayMax: 8 * time.Second}
}

// Delay is how long an attempt on key waits before its password is
// checked: nothing below max failures in the window, then NameDelayBase
// doubling per further failure up to NameDelayMax. Never a refusal.
func (l *LoginLimiter) Delay(key string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.entries[key]
	if f == nil || l.now().Sub(f.start) >= l.window || f.n < l.max {
		return 0
	}
	d := l.NameDelayBase
	for i := l.max; i < f.n && d < l.NameDelayMax; i++ {
		d *= 2
	}
	return min(d, l.NameDelayMax)
}

// Blocked reports whether any of keys is locked, and how long until all of
// them may try again.
func (l *LoginLimiter) Blocked(keys ...string) (retryAfter time.Duration, blocked bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, k := range keys {
		f := l.entries[k]
		if f == nil || now.Sub(f.start) >= l.window {
			continue
		}
		if f.n >= l.max {
			blocked = true
			retryAfter = max(retryAfter, f.start.Add(l.window).Sub(now))
		}
	}
	return retryAfter, blocked
}

// Failed counts a failure against each key and reports whether that locked
// any of them (the moment worth an audit record; later refusals are not).
func (l *LoginLimiter) Failed(keys ...string) (locked bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, k := range keys {
		f := l.entries[k]
		if f == nil || now.Sub(f.start) >= l.window {
			l.makeRoom(now)
			f = &failures{start: now}
			l.entries[k] = f
		}
		f.n++
		if f.n == l.max {
			locked = true
		}
	}
	return locked
}

// Succeeded forgets the failures of keys.
func (l *LoginLimiter) Succeeded(keys ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		delete(l.entries, k)
	}
}

// Len is the number of keys tracked.
func (l *LoginLimiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

// makeRoom keeps the map below maxKeys. Called with l.mu held; the O(n)
// sweep only runs when the map is full.
func (l *LoginLimiter) makeRoom(now time.Time) {
	if len(l.entries) < l.maxKeys {
		return
	}
	var oldestKey string
	var oldest time.Time
	for k, f := range l.entries {
		if now.Sub(f.start) >= l.window {
			delete(l.entries, k)
			continue
		}
		if oldestKey == "" || f.start.Before(oldest) {
			oldestKey, oldest = k, f.start
		}
	}
	if len(l.entries) >= l.maxKeys {
		delete(l.entries, oldestKey)
	}
}
