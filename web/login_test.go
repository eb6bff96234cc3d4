package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/handlers"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/web"
)

// authServer is a console without Kafka: enough for signing in, the audit
// log and the role gates, each test with its own database and limiter.
type authServer struct {
	h     http.Handler
	store *storage.Store
	path  string // the database file
	logs  *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func newAuthServer(t *testing.T, auth config.Auth) *authServer {
	t.Helper()
	if auth.PublicURL == "" {
		auth.PublicURL = testPublicURL
	}
	return newAuthServerWith(t, auth, nil)
}

// newAuthServerWith uses limiter (nil: the router's default one) and auth
// as given (no public URL filled in). Each failed sign-in gets its own
// audit record (a window of 1 ns), so tests can read why each was
// refused; newAuthServerFn with the default window counts them.
func newAuthServerWith(t *testing.T, auth config.Auth, limiter *web.LoginLimiter) *authServer {
	t.Helper()
	return newAuthServerFn(t, auth, func(h *handlers.Handlers) {
		if limiter != nil {
			h.Limiter = limiter
		}
		h.Failures = identity.NewSignInFailures(h.Store, h.Log)
		h.Failures.Window = time.Nanosecond
	})
}

// newAuthServerFn is a console for auth, set up further by setup (nil:
// the router's defaults). Its store is its own, so the tests on one run
// in parallel.
func newAuthServerFn(t *testing.T, auth config.Auth, setup func(*handlers.Handlers)) *authServer {
	t.Helper()
	path := filepath.Join(t.TempDir(), "drconsole.db")
	store, err := storage.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if err := createTestUsers(store); err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	h := &handlers.Handlers{Store: store, Log: log, Version: "test", Auth: auth}
	if setup != nil {
		setup(h)
	}
	return &authServer{h: web.Router(h, log), store: store, path: path, logs: logs}
}

// testPublicURL is the console's address in tests: the host that
// httptest.NewRequest puts in every request.
const testPublicURL = "https://example.com"

type reqOpt func(*http.Request)

func from(addr string) reqOpt          { return func(r *http.Request) { r.RemoteAddr = addr } }
func header(k, v string) reqOpt        { return func(r *http.Request) { r.Header.Set(k, v) } }
func withCookie(c *http.Cookie) reqOpt { return func(r *http.Request) { r.AddCookie(c) } }

func (s *authServer) do(method, path string, form url.Values, opts ...reqOpt) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", "login-test")
	for _, o := range opts {
		o(req)
	}
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, req)
	return rec
}

func (s *authServer) login(user, pw, next string, opts ...reqOpt) *httptest.ResponseRecorder {
	return s.do(http.MethodPost, "/login", url.Values{"username": {user}, "password": {pw}, "next": {next}}, opts...)
}

