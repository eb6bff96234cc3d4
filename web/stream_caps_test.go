package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/handlers"
	"github.com/drconsole/drconsole/runbook/failback"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/web"
)

// streamConsole is the full router over the shared sandbox, its streams
// ticking every 100 ms.
func streamConsole(t *testing.T) (*console, *web.Console, *httptest.Server) {
	t.Helper()
	return streamConsoleWith(t, config.Auth{InsecureCookie: true, PublicURL: testPublicURL, IdleTimeout: config.Duration(time.Hour),
		AbsoluteTimeout: config.Duration(time.Hour)})
}

func streamConsoleWith(t *testing.T, auth config.Auth) (*console, *web.Console, *httptest.Server) {
	t.Helper()
	c := startConsole(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	h := &handlers.Handlers{Monitor: c.Monitor, Store: c.Store, Log: log, Version: "test", Runbook: c.Runbook, Auth: auth, Worker: &failover.Worker{Runbook: c.Runbook, Log: log}, Failovers: failback.BookOf(c.Runbook)}
	router := web.Router(h, log)
	router.Streams.Tick = 100 * time.Millisecond
	srv := httptest.NewServer(router)
	t.Cleanup(srv.Close)
	t.Cleanup(router.Streams.CloseAll) // before Close, which waits for them
	return c, router, srv
}

// One viewer cannot hold every live stream: past the per-user cap their
// next stream gets 429 with Retry-After, while another user still opens
// one; past the per-address cap, anyone from that address gets 429.
func TestStreamCapsPerUserAndAddress(t *testing.T) {
	c, router, srv := streamConsole(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	viewer, operator, admin := sessionCookie(t, c, "viewer"), sessionCookie(t, c, "operator"), sessionCookie(t, c, "admin")
	for i := range web.DefaultMaxStreamsPerUser {
		if resp := openStream(t, ctx, srv.URL+"/events", viewer); resp.StatusCode != http.StatusOK {
			t.Fatalf("viewer's stream %d: %d", i+1, resp.StatusCode)
		}
	}
	waitOpen(t, router.Streams, web.DefaultMaxStreamsPerUser)
	extra := openStream(t, ctx, srv.URL+"/events", viewer)
	body, _ := io.ReadAll(io.LimitReader(extra.Body, 200)) // an open stream never ends on its own
	if extra.StatusCode != http.StatusTooManyRequests || extra.Header.Get("Retry-After") == "" {
		t.Fatalf("viewer's stream %d: %d %q (Retry-After %q), want 429 with Retry-After",
			web.DefaultMaxStreamsPerUser+1, extra.StatusCode, body, extra.Header.Get("Retry-After"))
	}
	if resp := openStream(t, ctx, srv.URL+"/events", operator); resp.StatusCode != http.StatusOK {
		t.Fatalf("another user's stream while the viewer is at the cap: %d", resp.StatusCode)
	}
	waitOpen(t, router.Streams, web.DefaultMaxStreamsPerUser+1)

	// Every stream here comes from 127.0.0.1: cap the address just above.
	router.Streams.MaxPerAddr = web.DefaultMaxStreamsPerUser + 1
	if resp := openStream(t, ctx, srv.URL+"/events", admin); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a stream past the per-address cap: %d, want 429", resp.StatusCode)
	}
	cancel()
	waitOpen(t, router.Streams, 0)
	if resp := openStream(t, context.Background(), srv.URL+"/events", admin); resp.StatusCode != http.StatusOK {
		t.Fatalf("once the streams closed: %d, want a stream again", resp.StatusCode)
	} else {
		router.Streams.CloseAll()
		resp.Body.Close()
	}
}

// Signing out ends that session's open streams within a tick or two, not
// at the stream's 5-minute MaxAge; so does an admin disabling the account
// (every session of it) and a role change.
func TestStreamsEndWithTheSession(t *testing.T) {
	c, router, srv := streamConsole(t)
	ctx := context.Background()
	ended := func(resp *http.Response) <-chan struct{} {
		done := make(chan struct{})
		go func() { io.Copy(io.Discard, resp.Body); resp.Body.Close(); close(done) }()
		return done
	}
	within := func(what string, done <-chan struct{}) {
		t.Helper()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			t.Fatalf("%s: the stream is still open after 3 s", what)
		}
	}

	viewer := sessionCookie(t, c, "viewer")
	other := sessionCookie(t, c, "viewer") // the same user in another browser
	mine, theirs := openStream(t, ctx, srv.URL+"/events", viewer), openStream(t, ctx, srv.URL+"/events", other)
	if mine.StatusCode != http.StatusOK || theirs.StatusCode != http.StatusOK {
		t.Fatalf("streams: %d %d", mine.StatusCode, theirs.StatusCode)
	}
	mineDone, theirsDone := ended(mine), ended(theirs)
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/logout", nil)
	req.AddCookie(viewer)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	within("signed out", mineDone)
	select {
	case <-theirsDone:
		t.Fatal("signing out in one browser ended the other browser's stream")
	case <-time.After(500 * time.Millisecond):
	}
	router.Streams.CloseAll()
	within("CloseAll", theirsDone)

	// A disabled account and a changed role end the streams of every
	// session of it.
	for _, change := range []struct {
		what string
		do   func() error
		undo func() error
	}{
		{"disabled", func() error { return c.Store.SetDisabled(ctx, "test-operator", true) },
			func() error { return c.Store.SetDisabled(ctx, "test-operator", false) }},
		{"demoted", func() error { return c.Store.SetRole(ctx, "test-operator", "viewer") },
			func() error { return c.Store.SetRole(ctx, "test-operator", "operator") }},
	} {
		s := openStream(t, ctx, srv.URL+"/events", sessionCookie(t, c, "operator"))
		if s.StatusCode != http.StatusOK {
			t.Fatalf("%s: stream %d", change.what, s.StatusCode)
		}
		done := ended(s)
		if err := change.do(); err != nil {
			t.Fatal(err)
		}
		within(change.what, done)
		if err := change.undo(); err != nil {
			t.Fatal(err)
		}
	}
}

