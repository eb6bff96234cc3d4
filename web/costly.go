package web

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/drconsole/drconsole/identity"
)

// CostLimiter bounds the GETs that reach a cluster on every request (the
// reverse flow's fragment reads Connect and both Kafka clusters; the plan
// form's pickers list groups, jars and savepoints; the savepoint pages ask
// Flink and Kafka): a token bucket per user and one per client address,
// so one signed-in viewer cannot turn the console into a load generator
// against the clusters it watches. A refused request gets 429 and
// Retry-After. Pages that only read the console's own memory or database
// are not limited here.
//
// Memory is bounded: at most maxKeys buckets; when full, the buckets that
// have refilled (they hold no state worth keeping) go first, then the
// oldest.
type CostLimiter struct {
	perUser, perAddr bucketShape
	maxKeys          int
	now              func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

// bucketShape: up to burst requests at once, refilling rate per second.
type bucketShape struct{ burst, rate float64 }

type bucket struct {
	tokens float64
	at     time.Time
}

// Cost limits: a run page polls its reverse flow every 5 s (12 a minute),
// so a person with a few tabs open stays well inside them.
const (
	DefaultCostBurstPerUser = 30
	DefaultCostRatePerUser  = 1.0 // per second
	DefaultCostBurstPerAddr = 90
	DefaultCostRatePerAddr  = 3.0
)

// NewCostLimiter allows per user burst requests refilling rate per second,
// and per address burstAddr refilling rateAddr; at most maxKeys buckets.
func NewCostLimiter(burst int, rate float64, burstAddr int, rateAddr float64, maxKeys int) *CostLimiter {
	return &CostLimiter{perUser: bucketShape{float64(burst), rate}, perAddr: bucketShape{float64(burstAddr), rateAddr},
		maxKeys: maxKeys, now: time.Now, buckets: map[string]*bucket{}}
}

// Shape changes the limits (tests that share one console among many).
func (l *CostLimiter) Shape(burst int, rate float64, burstAddr int, rateAddr float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.perUser, l.perAddr = bucketShape{float64(burst), rate}, bucketShape{float64(burstAddr), rateAddr}
	clear(l.buckets)
}

// Allow takes a token from user's and addr's buckets, or, when either is
// empty, takes none and says how long until both have one.
func (l *CostLimiter) Allow(user, addr string) (retryAfter time.Duration, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	type held struct {
		b     *bucket
		shape bucketShape
	}
	var hs []held
	for _, k := range []struct {
		key   string
		shape bucketShape
	}{{"user:" + user, l.perUser}, {"ip:" + addr, l.perAddr}} {
		b := l.bucket(k.key, k.shape, now)
		if b.tokens < 1 {
			retryAfter = max(retryAfter, time.Duration((1-b.tokens)/k.shape.rate*float64(time.Second)))
		}
		hs = append(hs, held{b, k.shape})
	}
	if retryAfter > 0 {
		return retryAfter, false
	}
	for _, h := range hs {
		h.b.tokens--
	}
	return 0, true
}

// bucket returns key's bucket refilled to now. Called with l.mu held.
func (l *CostLimiter) bucket(key string, shape bucketShape, now time.Time) *bucket {
	b := l.buckets[key]
	if b == nil {
		l.makeRoom(now)
		b = &bucket{tokens: shape.burst, at: now}
		l.buckets[key] = b
	}
	b.tokens = min(shape.burst, b.tokens+now.Sub(b.at).Seconds()*shape.rate)
	b.at = now
	return b
}

// makeRoom keeps the map below maxKeys. Called with l.mu held.
func (l *CostLimiter) makeRoom(now time.Time) {
	if len(l.buckets) < l.maxKeys {
		return
	}
	var oldestKey string
	var oldest time.Time
	for k, b := range l.buckets {
		// Refilled by now (at the slower of the two rates): forgetting
		// it changes nothing.
		if b.tokens+now.Sub(b.at).Seconds()*min(l.perUser.rate, l.perAddr.rate) >= max(l.perUser.burst, l.perAddr.burst) {
			delete(l.buckets, k)
			continue
		}
		if oldestKey == "" || b.at.Before(oldest) {
			oldestKey, oldest = k, b.at
		}
	}
	if len(l.buckets) >= l.maxKeys {
		delete(l.buckets, oldestKey)
	}
}

// Len is the number of buckets held.
func (l *CostLimiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// limitCost refuses a request past l's budget for its user or address
// with 429 and Retry-After (whole seconds, at least 1).
func limitCost(l *CostLimiter) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			user := ""
			if u := identity.UserFrom(r.Context()); u != nil {
				user = u.Name
			}
			if wait, ok := l.Allow(user, identity.ClientIP(r)); !ok {
				w.Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
				http.Error(w, "too many requests that reach the clusters; retry in a moment", http.StatusTooManyRequests)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}
