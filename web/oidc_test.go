package web_test

import (
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/drconsole/drconsole/handlers"
	"github.com/drconsole/drconsole/model"
)

const stateCookieName = "__Host-drconsole_oidc_state"

// noRedirects is a client that shows redirects instead of following them.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Timeout: 10 * time.Second}

// ssoBegin starts a sign-in at the console (next) and logs in at the
// provider as login: the callback the provider sends the browser to, and
// the browser's state cookie.
func (s *authServer) ssoBegin(t *testing.T, p *idp, login, next string) (callback string, state *http.Cookie) {
	t.Helper()
	start := s.do(http.MethodGet, "/auth/login?next="+url.QueryEscape(next), nil)
	to := start.Header().Get("Location")
	if start.Code != http.StatusSeeOther || !strings.HasPrefix(to, p.m.AuthorizationEndpoint()+"?") {
		t.Fatalf("start = %d %q, want a redirect to the provider\n%s", start.Code, to, start.Body)
	}
	for _, c := range start.Result().Cookies() {
		if c.Name == stateCookieName {
			state = c
		}
	}
	if state == nil || !state.HttpOnly || !state.Secure || state.SameSite != http.SameSiteLaxMode || state.Path != "/" ||
		state.MaxAge <= 0 || state.MaxAge > 600 {
		t.Fatalf("state cookie = %+v", state)
	}
	resp, err := noRedirects.Get(to + "&login=" + url.QueryEscape(login))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cb, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil || cb.Path != "/auth/callback" {
		t.Fatalf("provider answered %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	return cb.RequestURI(), state
}

// ssoSignIn is ssoBegin and the callback in the same browser.
func (s *authServer) ssoSignIn(t *testing.T, p *idp, login, next string) *httptest.ResponseRecorder {
	t.Helper()
	cb, state := s.ssoBegin(t, p, login, next)
	return s.do(http.MethodGet, cb, nil, withCookie(state))
}

// refusedAs checks that rec is a refused sign-in naming why (want), with
// no session, and that the refusal is audited.
func (s *authServer) refusedAs(t *testing.T, rec *httptest.ResponseRecorder, want string) {
	t.Helper()
	if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), `id="sso-error"`) {
		t.Errorf("refused sign-in = %d, want 403 with the reason shown\n%s", rec.Code, rec.Body)
	}
	for _, c := range rec.Result().Cookies() {
		if c.Name == handlers.SessionCookieName(false) && c.MaxAge >= 0 {
			t.Errorf("refused sign-in set a session cookie %+v", c)
		}
	}
	failed := s.audit(t, "login.failed")
	if len(failed) == 0 {
		t.Fatalf("refusal %q not audited", want)
	}
	last := failed[len(failed)-1]
	var d struct{ Method, Reason string }
	json.Unmarshal(last.Details, &d)
	if d.Method != "oidc" || !strings.Contains(d.Reason, want) || last.Actor != "anonymous" {
		t.Errorf("login.failed = %s by %s, want method oidc and a reason with %q", last.Details, last.Actor, want)
	}
	if !strings.Contains(rec.Body.String(), template_escape(want)) {
		t.Errorf("the page does not say %q", want)
	}
}