// A stream does not renew its session: when the session's idle timeout
// passes, the stream ends (within a tick), not at its 5-minute MaxAge.
// Behind a proxy there is no session: the stream ends when the account
// is disabled in the users table.
func TestStreamsEndWhenTheSessionExpiresOrTheProxyUserIsDisabled(t *testing.T) {
	c, _, srv := streamConsoleWith(t, config.Auth{InsecureCookie: true, PublicURL: testPublicURL,
		IdleTimeout: config.Duration(time.Second), AbsoluteTimeout: config.Duration(time.Hour)})
	resp := openStream(t, context.Background(), srv.URL+"/events", sessionCookie(t, c, "viewer"))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	start := time.Now()
	io.Copy(io.Discard, resp.Body) // until the server ends it
	resp.Body.Close()
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("the stream outlived its 1 s idle session by %v", took-time.Second)
	}

	_, _, psrv := streamConsoleWith(t, config.Auth{Mode: config.AuthProxy, TrustedProxies: []string{"127.0.0.1"}, PublicURL: testPublicURL})
	req, _ := http.NewRequest(http.MethodGet, psrv.URL+"/events", nil)
	req.Header.Set("X-Forwarded-User", "test-operator")
	presp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if presp.StatusCode != http.StatusOK {
		t.Fatalf("proxy stream: %d", presp.StatusCode)
	}
	done := make(chan struct{})
	go func() { io.Copy(io.Discard, presp.Body); presp.Body.Close(); close(done) }()
	ctx := context.Background()
	if err := c.Store.SetDisabled(ctx, "test-operator", true); err != nil {
		t.Fatal(err)
	}
	defer c.Store.SetDisabled(ctx, "test-operator", false)
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Fatal("the proxy user's stream is still open 3 s after the account was disabled")
	}
}

// Served over https the session cookie is __Host-drconsole_session; a
// stream must find its session under that name on every tick, or every
// stream of a production console would end at its first tick.
func TestStreamStaysOpenUnderTheHostPrefixedCookie(t *testing.T) {
	c, _, srv := streamConsoleWith(t, config.Auth{PublicURL: testPublicURL, IdleTimeout: config.Duration(time.Hour),
		AbsoluteTimeout: config.Duration(time.Hour)})
	cookie := sessionCookie(t, c, "viewer")
	cookie.Name = handlers.SessionCookieName(false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := openStream(t, ctx, srv.URL+"/events", cookie)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream under %s: %d", cookie.Name, resp.StatusCode)
	}
	done := make(chan struct{})
	go func() { io.Copy(io.Discard, resp.Body); resp.Body.Close(); close(done) }()
	select {
	case <-done:
		t.Fatal("the stream ended by itself within 1 s (ten ticks) although its session is alive")
	case <-time.After(time.Second):
	}
}
