package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/web"
)

// Issue 29, finding 1: anonymous GET /auth/callback?error=N appended one
// permanent login.failed record each (300 in 0.8 s). Now a source's
// failed callbacks are limited like password guesses (429 past five) and
// audited as one record at once plus one summary with the count.
func TestOIDCCallbackFloodCounted(t *testing.T) {
	t.Parallel()
	p := startIdP(t, false)
	s := newAuthServerFn(t, p.auth(testPublicURL), nil)
	refused, limited := 0, 0
	for i := range 300 {
		rec := s.do(http.MethodGet, fmt.Sprintf("/auth/callback?error=%d", i), nil, from("198.51.100.7:5000"))
		switch rec.Code {
		case http.StatusForbidden:
			refused++
		case http.StatusTooManyRequests:
			limited++
		default:
			t.Fatalf("callback %d = %d", i, rec.Code)
		}
	}
	if n := len(s.audit(t, "login.failed")); n != 1 {
		t.Errorf("%d login.failed records after 300 failed callbacks from one address, want 1 (the rest counted)", n)
	}
	flushFailures(s)
	failed := s.audit(t, "login.failed")
	if len(failed) != 2 {
		t.Fatalf("%d login.failed records once the minute closed, want 2", len(failed))
	}
	var sum struct{ Repeated int }
	json.Unmarshal(failed[1].Details, &sum)
	if sum.Repeated+1 != refused || limited < 290 || failed[1].ClientIP != "198.51.100.7" {
		t.Fatalf("summary %s from %s; %d refused, %d answered 429", failed[1].Details, failed[1].ClientIP, refused, limited)
	}
	// Someone else, from elsewhere, still signs in.
	p.user("bob", "sre")
	if rec := s.ssoSignIn(t, p, "bob", "/"); rec.Code != http.StatusSeeOther {
		t.Fatalf("bob's sign-in during the flood = %d", rec.Code)
	}
}

// Issue 29, finding 6: 11,000 anonymous GET /auth/login pushed every
// pending sign-in out. Now one source is limited (429) and holds a
// bounded number of sign-ins, and another's sign-in completes.
func TestOIDCStartFloodKeepsOthers(t *testing.T) {
	t.Parallel()
	p := startIdP(t, false)
	s := newAuthServerFn(t, p.auth(testPublicURL), nil)
	p.user("bob", "sre")
	cb, state := s.ssoBegin(t, p, "bob", "/audit") // from 192.0.2.1
	limited := 0
	for range 11_000 {
		if s.do(http.MethodGet, "/auth/login?next=/", nil, from("198.51.100.7:5000")).Code == http.StatusTooManyRequests {
			limited++
		}
	}
	rec := s.do(http.MethodGet, cb, nil, withCookie(state))
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/audit" {
		t.Fatalf("bob's callback after a flood of starts elsewhere = %d (%d of 11,000 starts limited)\n%.400s", rec.Code, limited, rec.Body)
	}
	if limited < 10_900 {
		t.Fatalf("%d of 11,000 starts from one address answered 429", limited)
	}
}

// ASVS: over https the session and sign-in state cookies carry the
// __Host- prefix (Path=/, Secure, no Domain); a tossed plain-named
// drconsole_oidc_state, or one holding the state instead of this
// browser's binding, or two of them, completes no sign-in; a plain-named
// session cookie is no session.
func TestOIDCTossedStateCookie(t *testing.T) {
	t.Parallel()
	p := startIdP(t, false)
	s := newAuthServer(t, p.auth(testPublicURL))
	p.user("mallory", "sre")
	stateOf := func(cb string) string {
		u, _ := url.Parse(cb)
		return u.Query().Get("state")
	}
	noSession := func(what string, rec interface {
		Result() *http.Response
	}) {
		t.Helper()
		res := rec.Result()
		for _, c := range res.Cookies() {
			if strings.Contains(c.Name, "drconsole_session") && c.MaxAge >= 0 {
				t.Fatalf("%s: signed in (%d, cookie %s)", what, res.StatusCode, c.Name)
			}
		}
		if res.StatusCode != http.StatusForbidden {
			t.Fatalf("%s = %d, want 403", what, res.StatusCode)
		}
	}
	// Mallory starts a sign-in, and plants its callback and a cookie
	// holding its state in the victim's browser (from a sibling domain).
	cb, _ := s.ssoBegin(t, p, "mallory", "/")
	noSession("tossed drconsole_oidc_state", s.do(http.MethodGet, cb, nil,
		withCookie(&http.Cookie{Name: "drconsole_oidc_state", Value: stateOf(cb)})))
	cb, _ = s.ssoBegin(t, p, "mallory", "/")
	noSession("a __Host- cookie holding the state", s.do(http.MethodGet, cb, nil,
		withCookie(&http.Cookie{Name: "__Host-drconsole_oidc_state", Value: stateOf(cb)})))
	cb, mine := s.ssoBegin(t, p, "mallory", "/")
	noSession("two state cookies", s.do(http.MethodGet, cb, nil, withCookie(mine),
		withCookie(&http.Cookie{Name: mine.Name, Value: "planted"})))

	// The real thing: __Host- cookies, Path=/, Secure, no Domain.
	p.user("bob", "sre")
	in := s.ssoSignIn(t, p, "bob", "/")
	var session *http.Cookie
	for _, c := range in.Result().Cookies() {
		if c.Name == "__Host-drconsole_session" {
			session = c
		}
	}
	if session == nil || !session.Secure || session.Path != "/" || session.Domain != "" || !session.HttpOnly {
		t.Fatalf("session cookie = %+v (Set-Cookie %q)", session, in.Header()["Set-Cookie"])
	}
	if rec := s.do(http.MethodGet, "/audit", nil, withCookie(session)); rec.Code != http.StatusOK {
		t.Fatalf("__Host- session = %d", rec.Code)
	}
	plain := &http.Cookie{Name: "drconsole_session", Value: session.Value}
	if rec := s.do(http.MethodGet, "/audit", nil, withCookie(plain)); rec.Code != http.StatusSeeOther {
		t.Fatalf("plain-named session cookie over https = %d, want 303 to sign-in", rec.Code)
	}
}

// Serve writes the counts of failed sign-ins it holds when it shuts
// down, before the store is closed: a restart loses no count.
func TestServeFlushesFailedSignInCounts(t *testing.T) {
	t.Parallel()
	p := startIdP(t, false)
	s := newAuthServerFn(t, p.auth(testPublicURL), nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- web.Serve(ctx, ln, s.h, slog.New(slog.DiscardHandler)) }()
	for range 3 {
		resp, err := noRedirects.Get("http://" + ln.Addr().String() + "/auth/callback?error=x")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	failed := s.audit(t, "login.failed")
	if len(failed) != 2 || !strings.Contains(string(failed[1].Details), `"repeated":2`) {
		t.Fatalf("after shutdown: %d login.failed records, want the first and a summary of 2", len(failed))
	}
}