func (s *authServer) audit(t *testing.T, action string) []model.AuditEntry {
	t.Helper()
	es, err := s.store.AuditEntries(context.Background(), storage.AuditFilter{Action: action, Oldest: true})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func sessionFrom(t *testing.T, rec *httptest.ResponseRecorder) *http.Cookie {
	t.Helper()
	for _, c := range rec.Result().Cookies() {
		if c.Name == handlers.SessionCookieName(false) {
			return c
		}
	}
	t.Fatalf("no session cookie in %v", rec.Header()["Set-Cookie"])
	return nil
}

func TestLoginLogoutAndAudit(t *testing.T) {
	t.Parallel()
	s := newAuthServer(t, config.Auth{})
	if rec := s.do(http.MethodGet, "/audit?actor=x", nil); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/login?next=%2Faudit%3Factor%3Dx" {
		t.Fatalf("GET /audit signed out = %d %q", rec.Code, rec.Header().Get("Location"))
	}
	page := s.do(http.MethodGet, "/login?next=%2Faudit", nil)
	for _, want := range []string{`<form method="post" action="/login"`, `autocomplete="current-password"`, `<label for="password">`, `name="next" value="/audit"`} {
		if !strings.Contains(page.Body.String(), want) {
			t.Errorf("login page lacks %q", want)
		}
	}

	// Wrong password and unknown user: the same answer.
	wrong := s.login("test-operator", "not the password", "/audit")
	unknown := s.login("nobody", "not the password", "/audit")
	if wrong.Code != http.StatusUnauthorized || unknown.Code != http.StatusUnauthorized {
		t.Fatalf("failed sign-ins = %d, %d, want 401", wrong.Code, unknown.Code)
	}
	errOf := func(body string) string {
		i := strings.Index(body, `id="login-error">`)
		if i < 0 {
			return ""
		}
		return body[i : i+strings.Index(body[i:], "<")]
	}
	if e := errOf(wrong.Body.String()); e == "" || e != errOf(unknown.Body.String()) {
		t.Fatalf("failure messages differ or are missing: %q vs %q", e, errOf(unknown.Body.String()))
	}
	failed := s.audit(t, "login.failed")
	if len(failed) != 2 || failed[0].Actor != "anonymous" || !strings.Contains(string(failed[1].Details), `"username":"nobody"`) ||
		!strings.Contains(string(failed[0].Details), `"reason":"wrong password"`) || failed[0].UserAgent != "login-test" || failed[0].ClientIP != "192.0.2.1" {
		t.Fatalf("login.failed records = %+v", failed)
	}

	// Sign in: a new session, a hardened cookie, back where we were going.
	ok := s.login("test-operator", testPassword, "/audit")
	if ok.Code != http.StatusSeeOther || ok.Header().Get("Location") != "/audit" {
		t.Fatalf("sign-in = %d %q", ok.Code, ok.Header().Get("Location"))
	}
	c1 := sessionFrom(t, ok)
	if !c1.HttpOnly || !c1.Secure || c1.SameSite != http.SameSiteLaxMode || c1.Path != "/" || len(c1.Value) < 43 {
		t.Fatalf("session cookie = %+v", c1)
	}
	page = s.do(http.MethodGet, "/audit", nil, withCookie(c1))
	for _, want := range []string{`data-testid="signed-in-user">test-operator<`, `id="sign-out"`, `href="/audit"`, `data-action="login"`, `data-action="login.failed"`} {
		if !strings.Contains(page.Body.String(), want) {
			t.Errorf("audit page as test-operator lacks %q", want)
		}
	}

	// Signing in again replaces the session: the old token is dead.
	again := s.login("test-operator", testPassword, "/", withCookie(c1))
	c2 := sessionFrom(t, again)
	if c2.Value == c1.Value {
		t.Fatal("token not rotated on sign-in")
	}
	if rec := s.do(http.MethodGet, "/audit", nil, withCookie(c1)); rec.Code != http.StatusSeeOther {
		t.Fatalf("old session after a new sign-in = %d, want 303", rec.Code)
	}

	// Open redirects are not followed.
	for _, next := range []string{"//evil.example/", "https://evil.example/", "/\\evil.example", "/\t/evil.example/path", "/%5c/evil.example"} {
		if rec := s.login("test-viewer", testPassword, next); rec.Header().Get("Location") != "/" {
			t.Errorf("next=%q redirected to %q", next, rec.Header().Get("Location"))
		}
	}

	// Sign out: session deleted, cookie cleared, audited.
	out := s.do(http.MethodPost, "/logout", nil, withCookie(c2))
	if out.Code != http.StatusSeeOther || out.Header().Get("Location") != "/login" || sessionFrom(t, out).MaxAge >= 0 {
		t.Fatalf("sign-out = %d %q %v", out.Code, out.Header().Get("Location"), out.Header()["Set-Cookie"])
	}
	if rec := s.do(http.MethodGet, "/audit", nil, withCookie(c2)); rec.Code != http.StatusSeeOther {
		t.Fatalf("session after sign-out = %d, want 303", rec.Code)
	}

	// A disabled account cannot sign in.
	s.store.SetDisabled(context.Background(), "test-admin", true)
	if rec := s.login("test-admin", testPassword, "/"); rec.Code != http.StatusUnauthorized {
		t.Fatalf("disabled user sign-in = %d", rec.Code)
	}

	if n := len(s.audit(t, "login")); n != 7 {
		t.Errorf("%d login records, want 7", n)
	}
	if lo := s.audit(t, "logout"); len(lo) != 1 || lo[0].Actor != "test-operator" {
		t.Errorf("logout records = %+v", lo)
	}
	if n, bad, err := s.store.VerifyAudit(context.Background()); err != nil || bad != nil || n == 0 {
		t.Fatalf("VerifyAudit = %d %v %v", n, bad, err)
	}
}

