package web_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/storage/storagetest"
)

// "Sign out everywhere": a user ends every session of theirs, an admin
// every session of a user; each is one audited change, and another
// user's sessions stay.
func TestSignOutEverywhere(t *testing.T) {
	s := newAuthServer(t, config.Auth{})
	signIn := func(user string) *http.Cookie {
		t.Helper()
		rec := s.login(user, testPassword, "/")
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("sign-in %s: %d", user, rec.Code)
		}
		return sessionFrom(t, rec)
	}
	signedIn := func(c *http.Cookie) bool {
		return s.do(http.MethodGet, "/audit", nil, withCookie(c)).Code == http.StatusOK
	}
	laptop, phone, op := signIn("test-viewer"), signIn("test-viewer"), signIn("test-operator")
	if page := s.do(http.MethodGet, "/audit", nil, withCookie(laptop)).Body.String(); !strings.Contains(page, `action="/logout/everywhere"`) {
		t.Fatal("no sign-out-everywhere button in the account menu")
	}
	rec := s.do(http.MethodPost, "/logout/everywhere", nil, withCookie(laptop))
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/login" {
		t.Fatalf("POST /logout/everywhere = %d %q", rec.Code, rec.Header().Get("Location"))
	}
	if signedIn(laptop) || signedIn(phone) {
		t.Fatalf("after signing out everywhere: laptop %v phone %v still signed in", signedIn(laptop), signedIn(phone))
	}
	if !signedIn(op) {
		t.Fatal("another user's session ended too")
	}
	recs := s.audit(t, "user.signout_all")
	if len(recs) != 1 || recs[0].Actor != "test-viewer" || recs[0].Subject != "user:test-viewer" || !strings.Contains(string(recs[0].Details), `"sessions":2`) {
		t.Fatalf("audit: %+v", recs)
	}

	// An admin on a user's row; a viewer may not.
	victim, admin := signIn("test-viewer"), signIn("test-admin")
	if rec := s.do(http.MethodPost, "/admin/users/test-operator/signout", nil, withCookie(victim)); rec.Code != http.StatusForbidden {
		t.Fatalf("a viewer signing someone out = %d, want 403", rec.Code)
	}
	if page := s.do(http.MethodGet, "/admin/users", nil, withCookie(admin)).Body.String(); !strings.Contains(page, `data-testid="signout-test-viewer"`) {
		t.Fatal("no sign-out-everywhere button on the users page")
	}
	rec = s.do(http.MethodPost, "/admin/users/test-viewer/signout", nil, withCookie(admin))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "Signed test-viewer out everywhere (1 sessions ended)") {
		t.Fatalf("admin sign-out = %d %.300s", rec.Code, rec.Body.String())
	}
	if signedIn(victim) || !signedIn(admin) || !signedIn(op) {
		t.Fatalf("after the admin's sign-out: viewer %v admin %v operator %v", signedIn(victim), signedIn(admin), signedIn(op))
	}
	recs = s.audit(t, "user.signout_all")
	if len(recs) != 2 || recs[1].Actor != "test-admin" || recs[1].Subject != "user:test-viewer" {
		t.Fatalf("audit: %+v", recs)
	}
	if rec := s.do(http.MethodPost, "/admin/users/nobody/signout", nil, withCookie(admin)); rec.Code != http.StatusNotFound {
		t.Fatalf("signing out an unknown user = %d, want 404", rec.Code)
	}
	if n := len(s.audit(t, "user.signout_all")); n != 2 {
		t.Fatalf("%d records after a refused sign-out, want 2", n)
	}
}

// Signing out everywhere ends the live streams of every session of the
// user, in every browser, within a tick or two.
func TestSignOutEverywhereEndsStreams(t *testing.T) {
	c, _, srv := streamConsole(t)
	ctx := context.Background()
	a, b := sessionCookie(t, c, "viewer"), sessionCookie(t, c, "viewer")
	var done []chan struct{}
	for _, ck := range []*http.Cookie{a, b} {
		resp := openStream(t, ctx, srv.URL+"/events", ck)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("stream: %d", resp.StatusCode)
		}
		ch := make(chan struct{})
		go func() { io.Copy(io.Discard, resp.Body); resp.Body.Close(); close(ch) }()
		done = append(done, ch)
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/logout/everywhere", nil)
	req.AddCookie(a)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("POST /logout/everywhere = %d", resp.StatusCode)
	}
	for i, ch := range done {
		select {
		case <-ch:
		case <-time.After(3 * time.Second):
			t.Fatalf("stream %d still open 3 s after signing out everywhere", i+1)
		}
	}
}

// Like a single sign-out, signing out everywhere happens even when the
// audit log cannot record it (refusing would keep a perhaps stolen
// session alive); the page and the log say it went unrecorded.
func TestSignOutEverywhereWithoutAnAuditRecord(t *testing.T) {
	s := newAuthServer(t, config.Auth{})
	admin, victim, self := s.signedIn(t, "test-admin"), s.signedIn(t, "test-viewer"), s.signedIn(t, "test-operator")
	storagetest.FailAuditWrites(t, s.path, true)
	rec := s.post("/admin/users/test-viewer/signout", admin, nil)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "The audit log could not record it.") {
		t.Fatalf("admin sign-out with the audit log unwritable = %d %.300s", rec.Code, rec.Body.String())
	}
	if rec := s.post("/logout/everywhere", self, nil); rec.Code != http.StatusSeeOther {
		t.Fatalf("own sign-out everywhere with the audit log unwritable = %d", rec.Code)
	}
	storagetest.FailAuditWrites(t, s.path, false)
	for name, ck := range map[string]*http.Cookie{"test-viewer": victim, "test-operator": self} {
		if s.do(http.MethodGet, "/audit", nil, withCookie(ck)).Code == http.StatusOK {
			t.Errorf("%s is still signed in", name)
		}
	}
	if !strings.Contains(s.logs.String(), "signed out everywhere without an audit record") {
		t.Error("the unrecorded sign-outs are not in the log")
	}
}
