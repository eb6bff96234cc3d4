package storage

import (
	"testing"
	"time"

	"github.com/drconsole/drconsole/model"
)

// A read that began before a sign-out committed must not put its row back:
// the row it holds may be the signed-out session.
func TestSessionCacheDropsAReadOvertakenByAChange(t *testing.T) {
	var c sessionCache
	now := time.Unix(1_800_000_000, 0)
	e := cachedSession{user: model.User{Name: "alice"}, readAt: now}
	gen := c.generation() // the read starts
	c.invalidate()        // a sign-out commits meanwhile
	c.put("h", gen, e)    // the read ends with the old row
	if _, ok := c.get("h", now); ok {
		t.Fatal("a read overtaken by a change was kept")
	}
	c.put("h", c.generation(), e)
	if _, ok := c.get("h", now); !ok {
		t.Fatal("a read with no change meanwhile was not kept")
	}
	if _, ok := c.get("h", now.Add(sessionCacheTTL)); ok {
		t.Fatal("kept past its TTL")
	}
	if _, ok := c.get("h", now.Add(-time.Second)); ok {
		t.Fatal("kept across the clock going back")
	}
}
