package storage

import (
	"sync"
	"time"

	"github.com/drconsole/drconsole/model"
)

// sessionCacheTTL bounds how long a session read from SQLite answers
// again without a query. Every request carries a session, and reading it
// was ~30 % of the console's CPU serving a cached page (the scale rig,
// 100k partitions); a second keeps that to one query a second per busy
// session. A change this process makes to users or sessions (sign-out,
// disable, password, role) clears the cache at once; one made by another
// process on the same database (`drconsole users disable` while the
// console runs) takes effect within this bound.
const sessionCacheTTL = time.Second

// sessionCacheMax bounds the entries: only sessions that exist are kept,
// so this is the busy operators' sessions, never a stranger's guesses.
const sessionCacheMax = 1024

type cachedSession struct {
	user                  model.User
	createdMs, lastSeenMs int64
	readAt                time.Time
}

// sessionCache holds recently read sessions by token hash. gen counts the
// changes to users and sessions: a reader notes it before its query and
// keeps the answer only if no change landed meanwhile, so a sign-out
// committed during a read is never undone by that read's stale row.
type sessionCache struct {
	mu  sync.Mutex
	gen uint64
	m   map[string]cachedSession
}

// generation is the count to pass to put for a query started now.
func (c *sessionCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// get is the session read within the TTL, if any.
func (c *sessionCache) get(hash string, now time.Time) (cachedSession, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[hash]
	if !ok || now.Sub(e.readAt) >= sessionCacheTTL || now.Before(e.readAt) {
		return cachedSession{}, false
	}
	return e, true
}

// put keeps e unless users or sessions changed since gen was taken.
func (c *sessionCache) put(hash string, gen uint64, e cachedSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if c.m == nil || len(c.m) >= sessionCacheMax {
		c.m = map[string]cachedSession{}
	}
	c.m[hash] = e
}

// invalidate forgets every session; called after each write to users or
// sessions has committed (or failed: forgetting is always safe).
func (c *sessionCache) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.m)
}
