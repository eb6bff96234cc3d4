package web

import (
	"strconv"
	"testing"
	"time"
)

func TestLoginLimiterWindowAndMemory(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	l := NewLoginLimiter(3, 5*time.Minute, 100)
	l.now = func() time.Time { return now }
	for i := 0; i < 2; i++ {
		if l.Failed("ip:a", "user:x") {
			t.Fatalf("failure %d locked", i+1)
		}
	}
	if _, blocked := l.Blocked("ip:a"); blocked {
		t.Fatal("blocked after 2 of 3 failures")
	}
	if !l.Failed("ip:a", "user:x") {
		t.Fatal("third failure did not report the lock")
	}
	now = now.Add(time.Minute)
	if d, blocked := l.Blocked("ip:b", "user:x"); !blocked || d != 4*time.Minute {
		t.Fatalf("Blocked = %v %v, want 4m left", d, blocked)
	}
	l.Succeeded("user:x")
	if _, blocked := l.Blocked("user:x"); blocked {
		t.Fatal("Succeeded did not forget the name")
	}
	now = now.Add(4 * time.Minute)
	if _, blocked := l.Blocked("ip:a"); blocked {
		t.Fatal("still blocked after the window")
	}

	// A flood of names never grows the map past its bound.
	for i := 0; i < 10_000; i++ {
		l.Failed("user:" + strconv.Itoa(i))
		if i%100 == 0 {
			now = now.Add(time.Millisecond)
		}
	}
	if n := l.Len(); n > 100 {
		t.Fatalf("%d keys tracked, bound is 100", n)
	}
}
