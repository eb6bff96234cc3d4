package model

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
)

func TestNameIsItsString(t *testing.T) {
	a, b := Intern("events"), Intern("audit")
	if a.String() != "events" || b.String() != "audit" || (Name{}).String() != "" || Intern("") != (Name{}) {
		t.Fatalf("names: %q %q %q", a, b, Name{})
	}
	if Intern("events") != a || a == b {
		t.Error("one string, two names, or two strings, one name")
	}
	if !b.Less(a) || a.Less(b) || a.Less(a) {
		t.Error("names do not order as their strings")
	}
	j, err := json.Marshal(struct{ T Name }{a})
	if err != nil || string(j) != `{"T":"events"}` {
		t.Errorf("JSON %s, %v", j, err)
	}
	if s := fmt.Sprintf("%s/%v", a, b); s != "events/audit" {
		t.Errorf("formatted %q", s)
	}
}

// Readers never take the lock: run with -race to see them read a table
// interning grows.
func TestNameReadWhileInterning(t *testing.T) {
	var wg sync.WaitGroup
	seen := make(chan Name, 1000)
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer close(seen)
		for i := range 1000 {
			seen <- Intern(fmt.Sprintf("topic-%d", i))
		}
	}()
	go func() {
		defer wg.Done()
		i := 0
		for n := range seen {
			if want := fmt.Sprintf("topic-%d", i); n.String() != want {
				t.Errorf("%d: %q, want %q", i, n, want)
			}
			i++
		}
	}()
	wg.Wait()
}
