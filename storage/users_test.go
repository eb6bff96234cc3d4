package storage_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

func TestUsers(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	if err := s.CreateUser(ctx, model.User{Name: "alice", Role: "operator", PasswordHash: "h1"}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateUser(ctx, model.User{Name: "alice", Role: "viewer"}); !errors.Is(err, storage.ErrUserExists) {
		t.Fatalf("duplicate user: %v", err)
	}
	if err := s.CreateUser(ctx, model.User{Name: "bob", Role: "root"}); err == nil {
		t.Fatal("role root accepted")
	}
	if err := s.CreateUser(ctx, model.User{Name: "bob", Role: "viewer"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetRole(ctx, "bob", "admin"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetRole(ctx, "bob", "god"); err == nil {
		t.Fatal("SetRole god accepted")
	}
	if err := s.SetPassword(ctx, "alice", "h2"); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{s.SetRole(ctx, "nobody", "viewer"), s.SetPassword(ctx, "nobody", "x"), s.SetDisabled(ctx, "nobody", true)} {
		if !errors.Is(err, storage.ErrUnknownUser) {
			t.Errorf("change to unknown user: %v", err)
		}
	}
	if _, err := s.UserByName(ctx, "nobody"); !errors.Is(err, storage.ErrUnknownUser) {
		t.Fatalf("UserByName(nobody) = %v", err)
	}
	users, err := s.Users(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 2 || users[0].Name != "alice" || users[0].PasswordHash != "h2" || users[0].Role != "operator" ||
		users[1].Name != "bob" || users[1].Role != "admin" || users[1].CreatedMs == 0 {
		t.Fatalf("users = %+v", users)
	}
}

// The session timeouts the session tests use.
const idle, absolute = 30 * time.Minute, 12 * time.Hour

// sessionsAt opens a store whose clock reads *now (until the test ends),
// with an operator account for each of names.
func sessionsAt(t *testing.T, now *time.Time, names ...string) (*storage.Store, string) {
	t.Helper()
	s, path := openStore(t)
	t.Cleanup(storage.SetClock(func() time.Time { return *now }))
	for _, name := range names {
		if err := s.CreateUser(context.Background(), model.User{Name: name, Role: "operator", PasswordHash: "h"}); err != nil {
			t.Fatal(err)
		}
	}
	return s, path
}

func TestSessions(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s, _ := sessionsAt(t, &now, "alice")
	ctx := context.Background()
	tok, err := s.CreateSession(ctx, "alice", "10.0.0.1", "test")
	if err != nil {
		t.Fatal(err)
	}
	if len(tok) != 43 { // 32 bytes base64url
		t.Fatalf("token %q: want 256 random bits", tok)
	}
	tok2, _ := s.CreateSession(ctx, "alice", "10.0.0.1", "test")
	if tok2 == tok {
		t.Fatal("two sessions got the same token")
	}
	if u, err := s.SessionUser(ctx, tok, idle, absolute); err != nil || u.Name != "alice" || u.Role != "operator" {
		t.Fatalf("SessionUser = %+v, %v", u, err)
	}
	if _, err := s.SessionUser(ctx, tok+"x", idle, absolute); !errors.Is(err, storage.ErrNoSession) {
		t.Fatalf("wrong token: %v", err)
	}

	// Activity every 20 minutes keeps a session past its idle timeout
	// but not past the absolute one.
	for i := 0; i < 40; i++ {
		now = now.Add(20 * time.Minute)
		_, err := s.SessionUser(ctx, tok, idle, absolute)
		if elapsed := time.Duration(i+1) * 20 * time.Minute; elapsed <= absolute && err != nil {
			t.Fatalf("after %v of activity: %v", elapsed, err)
		} else if elapsed > absolute {
			if !errors.Is(err, storage.ErrSessionExpired) {
				t.Fatalf("after %v: %v, want expired (absolute timeout)", elapsed, err)
			}
			break
		}
	}
	// Expired sessions are deleted, not only refused.
	if _, err := s.SessionUser(ctx, tok, 100*time.Hour, 100*time.Hour); !errors.Is(err, storage.ErrNoSession) {
		t.Fatalf("expired session still there: %v", err)
	}

	// Idle: untouched for longer than idle. PeekSession does not renew.
	tok3, _ := s.CreateSession(ctx, "alice", "", "")
	now = now.Add(20 * time.Minute)
	if _, err := s.PeekSession(ctx, tok3, idle, absolute); err != nil {
		t.Fatal(err)
	}
	now = now.Add(11 * time.Minute)
	if _, err := s.SessionUser(ctx, tok3, idle, absolute); !errors.Is(err, storage.ErrSessionExpired) {
		t.Fatalf("idle 31 min (peeked at 20): %v, want expired", err)
	}

	// Disabling a user ends their sessions; a new password too.
	tok4, _ := s.CreateSession(ctx, "alice", "", "")
	if err := s.SetDisabled(ctx, "alice", true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SessionUser(ctx, tok4, idle, absolute); !errors.Is(err, storage.ErrNoSession) {
		t.Fatalf("session of disabled user: %v", err)
	}
	s.SetDisabled(ctx, "alice", false)
	tok5, _ := s.CreateSession(ctx, "alice", "", "")
	if err := s.SetPassword(ctx, "alice", "new"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SessionUser(ctx, tok5, idle, absolute); !errors.Is(err, storage.ErrNoSession) {
		t.Fatalf("session survived a password change: %v", err)
	}

	tok6, _ := s.CreateSession(ctx, "alice", "", "")
	if err := s.DeleteSession(ctx, tok6); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SessionUser(ctx, tok6, idle, absolute); !errors.Is(err, storage.ErrNoSession) {
		t.Fatalf("signed-out session: %v", err)
	}
	s.CreateSession(ctx, "alice", "", "")
	s.CreateSession(ctx, "alice", "", "")
	if n, err := s.DeleteUserSessions(ctx, "alice"); err != nil || n != 2 {
		t.Fatalf("DeleteUserSessions = %d, %v", n, err)
	}
	s.CreateSession(ctx, "alice", "", "")
	if c, err := s.SessionCounts(ctx, idle, absolute); err != nil || len(c) != 1 || c["alice"] != 1 {
		t.Fatalf("SessionCounts = %v, %v, want alice: 1", c, err)
	}
	now = now.Add(time.Hour)
	if c, err := s.SessionCounts(ctx, idle, absolute); err != nil || len(c) != 0 {
		t.Fatalf("SessionCounts past the idle timeout = %v, %v, want none", c, err)
	}
	if n, err := s.PurgeSessions(ctx, idle, absolute); err != nil || n != 1 {
		t.Fatalf("PurgeSessions = %d, %v", n, err)
	}
}
