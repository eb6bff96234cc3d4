package storage_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// A session read a moment ago answers from memory, but every change this
// process makes to users or sessions shows at the very next request, and
// one made by another process (the users command beside a running
// console) within the cache's second.
func TestSessionCacheNeverOutlivesAChange(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s, path := sessionsAt(t, &now, "alice", "bob")
	ctx := context.Background()
	// cached signs in as name and reads the session twice, so the second
	// read is the cache's answer.
	cached := func(name string) string {
		t.Helper()
		tok, err := s.CreateSession(ctx, name, "", "")
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if u, err := s.SessionUser(ctx, tok, idle, absolute); err != nil || u.Name != name {
				t.Fatalf("fresh session of %s: %+v, %v", name, u, err)
			}
		}
		return tok
	}
	user := func(tok string) (model.User, error) { return s.SessionUser(ctx, tok, idle, absolute) }

	tok := cached("alice")
	if err := s.SetRole(ctx, "alice", "viewer"); err != nil {
		t.Fatal(err)
	}
	if u, err := user(tok); err != nil || u.Role != "viewer" {
		t.Fatalf("after the role change: %+v, %v; want the viewer at once", u, err)
	}
	for _, c := range []struct {
		what   string
		change func() error
	}{
		{"sign-out", func() error { return s.DeleteSession(ctx, tok) }},
		{"disable", func() error { return s.SetDisabled(ctx, "alice", true) }},
		{"new password", func() error { return s.SetPassword(ctx, "alice", "h2") }},
		{"sign-out everywhere", func() error { _, err := s.DeleteUserSessions(ctx, "alice"); return err }},
		{"audited sign-out everywhere", func() error {
			_, _, err := s.DeleteUserSessionsAudited(ctx, "alice", model.AuditEntry{Actor: "admin", Action: "sessions.revoke", Details: []byte("{}")})
			return err
		}},
	} {
		s.SetDisabled(ctx, "alice", false)
		tok = cached("alice")
		if err := c.change(); err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		if u, err := user(tok); !errors.Is(err, storage.ErrNoSession) {
			t.Errorf("right after the %s: %+v, %v; want no session", c.what, u, err)
		}
	}

	// Expiry is judged at every request, from memory too.
	tok = cached("bob")
	now = now.Add(idle + time.Millisecond)
	if _, err := user(tok); !errors.Is(err, storage.ErrSessionExpired) {
		t.Errorf("idle past the timeout, read a moment before: %v; want expired", err)
	}

	// Another process: the change is not seen by this one, so it shows
	// when the cached answer is a second old.
	now = now.Add(time.Hour)
	tok = cached("bob")
	other, err := storage.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.SetDisabled(ctx, "bob", true); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Second)
	if _, err := user(tok); !errors.Is(err, storage.ErrNoSession) {
		t.Errorf("a second after another process disabled bob: %v; want no session", err)
	}
}