// Five failures per address or per name lock sign-in for the window: 429
// with Retry-After, even with the right password; X-Forwarded-For from an
// untrusted client does not change the address counted.
func TestLoginRateLimit(t *testing.T) {
	t.Parallel()
	s := newAuthServer(t, config.Auth{})
	for i := 0; i < 5; i++ {
		rec := s.login("test-operator", "guess "+strconv.Itoa(i), "/", from("192.0.2.1:4000"), header("X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i)))
		if rec.Code != http.StatusUnauthorized {
			t.Fatalf("attempt %d = %d, want 401", i+1, rec.Code)
		}
	}
	blocked := s.login("test-operator", testPassword, "/", from("192.0.2.1:4000"))
	retry, _ := strconv.Atoi(blocked.Header().Get("Retry-After"))
	if blocked.Code != http.StatusTooManyRequests || retry < 1 || retry > 300 || !strings.Contains(blocked.Body.String(), "Too many failed sign-ins") {
		t.Fatalf("6th attempt = %d Retry-After %q", blocked.Code, blocked.Header().Get("Retry-After"))
	}
	// The name is locked from that address, nobody else: the name itself
	// is only slowed (TestLoginNameSlowedNotLocked), and so is the
	// address (TestLoginSharedAddressNotLocked).
	if rec := s.login("test-viewer", testPassword, "/", from("192.0.2.2:4000")); rec.Code != http.StatusSeeOther {
		t.Fatalf("another name from another address = %d, want 303", rec.Code)
	}
	failed := s.audit(t, "login.failed")
	if len(failed) != 5 || !strings.Contains(string(failed[4].Details), `"locked":true`) || strings.Contains(string(failed[3].Details), `"locked":true`) {
		t.Fatalf("login.failed records: %d, want 5 with the last marked locked (blocked tries are not audited)", len(failed))
	}
}

// Proxy mode: the identity header counts only from a trusted proxy; the
// role comes from the users table, else the groups header.
func TestProxyAuth(t *testing.T) {
	t.Parallel()
	s := newAuthServer(t, config.Auth{Mode: config.AuthProxy, TrustedProxies: []string{"10.0.0.0/8"},
		GroupRoles: map[string]string{"dr-admins": "admin", "sre": "operator"}})
	proxy := from("10.1.2.3:5555")
	get := func(user, groups string, opts ...reqOpt) *httptest.ResponseRecorder {
		opts = append(opts, header("X-Forwarded-User", user), header("X-Forwarded-Groups", groups))
		return s.do(http.MethodGet, "/audit", nil, opts...)
	}
	post := func(user, groups string, opts ...reqOpt) *httptest.ResponseRecorder {
		opts = append(opts, header("X-Forwarded-User", user), header("X-Forwarded-Groups", groups))
		return s.do(http.MethodPost, "/demo/mirror", url.Values{"running": {"true"}}, opts...)
	}

	// From the proxy: a user in the table has that role, whatever the groups say.
	rec := get("test-viewer", "dr-admins", proxy)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `data-testid="signed-in-role">viewer<`) || strings.Contains(rec.Body.String(), `id="sign-out"`) {
		t.Fatalf("trusted proxy, table user = %d", rec.Code)
	}
	if rec := post("test-viewer", "dr-admins", proxy); rec.Code != http.StatusForbidden {
		t.Fatalf("viewer from the proxy POST = %d, want 403", rec.Code)
	}
	// Unknown to the table: the strongest mapped group.
	if rec := get("erin@example.com", "staff, sre", proxy); rec.Code != 200 || !strings.Contains(rec.Body.String(), `signed-in-role">operator<`) {
		t.Fatalf("group-mapped user = %d", rec.Code)
	}
	if rec := post("erin@example.com", "staff,sre", proxy); rec.Code == http.StatusUnauthorized || rec.Code == http.StatusForbidden {
		t.Fatalf("operator by group POST = %d: the role gate refused", rec.Code)
	}
	// Known to the proxy, no role here.
	if rec := get("frank", "staff", proxy); rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "no role") {
		t.Fatalf("user without a role = %d", rec.Code)
	}
	// Disabled in the table: nobody.
	s.store.SetDisabled(context.Background(), "test-operator", true)
	if rec := get("test-operator", "sre", proxy); rec.Code != http.StatusSeeOther {
		t.Fatalf("disabled user = %d, want 303 to sign-in", rec.Code)
	}

	// Not from the proxy: the header is ignored, and logged.
	for _, addr := range []string{"192.0.2.9:1234", "11.0.0.1:1234"} {
		if rec := get("test-admin", "dr-admins", from(addr)); rec.Code != http.StatusSeeOther {
			t.Fatalf("header from untrusted %s: GET = %d, want 303", addr, rec.Code)
		}
		if rec := post("test-admin", "dr-admins", from(addr)); rec.Code != http.StatusUnauthorized {
			t.Fatalf("header from untrusted %s: POST = %d, want 401", addr, rec.Code)
		}
	}
	if !strings.Contains(s.logs.String(), "ignoring identity header from an untrusted address") {
		t.Fatal("untrusted identity header not logged")
	}
	// No password sign-in in proxy mode.
	if rec := s.login("test-admin", testPassword, "/", proxy); rec.Code != http.StatusNotFound {
		t.Fatalf("POST /login in proxy mode = %d", rec.Code)
	}
	// The client address behind the proxy is the nearest untrusted hop.
	rec = s.do(http.MethodPost, "/logout", nil, proxy, header("X-Forwarded-User", "test-viewer"),
		header("X-Forwarded-For", "1.2.3.4, 203.0.113.7, 10.9.9.9"))
	lo := s.audit(t, "logout")
	if rec.Code != http.StatusSeeOther || len(lo) != 1 || lo[0].ClientIP != "203.0.113.7" || lo[0].Actor != "test-viewer" {
		t.Fatalf("logout via proxy = %d, audit %+v", rec.Code, lo)
	}
}