// template_escape is want as the page prints it.
func template_escape(s string) string {
	return strings.NewReplacer(`'`, "&#39;", `"`, "&#34;", "&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func sessionRole(t *testing.T, s *authServer, c *http.Cookie) (user, role string) {
	t.Helper()
	page := s.do(http.MethodGet, "/audit", nil, withCookie(c)).Body.String()
	between := func(after string) string {
		i := strings.Index(page, after)
		if i < 0 {
			return ""
		}
		rest := page[i+len(after):]
		return rest[:strings.Index(rest, "<")]
	}
	return between(`data-testid="signed-in-user">`), between(`data-testid="signed-in-role">`)
}

// A person signs in at the provider and gets the same kind of session a
// password gives, with the role of their strongest mapped group; the
// code exchange used PKCE S256; the sign-in is audited with method oidc.
func TestOIDCSignIn(t *testing.T) {
	t.Parallel()
	p := startIdP(t, false)
	s := newAuthServer(t, p.auth(testPublicURL))
	p.user("Alice", "engineering", "sre", "unmapped")

	page := s.do(http.MethodGet, "/login?next=%2Faudit", nil).Body.String()
	for _, want := range []string{`id="sign-in-sso" href="/auth/login?next=%2Faudit"`, "Sign in with Test IdP", `<form method="post" action="/login"`} {
		if !strings.Contains(page, want) {
			t.Errorf("sign-in page lacks %q", want)
		}
	}
	ok := s.ssoSignIn(t, p, "Alice", "/audit?action=login")
	if ok.Code != http.StatusSeeOther || ok.Header().Get("Location") != "/audit?action=login" {
		t.Fatalf("callback = %d %q\n%s", ok.Code, ok.Header().Get("Location"), ok.Body)
	}
	c := sessionFrom(t, ok)
	if !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || len(c.Value) < 43 {
		t.Fatalf("session cookie = %+v", c)
	}
	if user, role := sessionRole(t, s, c); user != "alice" || role != "operator" {
		t.Fatalf("signed in as %q with role %q, want alice the operator", user, role)
	}
	// The account sessions hang on, made at first sign-in, without a password.
	u, err := s.store.UserByName(t.Context(), "alice")
	if err != nil || u.Role != model.RoleOperator || u.PasswordHash != "" {
		t.Fatalf("alice's account = %+v, %v", u, err)
	}
	db, err := sql.Open("sqlite3", s.path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var by string
	if err := db.QueryRow("SELECT created_by FROM users WHERE name = 'alice'").Scan(&by); err != nil || by != "sso:oidc" {
		t.Fatalf("alice created by %q (%v), want sso:oidc: no person made this account", by, err)
	}
	logins := s.audit(t, "login")
	if len(logins) != 1 || logins[0].Actor != "alice" || !strings.Contains(string(logins[0].Details), `"method":"oidc"`) ||
		!strings.Contains(string(logins[0].Details), `"role":"operator"`) {
		t.Fatalf("login records = %+v", logins)
	}
	if n := len(s.audit(t, "user.create")); n != 1 {
		t.Fatalf("%d user.create records, want 1", n)
	}

	// PKCE: the authorization request carried an S256 challenge of the
	// verifier the token request sent.
	p.mu.Lock()
	authz, tok := p.authz[len(p.authz)-1], p.tokens[len(p.tokens)-1]
	p.mu.Unlock()
	sum := sha256.Sum256([]byte(tok.Get("code_verifier")))
	if authz.Get("code_challenge_method") != "S256" || tok.Get("code_verifier") == "" ||
		authz.Get("code_challenge") != base64.RawURLEncoding.EncodeToString(sum[:]) {
		t.Fatalf("no PKCE S256: authorize %v, token %v", authz, tok)
	}
	if authz.Get("nonce") == "" || len(authz.Get("state")) < 43 {
		t.Fatalf("authorize without nonce or a strong state: %v", authz)
	}

	// The groups decide at every sign-in: moved to dr-admins, alice is an
	// admin next time (audited as a role change).
	p.user("Alice", "dr-admins")
	again := s.ssoSignIn(t, p, "Alice", "/")
	if _, role := sessionRole(t, s, sessionFrom(t, again)); role != "admin" {
		t.Fatalf("after the group change alice is %q, want admin", role)
	}
	if n := len(s.audit(t, "user.role")); n != 1 {
		t.Fatalf("%d user.role records, want 1", n)
	}
	// The next= rules of the local form apply.
	for _, next := range []string{"//evil.example/", "https://evil.example/", "/\\evil.example"} {
		if rec := s.ssoSignIn(t, p, "Alice", next); rec.Header().Get("Location") != "/" {
			t.Errorf("next=%q redirected to %q", next, rec.Header().Get("Location"))
		}
	}
}

// Every ID token that is not exactly for this sign-in is refused,
// audited, and starts no session.
func TestOIDCRefusesBadTokens(t *testing.T) {
	t.Parallel()
	p := startIdP(t, false)
	s := newAuthServer(t, p.auth(testPublicURL))
	for _, tc := range []struct {
		name   string
		tamper func(*mockoidc.IDTokenClaims)
		want   string
	}{
		{"wrong issuer", func(c *mockoidc.IDTokenClaims) { c.Issuer = "https://evil.example/oidc" }, "issued by a different provider"},
		{"wrong audience", func(c *mockoidc.IDTokenClaims) { c.Audience = jwt.ClaimStrings{"some-other-client"} }, "expected audience"},
		{"expired", func(c *mockoidc.IDTokenClaims) {
			c.IssuedAt = jwt.NewNumericDate(time.Now().Add(-2 * time.Hour))
			c.ExpiresAt = jwt.NewNumericDate(time.Now().Add(-time.Hour))
		}, "token is expired"},
		{"bad nonce", func(c *mockoidc.IDTokenClaims) { c.Nonce = "nonce-of-another-sign-in" }, "nonce does not match"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p.user("mallory", "dr-admins").tamper = tc.tamper
			s.refusedAs(t, s.ssoSignIn(t, p, "mallory", "/"), tc.want)
		})
	}
	if _, err := s.store.UserByName(t.Context(), "mallory"); err == nil {
		t.Error("a refused token made an account")
	}
	if n := len(s.audit(t, "login")); n != 0 {
		t.Errorf("%d login records after refusals only", n)
	}
}

// The state is single-use and bound to the browser that started the
// sign-in; the code to the PKCE verifier of its own sign-in.
func TestOIDCStateAndPKCE(t *testing.T) {
	t.Parallel()
	p := startIdP(t, false)
	s := newAuthServer(t, p.auth(testPublicURL))
	p.user("bob", "sre")

	// Replayed: the same callback, cookie and all, a second time.
	cb, state := s.ssoBegin(t, p, "bob", "/")
	if rec := s.do(http.MethodGet, cb, nil, withCookie(state)); rec.Code != http.StatusSeeOther {
		t.Fatalf("first callback = %d\n%s", rec.Code, rec.Body)
	}
	s.refusedAs(t, s.do(http.MethodGet, cb, nil, withCookie(state)), "unknown or already used sign-in state")

	// No state cookie: the callback reached a browser that did not start
	// the sign-in (login CSRF), or the cookie was lost.
	cb, _ = s.ssoBegin(t, p, "bob", "/")
	s.refusedAs(t, s.do(http.MethodGet, cb, nil), "cookie missing or different")
	// A state cookie, but of another sign-in.
	cb2, _ := s.ssoBegin(t, p, "bob", "/")
	s.refusedAs(t, s.do(http.MethodGet, cb2, nil, withCookie(state)), "cookie missing or different")

	// The attacker's code in the victim's sign-in (code injection): the
	// state and cookie are the victim's, the code is from another
	// sign-in, whose PKCE challenge the victim's verifier does not meet.
	attackerCB, _ := s.ssoBegin(t, p, "bob", "/")
	victimCB, victimState := s.ssoBegin(t, p, "bob", "/")
	a, _ := url.Parse(attackerCB)
	v, _ := url.Parse(victimCB)
	q := v.Query()
	q.Set("code", a.Query().Get("code"))
	s.refusedAs(t, s.do(http.MethodGet, "/auth/callback?"+q.Encode(), nil, withCookie(victimState)), "did not accept the authorization code")

	// The provider says no (the person cancelled).
	_, st := s.ssoBegin(t, p, "bob", "/")
	s.refusedAs(t, s.do(http.MethodGet, "/auth/callback?error=access_denied&error_description=cancelled&state="+url.QueryEscape(st.Value),
		nil, withCookie(st)), "the provider said access_denied")
}

// A person none of whose groups is mapped is refused with a page that
// says so, and audited; so is one whose name is a local account's, or a
// disabled SSO account.
func TestOIDCRefusesPeople(t *testing.T) {
	t.Parallel()
	p := startIdP(t, false)
	s := newAuthServer(t, p.auth(testPublicURL))
	p.user("carol", "design", "marketing")
	s.refusedAs(t, s.ssoSignIn(t, p, "carol", "/"), "none of carol's groups [design marketing] is mapped to a role")
	if last := s.audit(t, "login.failed"); !strings.Contains(string(last[len(last)-1].Details), `"username":"carol"`) {
		t.Errorf("the refusal does not name carol: %s", last[len(last)-1].Details)
	}
	if _, err := s.store.UserByName(t.Context(), "carol"); err == nil {
		t.Error("a refused person got an account")
	}

	// The provider's "Test-Admin" is not the console's break-glass
	// test-admin (a local account with a password): fail closed.
	p.user("Test-Admin", "dr-admins")
	s.refusedAs(t, s.ssoSignIn(t, p, "Test-Admin", "/"), "test-admin is a local account")

	// An admin disabled dave's SSO account: his groups do not bring him back.
	p.user("dave", "sre")
	if rec := s.ssoSignIn(t, p, "dave", "/"); rec.Code != http.StatusSeeOther {
		t.Fatalf("dave's first sign-in = %d", rec.Code)
	}
	if err := s.store.SetDisabled(t.Context(), "dave", true); err != nil {
		t.Fatal(err)
	}
	s.refusedAs(t, s.ssoSignIn(t, p, "dave", "/"), "account disabled")

	// Each name is tied to the provider identity that first used it: dave
	// renamed to "dave2" at the provider would be a second account (and a
	// second approver) for one person; a new hire given the name "frank"
	// of someone who left does not inherit frank's account.
	p.user("dave2", "sre").Subject = "sub-dave"
	s.refusedAs(t, s.ssoSignIn(t, p, "dave2", "/"), "signed in before as dave, now as dave2")
	p.user("frank", "sre")
	if rec := s.ssoSignIn(t, p, "frank", "/"); rec.Code != http.StatusSeeOther {
		t.Fatalf("frank's first sign-in = %d", rec.Code)
	}
	p.user("frank", "sre").Subject = "sub-new-frank"
	s.refusedAs(t, s.ssoSignIn(t, p, "frank", "/"), "the name frank belongs to another identity at the provider")
	if links := s.audit(t, "sso.identity"); len(links) != 2 || links[0].Actor != "dave" || links[1].Subject != "oidc:"+p.m.Issuer()+"#sub-frank" {
		t.Fatalf("sso.identity records = %+v", links)
	}
}

// Break-glass: with the provider unreachable the page says so and the
// local form still signs a local account in.
func TestOIDCBreakGlass(t *testing.T) {
	t.Parallel()
	p := startIdP(t, false)
	auth := p.auth(testPublicURL)
	auth.OIDC.Issuer = "http://127.0.0.1:1/oidc" // nothing listens there
	s := newAuthServer(t, auth)
	down := s.do(http.MethodGet, "/auth/login?next=%2Faudit", nil)
	if down.Code != http.StatusBadGateway || !strings.Contains(down.Body.String(), "Single sign-on is unavailable") ||
		!strings.Contains(down.Body.String(), `<form method="post" action="/login"`) {
		t.Fatalf("provider down = %d\n%s", down.Code, down.Body)
	}
	ok := s.login("test-admin", testPassword, "/audit")
	if ok.Code != http.StatusSeeOther || ok.Header().Get("Location") != "/audit" {
		t.Fatalf("break-glass sign-in = %d %q", ok.Code, ok.Header().Get("Location"))
	}
	if user, role := sessionRole(t, s, sessionFrom(t, ok)); user != "test-admin" || role != "admin" {
		t.Fatalf("break-glass session = %q %q", user, role)
	}
	if l := s.audit(t, "login"); len(l) != 1 || !strings.Contains(string(l[0].Details), `"method":"password"`) {
		t.Fatalf("login records = %+v", l)
	}
	// A local sign-out stays local.
	out := s.do(http.MethodPost, "/logout", nil, withCookie(sessionFrom(t, ok)))
	if out.Code != http.StatusSeeOther || out.Header().Get("Location") != "/login" {
		t.Fatalf("local sign-out = %d %q", out.Code, out.Header().Get("Location"))
	}
}

// Sign-out ends the session here, then sends the browser to the
// provider's end_session_endpoint with id_token_hint and
// post_logout_redirect_uri; a provider without one gets the sign-in page.
func TestOIDCSignOut(t *testing.T) {
	t.Parallel()
	for _, endSession := range []bool{true, false} {
		p := startIdP(t, endSession)
		s := newAuthServer(t, p.auth(testPublicURL))
		p.user("erin", "engineering")
		in := s.ssoSignIn(t, p, "erin", "/")
		var hint *http.Cookie
		for _, c := range in.Result().Cookies() {
			if c.Name == "__Secure-drconsole_sso" {
				hint = c
			}
		}
		if hint == nil || !hint.HttpOnly || !hint.Secure || hint.Path != "/logout" || strings.Count(hint.Value, ".") != 2 {
			t.Fatalf("sign-out hint cookie = %+v", hint)
		}
		out := s.do(http.MethodPost, "/logout", nil, withCookie(sessionFrom(t, in)), withCookie(hint))
		if rec := s.do(http.MethodGet, "/audit", nil, withCookie(sessionFrom(t, in))); rec.Code != http.StatusSeeOther {
			t.Fatalf("session alive after sign-out: %d", rec.Code)
		}
		logout := s.audit(t, "logout")
		if len(logout) != 1 || !strings.Contains(string(logout[0].Details), `"provider_logout":`+map[bool]string{true: "true", false: "false"}[endSession]) {
			t.Fatalf("logout records = %+v", logout)
		}
		if !endSession {
			if out.Code != http.StatusSeeOther || out.Header().Get("Location") != "/login" {
				t.Fatalf("sign-out without end_session_endpoint = %d %q", out.Code, out.Header().Get("Location"))
			}
			continue
		}
		body := out.Body.String()
		i := strings.Index(body, `id="provider-logout" href="`)
		if out.Code != http.StatusOK || i < 0 {
			t.Fatalf("sign-out = %d\n%s", out.Code, body)
		}
		raw := body[i+len(`id="provider-logout" href="`):]
		to, err := url.Parse(strings.ReplaceAll(raw[:strings.Index(raw, `"`)], "&amp;", "&"))
		if err != nil || to.Scheme+"://"+to.Host+to.Path != p.logoutURL {
			t.Fatalf("sign-out goes to %v (%v), want %s", to, err, p.logoutURL)
		}
		q := to.Query()
		if q.Get("id_token_hint") != hint.Value || q.Get("post_logout_redirect_uri") != testPublicURL+"/login" || q.Get("client_id") != p.m.ClientID {
			t.Fatalf("end_session parameters = %v", q)
		}
		if !strings.Contains(body, `http-equiv="refresh"`) {
			t.Error("the signed-out page does not move on by itself")
		}
	}
}

// username_claim email: a person whose email the provider has not
// verified is refused with a page that says why, and audited; the real
// owner of the address signs in afterwards and gets the name.
func TestOIDCRefusesUnverifiedEmail(t *testing.T) {
	t.Parallel()
	p := startIdP(t, false)
	auth := p.auth(testPublicURL)
	auth.OIDC.UsernameClaim = "email"
	s := newAuthServer(t, auth)
	p.user("mallory", "sre").Email = "boss@example.com" // unverified below
	p.users["mallory"].EmailVerified = false
	s.refusedAs(t, s.ssoSignIn(t, p, "mallory", "/"), `the provider has not verified the email "boss@example.com"`)
	if _, err := s.store.UserByName(t.Context(), "boss@example.com"); err == nil {
		t.Fatal("an unverified email got an account")
	}
	p.user("boss", "sre")
	if rec := s.ssoSignIn(t, p, "boss", "/"); rec.Code != http.StatusSeeOther {
		t.Fatalf("the verified owner's sign-in = %d\n%s", rec.Code, rec.Body)
	}
}
