package web

import (
	"strconv"
	"testing"
	"time"
)

// The buckets refill at their rate, a refused request takes nothing, and
// a flood of fresh addresses cannot grow the map past maxKeys.
func TestCostLimiterRefillsAndStaysBounded(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	l := NewCostLimiter(2, 1, 3, 1, 100)
	l.now = func() time.Time { return now }
	for i := range 2 {
		if _, ok := l.Allow("ann", "10.0.0.1"); !ok {
			t.Fatalf("request %d refused", i+1)
		}
	}
	wait, ok := l.Allow("ann", "10.0.0.1")
	if ok || wait != time.Second {
		t.Fatalf("third request: ok %v wait %v, want refused for 1s", ok, wait)
	}
	if _, ok := l.Allow("bob", "10.0.0.1"); !ok {
		t.Fatal("another user from the same address refused (the address has 1 left)")
	}
	if _, ok := l.Allow("cat", "10.0.0.1"); ok {
		t.Fatal("the address's budget is spent, yet a third user got through")
	}
	now = now.Add(time.Second)
	if _, ok := l.Allow("ann", "10.0.0.1"); !ok {
		t.Fatal("refused after a second's refill")
	}
	for i := range 1000 {
		l.Allow("u"+strconv.Itoa(i), "192.0.2."+strconv.Itoa(i))
	}
	if n := l.Len(); n > 100 {
		t.Fatalf("%d buckets after a flood, want at most 100", n)
	}
}