func TestAuditPageAndExport(t *testing.T) {
	t.Parallel()
	s := newAuthServer(t, config.Auth{})
	ctx := context.Background()
	for i := 0; i < 60; i++ {
		action := "test.even"
		if i%2 == 1 {
			action = "test.odd"
		}
		if _, err := s.store.AppendAudit(ctx, model.AuditEntry{Actor: "alice", Action: action, ClientIP: "10.0.0.1",
			Subject: fmt.Sprintf("run:%d", i), Details: json.RawMessage(fmt.Sprintf(`{"i":%d,"note":"<script>"}`, i))}); err != nil {
			t.Fatal(err)
		}
	}
	tok, _ := s.store.CreateSession(ctx, "test-viewer", "", "")
	viewer := withCookie(&http.Cookie{Name: handlers.SessionCookieName(false), Value: tok})

	page := s.do(http.MethodGet, "/audit", nil, viewer).Body.String()
	if n := strings.Count(page, "<tr data-action="); n != 50 {
		t.Fatalf("first page has %d rows, want 50", n)
	}
	if strings.Contains(page, `"<script>"`) || !strings.Contains(page, `&lt;script&gt;`) {
		t.Fatal("details not escaped")
	}
	if !strings.Contains(page, `href="/audit?before=11"`) || !strings.Contains(page, `href="/audit/export?format=csv"`) {
		t.Fatal("no older-page or export link")
	}
	older := s.do(http.MethodGet, "/audit?before=11", nil, viewer).Body.String()
	if n := strings.Count(older, "<tr data-action="); n != 10 || strings.Contains(older, "rel=\"next\"") {
		t.Fatalf("second page has %d rows", n)
	}
	odd := s.do(http.MethodGet, "/audit?action=test.odd&subject=run:5", nil, viewer).Body.String()
	if n := strings.Count(odd, "<tr data-action=\"test.odd\""); n != 6 { // run:5, run:51 .. run:59 odd
		t.Fatalf("filtered page has %d rows, want 6", n)
	}
	if rec := s.do(http.MethodGet, "/audit?since=yesterday", nil, viewer); rec.Code != http.StatusBadRequest {
		t.Fatalf("bad since = %d", rec.Code)
	}

	exp := s.do(http.MethodGet, "/audit/export?format=jsonl&action=test.odd", nil, viewer)
	if exp.Code != 200 || !strings.HasPrefix(exp.Header().Get("Content-Disposition"), `attachment; filename="drconsole-audit-`) ||
		!strings.HasSuffix(exp.Header().Get("Content-Disposition"), `.jsonl"`) {
		t.Fatalf("export = %d %q", exp.Code, exp.Header().Get("Content-Disposition"))
	}
	lines := strings.Split(strings.TrimSpace(exp.Body.String()), "\n")
	if len(lines) != 30 || !strings.Contains(lines[0], `"subject":"run:1"`) || !strings.Contains(lines[0], `"note":"<script>"`) {
		t.Fatalf("jsonl export: %d lines, first %s", len(lines), lines[0])
	}
	csv := s.do(http.MethodGet, "/audit/export?format=csv", nil, viewer)
	if csv.Header().Get("Content-Type") != "text/csv; charset=utf-8" || strings.Count(csv.Body.String(), "\n") != 61 {
		t.Fatalf("csv export %q, %d lines", csv.Header().Get("Content-Type"), strings.Count(csv.Body.String(), "\n"))
	}
	if rec := s.do(http.MethodGet, "/audit/export?format=xml", nil, viewer); rec.Code != http.StatusBadRequest {
		t.Fatalf("format xml = %d", rec.Code)
	}
}

// Proxy mode compares names the way approvals do, without regard to case:
// "Carol" is the disabled carol and "Dave" the viewer dave, not strangers
// the groups header may promote. Password sign-in does the same.
func TestUserNamesIgnoreCase(t *testing.T) {
	t.Parallel()
	s := newAuthServer(t, config.Auth{Mode: config.AuthProxy, TrustedProxies: []string{"10.0.0.0/8"},
		GroupRoles: map[string]string{"sre": "operator"}})
	ctx := context.Background()
	for _, u := range []model.User{{Name: "carol", Role: "operator", Disabled: true}, {Name: "dave", Role: "viewer"}} {
		if err := s.store.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	as := func(user string) *httptest.ResponseRecorder {
		return s.do(http.MethodGet, "/audit", nil, from("10.1.2.3:5555"), header("X-Forwarded-User", user), header("X-Forwarded-Groups", "sre"))
	}
	// U+212A KELVIN SIGN lowers to "k": "\u212Aarol" is not carol's
	// spelling but another name, refused as not a valid user name.
	if err := s.store.CreateUser(ctx, model.User{Name: "karol", Role: "admin"}); err != nil {
		t.Fatal(err)
	}
	if rec := as("\u212Aarol"); rec.Code != http.StatusSeeOther {
		t.Errorf("\\u212Aarol = %d, want 303 (no user), not the admin karol", rec.Code)
	}
	for _, name := range []string{"Carol", "CAROL", " carol "} {
		if rec := as(name); rec.Code != http.StatusSeeOther {
			t.Errorf("disabled carol as %q = %d, want 303 (no user)", name, rec.Code)
		}
	}
	for _, name := range []string{"Dave", "DAVE", "dave"} {
		rec := as(name)
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), `signed-in-role">viewer<`) || !strings.Contains(rec.Body.String(), `signed-in-user">dave<`) {
			t.Errorf("viewer dave as %q = %d, want the viewer dave", name, rec.Code)
		}
		if rec := s.do(http.MethodPost, "/demo/mirror", url.Values{"running": {"true"}}, from("10.1.2.3:5555"),
			header("X-Forwarded-User", name), header("X-Forwarded-Groups", "sre")); rec.Code != http.StatusForbidden {
			t.Errorf("viewer dave as %q POST = %d, want 403", name, rec.Code)
		}
	}

	local := newAuthServer(t, config.Auth{})
	rec := local.login("  Test-Operator ", testPassword, "/audit")
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("sign-in as Test-Operator = %d", rec.Code)
	}
	page := local.do(http.MethodGet, "/audit", nil, withCookie(sessionFrom(t, rec)))
	if !strings.Contains(page.Body.String(), `signed-in-user">test-operator<`) {
		t.Fatal("signed in under another spelling than the canonical name")
	}
	if err := local.store.CreateUser(ctx, model.User{Name: "TEST-viewer", Role: "admin"}); !errors.Is(err, storage.ErrUserExists) {
		t.Fatalf("creating TEST-viewer next to test-viewer: %v, want ErrUserExists", err)
	}
}

// Many addresses guessing one name cannot lock its owner out: each
// attacking address is locked on its own, the name is only slowed, and
// the real user from a clean address signs in (after the delay).
func TestLoginNameSlowedNotLocked(t *testing.T) {
	t.Parallel()
	lim := web.NewLoginLimiter(5, 5*time.Minute, 10_000)
	lim.NameDelayBase, lim.NameDelayMax = 20*time.Millisecond, 80*time.Millisecond
	s := newAuthServerWith(t, config.Auth{TrustedProxies: []string{"10.0.0.0/8"}, PublicURL: testPublicURL}, lim)
	proxy := from("10.0.0.1:4000")
	for a := 0; a < 6; a++ {
		attacker := header("X-Forwarded-For", fmt.Sprintf("198.51.100.%d", a))
		for i := 0; i < 6; i++ {
			rec := s.login("Test-Operator", "guess "+strconv.Itoa(i), "/", proxy, attacker)
			if want := map[bool]int{true: http.StatusUnauthorized, false: http.StatusTooManyRequests}[i < 5]; rec.Code != want {
				t.Fatalf("attacker %d try %d = %d, want %d", a, i+1, rec.Code, want)
			}
		}
	}
	if d := lim.Delay("user:test-operator"); d != 80*time.Millisecond {
		t.Fatalf("delay after 30 failures = %v, want the 80ms cap", d)
	}
	start := time.Now()
	rec := s.login("test-operator", testPassword, "/audit", proxy, header("X-Forwarded-For", "203.0.113.9"))
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/audit" {
		t.Fatalf("the real user from a clean address = %d %q, want 303 to /audit", rec.Code, rec.Header().Get("Location"))
	}
	if took := time.Since(start); took < 80*time.Millisecond {
		t.Fatalf("sign-in took %v: the name's slowdown was not applied", took)
	}
	// Signing in forgives the name: no more delay for its owner.
	if d := lim.Delay("user:test-operator"); d != 0 {
		t.Fatalf("delay after the owner signed in = %v", d)
	}
	failed := s.audit(t, "login.failed")
	if len(failed) != 30 || !strings.Contains(string(failed[29].Details), `"name_slowed":true`) {
		t.Fatalf("%d login.failed records, want 30, the last with name_slowed", len(failed))
	}
}

// DNS rebinding: a page on evil.example that resolves to the console's
// address sends Host: evil.example; only the public URL's host, localhost
// and IP addresses are answered. The probes answer any Host. Every answer
// carries the hardened CSP.
func TestHostCheckAndCSP(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		public string
		host   string
		ok     bool
	}{
		{"https://drconsole.example.com", "drconsole.example.com", true},
		{"https://drconsole.example.com", "DRConsole.Example.com.:443", true},
		{"https://drconsole.example.com", "evil.example", false},
		{"https://drconsole.example.com", "drconsole.example.com.evil.example", false},
		{"https://drconsole.example.com", "127.0.0.1:8080", true},
		{"", "127.0.0.1:8080", true},
		{"", "localhost:8080", true},
		{"", "[::1]:8080", true},
		{"", "10.1.2.3", true},
		{"", "evil.example:8080", false},
		{"", "localhost.evil.example", false},
		{"", "", false},
	} {
		s := newAuthServerWith(t, config.Auth{PublicURL: tc.public}, nil)
		rec := s.do(http.MethodGet, "/login", nil, func(r *http.Request) { r.Host = tc.host })
		if got := rec.Code == http.StatusOK; got != tc.ok {
			t.Errorf("public %q, Host %q: %d, want allowed=%v", tc.public, tc.host, rec.Code, tc.ok)
		}
		if !tc.ok && (rec.Code != http.StatusMisdirectedRequest || !strings.Contains(rec.Body.String(), "auth.public_url")) {
			t.Errorf("Host %q refused with %d %q", tc.host, rec.Code, rec.Body.String())
		}
		if probe := s.do(http.MethodGet, "/healthz", nil, func(r *http.Request) { r.Host = "drconsole.internal.svc:8080" }); probe.Code != http.StatusOK {
			t.Errorf("/healthz with an internal Host = %d", probe.Code)
		}
		csp := rec.Header().Get("Content-Security-Policy")
		for _, want := range []string{"frame-ancestors 'none'", "form-action 'self'", "base-uri 'none'", "default-src 'self'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("CSP %q lacks %q", csp, want)
			}
		}
	}
}

// ASVS: behind a proxy not in auth.trusted_proxies every person has the
// proxy's address. One of them guessing passwords locks the name they
// guess from there, not the address: the others sign in (slowed).
func TestLoginSharedAddressNotLocked(t *testing.T) {
	t.Parallel()
	lim := web.NewLoginLimiter(5, 5*time.Minute, 10_000)
	lim.NameDelayBase, lim.NameDelayMax = 10*time.Millisecond, 40*time.Millisecond
	s := newAuthServerWith(t, config.Auth{PublicURL: testPublicURL}, lim)
	proxy := from("10.0.0.1:4000") // untrusted: the client address is the proxy's
	for i := range 12 {
		name := []string{"test-operator", "test-admin"}[i%2]
		if rec := s.login(name, "guess "+strconv.Itoa(i), "/", proxy); rec.Code != http.StatusUnauthorized && rec.Code != http.StatusTooManyRequests {
			t.Fatalf("guess %d = %d", i, rec.Code)
		}
	}
	if rec := s.login("test-operator", testPassword, "/", proxy); rec.Code != http.StatusTooManyRequests {
		t.Fatalf("the guessed name from the guessing address = %d, want 429", rec.Code)
	}
	start := time.Now()
	if rec := s.login("test-viewer", testPassword, "/audit", proxy); rec.Code != http.StatusSeeOther {
		t.Fatalf("another person behind the same proxy = %d, want 303 (locked out by someone else)", rec.Code)
	}
	if took := time.Since(start); took < 40*time.Millisecond {
		t.Fatalf("sign-in from an address that failed 12 times took %v: not slowed", took)
	}
}

// Proxy mode: a trusted proxy's request naming its user twice (two
// headers, or one with a list), or carrying two groups headers, is
// refused with 400 and audited, not "first wins": a proxy that appends
// to a client's X-Forwarded-User would otherwise let the client choose.
func TestProxyDuplicateIdentityHeaders(t *testing.T) {
	t.Parallel()
	s := newAuthServer(t, config.Auth{Mode: config.AuthProxy, TrustedProxies: []string{"10.0.0.0/8"},
		GroupRoles: map[string]string{"dr-admins": "admin", "sre": "operator"}})
	add := func(k, v string) reqOpt { return func(r *http.Request) { r.Header.Add(k, v) } }
	proxy := from("10.1.2.3:5555")
	for _, tc := range []struct {
		name string
		opts []reqOpt
		want string
	}{
		{"two user headers", []reqOpt{add("X-Forwarded-User", "test-admin"), add("X-Forwarded-User", "test-viewer")}, "2 X-Forwarded-User headers"},
		{"a list of users", []reqOpt{add("X-Forwarded-User", "test-admin, test-viewer")}, "names more than one user"},
		{"two groups headers", []reqOpt{add("X-Forwarded-User", "erin"), add("X-Forwarded-Groups", "dr-admins"),
			add("X-Forwarded-Groups", "sre")}, "2 X-Forwarded-Groups headers"},
	} {
		rec := s.do(http.MethodGet, "/audit", nil, append(tc.opts, proxy)...)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), tc.want) {
			t.Errorf("%s: %d %q, want 400 saying %q", tc.name, rec.Code, rec.Body.String(), tc.want)
		}
	}
	failed := s.audit(t, "login.failed")
	if len(failed) != 3 || !strings.Contains(string(failed[0].Details), `"method":"proxy"`) || failed[0].ClientIP != "10.1.2.3" {
		t.Fatalf("login.failed records = %d (%+v)", len(failed), failed)
	}
	// One of each is fine; from an untrusted address the headers count
	// for nothing anyway (sign-in page, not 400).
	if rec := s.do(http.MethodGet, "/audit", nil, proxy, add("X-Forwarded-User", "test-viewer")); rec.Code != http.StatusOK {
		t.Fatalf("one header = %d", rec.Code)
	}
	if rec := s.do(http.MethodGet, "/audit", nil, from("192.0.2.9:1"), add("X-Forwarded-User", "a"), add("X-Forwarded-User", "b")); rec.Code != http.StatusSeeOther {
		t.Fatalf("two headers from an untrusted address = %d, want 303 to sign-in", rec.Code)
	}
}
