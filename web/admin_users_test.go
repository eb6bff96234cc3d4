package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/handlers"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// signedIn is a session cookie for an existing user, made through storage.
func (s *authServer) signedIn(t *testing.T, name string) *http.Cookie {
	t.Helper()
	tok, err := s.store.CreateSession(context.Background(), name, "127.0.0.1", "go-test")
	if err != nil {
		t.Fatal(err)
	}
	return &http.Cookie{Name: handlers.SessionCookieName(false), Value: tok}
}

// post sends a same-origin form as the holder of cookie.
func (s *authServer) post(path string, cookie *http.Cookie, form url.Values) *httptest.ResponseRecorder {
	return s.do(http.MethodPost, path, form, withCookie(cookie), header("Sec-Fetch-Site", "same-origin"))
}

func (s *authServer) user(t *testing.T, name string) model.User {
	t.Helper()
	u, err := s.store.UserByName(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// userAudit is every record about user:<name>, oldest first, as
// "actor action details"; the account state every change records
// ("account", checked in audit/accounts_test.go) is left out.
func (s *authServer) userAudit(t *testing.T, name string) []string {
	t.Helper()
	es, err := s.store.AuditEntries(context.Background(), storage.AuditFilter{Subject: "user:" + name, Oldest: true})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if e.Subject != "user:"+name || !strings.HasPrefix(e.Action, "user.") {
			continue // the subject filter is "contains"; logins are not changes
		}
		var d map[string]json.RawMessage
		if err := json.Unmarshal(e.Details, &d); err != nil || d["account"] == nil {
			t.Fatalf("record %d holds no account state: %s", e.ID, e.Details)
		}
		delete(d, "account")
		b, _ := json.Marshal(d)
		out = append(out, e.Actor+" "+e.Action+" "+string(b))
	}
	return out
}

// rowOf is the table row of one user on the users page.
func rowOf(t *testing.T, body, name string) string {
	t.Helper()
	_, row, ok := strings.Cut(body, `data-user="`+name+`"`)
	if !ok {
		t.Fatalf("no row for %s on the users page", name)
	}
	row, _, _ = strings.Cut(row, "</tr>")
	return row
}

func TestAdminUsersPageIsForAdminsOnly(t *testing.T) {
	s := newAuthServer(t, config.Auth{})
	for _, role := range []string{"viewer", "operator"} {
		c := s.signedIn(t, "test-"+role)
		if rec := s.do(http.MethodGet, "/admin/users", nil, withCookie(c)); rec.Code != http.StatusForbidden ||
			!strings.Contains(rec.Body.String(), "needs the admin role") {
			t.Errorf("GET /admin/users as %s = %d %.100q, want 403", role, rec.Code, rec.Body.String())
		}
		if rec := s.post("/admin/users", c, url.Values{"name": {"mallory"}, "role": {"admin"},
			"password": {"a long enough password"}, "password2": {"a long enough password"}}); rec.Code != http.StatusForbidden {
			t.Errorf("POST /admin/users as %s = %d, want 403", role, rec.Code)
		}
		if body := s.do(http.MethodGet, "/audit", nil, withCookie(c)).Body.String(); strings.Contains(body, `href="/admin/users"`) {
			t.Errorf("%s sees the Users link", role)
		}
	}
	if _, err := s.store.UserByName(context.Background(), "mallory"); err == nil {
		t.Fatal("a non-admin added a user")
	}

	admin := s.signedIn(t, "test-admin")
	if body := s.do(http.MethodGet, "/audit", nil, withCookie(admin)).Body.String(); !strings.Contains(body, `href="/admin/users" data-testid="nav-users">Users<`) {
		t.Error("admin does not see the Users link")
	}
	rec := s.do(http.MethodGet, "/admin/users", nil, withCookie(admin))
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /admin/users as admin = %d %.200s", rec.Code, body)
	}
	for _, role := range model.Roles {
		row := rowOf(t, body, "test-"+string(role))
		if !strings.Contains(row, "<td>"+string(role)+"</td>") || !strings.Contains(row, "active") || !strings.Contains(row, "<td>set</td>") {
			t.Errorf("row of test-%s: %s", role, row)
		}
	}
	// Active sessions: the one this test made for each account.
	if row := rowOf(t, body, "test-admin"); !strings.Contains(row, `<td class="num">1</td>`) {
		t.Errorf("test-admin's row does not count one live session: %s", row)
	}
	for _, want := range []string{`autocomplete="new-password"`, `name="password2"`, `minlength="12"`, `action="/admin/users"`,
		`action="/admin/users/test-operator/disable"`, `action="/admin/users/test-viewer/password"`} {
		if !strings.Contains(body, want) {
			t.Errorf("users page lacks %q", want)
		}
	}
}

func TestAdminAddsUserWhoCanSignIn(t *testing.T) {
	s := newAuthServer(t, config.Auth{})
	admin := s.signedIn(t, "test-admin")
	const pw = "carol's long secret phrase"
	add := func(name, role, pw, again string) *httptest.ResponseRecorder {
		return s.post("/admin/users", admin, url.Values{"name": {name}, "role": {role}, "password": {pw}, "password2": {again}})
	}
	rec := add(" carol ", "operator", pw, pw)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "Added carol (operator).") {
		t.Fatalf("add carol = %d %.300s", rec.Code, rec.Body.String())
	}
	if u := s.user(t, "carol"); u.Role != model.RoleOperator || u.Disabled || !identity.CheckPassword(u.PasswordHash, pw) {
		t.Fatalf("carol stored as %+v", u)
	}
	// Carol signs in with the password the admin typed.
	login := s.login("carol", pw, "/audit")
	if login.Code != http.StatusSeeOther {
		t.Fatalf("carol's sign-in = %d %.200s", login.Code, login.Body.String())
	}
	page := s.do(http.MethodGet, "/audit", nil, withCookie(sessionFrom(t, login))).Body.String()
	if !strings.Contains(page, `data-testid="signed-in-user">carol<`) || !strings.Contains(page, `data-testid="signed-in-role">operator<`) {
		t.Fatal("carol is not signed in as an operator")
	}

	// Refused: each says why next to the form, keeps what was typed but
	// the password, and changes and audits nothing.
	for _, tc := range []struct {
		name, role, pw, again string
		code                  int
		want                  string
	}{
		{"dave", "viewer", pw, pw + "x", 422, "The two passwords differ"},
		{"dave", "viewer", "short", "short", 422, "password too short: at least 12 characters"},
		{"cli:root", "admin", pw, pw, 422, "is not a valid user name"},
		{"dave", "root", pw, pw, 422, `Role &#34;root&#34;: want viewer, operator or admin`},
		{"carol", "viewer", pw, pw, 409, "A user named carol already exists"},
		{"Carol", "admin", pw, pw, 409, "A user named carol already exists"},
	} {
		rec := add(tc.name, tc.role, tc.pw, tc.again)
		body := rec.Body.String()
		if rec.Code != tc.code || !strings.Contains(body, tc.want) || !strings.Contains(body, `data-testid="add-error"`) {
			t.Errorf("add %s/%s = %d, want %d and %q inline: %.300s", tc.name, tc.role, rec.Code, tc.code, tc.want, body)
		}
		if strings.Contains(body, `value="`+tc.pw) {
			t.Errorf("add %s: the page echoes the password", tc.name)
		}
		if tc.code == 422 && !strings.Contains(body, `id="add-name" name="name" value="`) {
			t.Errorf("add %s: the name typed is lost", tc.name)
		}
	}
	if _, err := s.store.UserByName(context.Background(), "dave"); err == nil {
		t.Fatal("a refused add created dave")
	}
	if u := s.user(t, "carol"); u.Role != model.RoleOperator {
		t.Fatalf("re-adding carol changed her: %+v", u)
	}

	got := s.userAudit(t, "carol")
	if len(got) != 1 || got[0] != `test-admin user.create {"password":true,"role":"operator"}` {
		t.Fatalf("audit of carol = %q, want one user.create by test-admin", got)
	}
	es := s.audit(t, "user.create")
	if len(es) != 1 || es[0].ClientIP == "" || es[0].UserAgent != "login-test" {
		t.Fatalf("user.create records = %+v, want one with client address and user agent", es)
	}
	all, _ := s.store.AuditEntries(context.Background(), storage.AuditFilter{})
	for _, e := range all {
		if strings.Contains(string(e.Details), "secret phrase") {
			t.Errorf("audit record %d holds the password: %s", e.ID, e.Details)
		}
	}
	if strings.Contains(s.logs.String(), "secret phrase") {
		t.Error("the log holds the password")
	}
}

func TestAdminChangesRolePasswordAndDisabled(t *testing.T) {
	s := newAuthServer(t, config.Auth{})
	ctx := context.Background()
	admin := s.signedIn(t, "test-admin")
	const pw1, pw2 = "dave's first password", "dave's second password"
	hash, _ := identity.HashPassword(pw1)
	if err := s.store.CreateUser(ctx, model.User{Name: "dave", Role: model.RoleViewer, PasswordHash: hash}); err != nil {
		t.Fatal(err)
	}
	dave := sessionFrom(t, s.login("dave", pw1, "/"))
	signedInAs := func(c *http.Cookie) string {
		body := s.do(http.MethodGet, "/audit", nil, withCookie(c)).Body.String()
		if !strings.Contains(body, `data-testid="signed-in-user">dave<`) {
			return ""
		}
		_, role, _ := strings.Cut(body, `data-testid="signed-in-role">`)
		role, _, _ = strings.Cut(role, "<")
		return role
	}

	// Role: from the next click on, the same session.
	if rec := s.post("/admin/users/dave/role", admin, url.Values{"role": {"operator"}}); rec.Code != http.StatusOK ||
		!strings.Contains(rec.Body.String(), "dave is now operator (was viewer)") {
		t.Fatalf("role = %d %.300s", rec.Code, rec.Body.String())
	}
	if got := signedInAs(dave); got != "operator" {
		t.Fatalf("dave's session after the role change: %q, want operator", got)
	}
	if rec := s.post("/admin/users/dave/role", admin, url.Values{"role": {"operator"}}); !strings.Contains(rec.Body.String(), "dave is already operator; nothing changed") {
		t.Errorf("same role again: %.300s", rec.Body.String())
	}
	if rec := s.post("/admin/users/dave/role", admin, url.Values{"role": {"root"}}); rec.Code != 422 ||
		!strings.Contains(rowOf(t, rec.Body.String(), "dave"), `data-testid="row-error-dave"`) {
		t.Errorf("role root = %d, want 422 on dave's row", rec.Code)
	}

	// Password: typed twice; dave is signed out; only the new one works.
	if rec := s.post("/admin/users/dave/password", admin, url.Values{"password": {pw2}, "password2": {pw1}}); rec.Code != 422 ||
		!strings.Contains(rowOf(t, rec.Body.String(), "dave"), "The two passwords differ") {
		t.Fatalf("differing passwords = %d %.300s", rec.Code, rec.Body.String())
	}
	if rec := s.post("/admin/users/dave/password", admin, url.Values{"password": {"short"}, "password2": {"short"}}); rec.Code != 422 {
		t.Fatalf("short password = %d", rec.Code)
	}
	if got := signedInAs(dave); got != "operator" {
		t.Fatal("a refused password reset signed dave out")
	}
	if rec := s.post("/admin/users/dave/password", admin, url.Values{"password": {pw2}, "password2": {pw2}}); rec.Code != http.StatusOK ||
		!strings.Contains(rec.Body.String(), "New password set for dave; their sessions are signed out.") {
		t.Fatalf("password = %d %.300s", rec.Code, rec.Body.String())
	}
	if got := signedInAs(dave); got != "" {
		t.Fatal("dave's session survived the password reset")
	}
	if rec := s.login("dave", pw1, "/"); rec.Code != http.StatusUnauthorized {
		t.Fatalf("old password = %d, want 401", rec.Code)
	}
	dave = sessionFrom(t, s.login("dave", pw2, "/"))

	// Disable ends the session and refuses sign-in; enable undoes it.
	rec := s.post("/admin/users/dave/disable", admin, nil)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "Disabled dave and signed them out everywhere.") ||
		!strings.Contains(rowOf(t, rec.Body.String(), "dave"), `<span class="danger">disabled</span>`) {
		t.Fatalf("disable = %d %.300s", rec.Code, rec.Body.String())
	}
	if got := signedInAs(dave); got != "" {
		t.Fatal("dave's session survived being disabled")
	}
	if rec := s.login("dave", pw2, "/"); rec.Code != http.StatusUnauthorized {
		t.Fatalf("disabled sign-in = %d, want 401", rec.Code)
	}
	if rec := s.post("/admin/users/dave/enable", admin, nil); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "Enabled dave") {
		t.Fatalf("enable = %d %.300s", rec.Code, rec.Body.String())
	}
	if rec := s.login("dave", pw2, "/"); rec.Code != http.StatusSeeOther {
		t.Fatalf("enabled sign-in = %d, want 303", rec.Code)
	}

	for _, path := range []string{"/admin/users/nobody/disable", "/admin/users/nobody/enable", "/admin/users/nobody/role"} {
		if rec := s.post(path, admin, url.Values{"role": {"viewer"}}); rec.Code != http.StatusNotFound ||
			!strings.Contains(rec.Body.String(), "There is no user named nobody.") {
			t.Errorf("POST %s = %d %.200s, want 404", path, rec.Code, rec.Body.String())
		}
	}
	if _, err := s.store.UserByName(ctx, "nobody"); err == nil {
		t.Fatal("a change to an unknown user created it")
	}

	want := []string{
		`test-admin user.role {"from":"viewer","to":"operator"}`,
		`test-admin user.password {"sessions_ended":true}`,
		`test-admin user.disable {"sessions_ended":true}`,
		`test-admin user.enable {}`,
	}
	if got := s.userAudit(t, "dave"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("audit of dave:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := s.userAudit(t, "nobody"); len(got) != 0 {
		t.Fatalf("refused changes audited: %q", got)
	}
	if strings.Contains(s.logs.String(), "second password") {
		t.Error("the log holds a password")
	}
}

func TestAdminCannotLockThemselfOut(t *testing.T) {
	s := newAuthServer(t, config.Auth{})
	admin := s.signedIn(t, "test-admin")
	page := s.do(http.MethodGet, "/admin/users", nil, withCookie(admin)).Body.String()
	if row := rowOf(t, page, "test-admin"); !strings.Contains(row, "You cannot disable yourself or drop your own admin role") ||
		strings.Contains(row, "/disable") || strings.Contains(row, "/role") || !strings.Contains(row, "/password") {
		t.Errorf("own row offers the lock-out or hides the reset: %s", row)
	}

	for _, tc := range []struct {
		path, role, want string
	}{
		{"/admin/users/test-admin/disable", "", "You cannot disable yourself: another admin must do it"},
		{"/admin/users/test-admin/role", "operator", "You cannot drop your own admin role: another admin must do it"},
		{"/admin/users/test-admin/role", "viewer", "You cannot drop your own admin role"},
	} {
		rec := s.post(tc.path, admin, url.Values{"role": {tc.role}})
		if rec.Code != http.StatusForbidden || !strings.Contains(rowOf(t, rec.Body.String(), "test-admin"), tc.want) {
			t.Errorf("POST %s %s = %d, want 403 saying %q: %.300s", tc.path, tc.role, rec.Code, tc.want, rec.Body.String())
		}
	}
	if u := s.user(t, "test-admin"); u.Role != model.RoleAdmin || u.Disabled {
		t.Fatalf("test-admin after refused self-changes: %+v", u)
	}
	if rec := s.do(http.MethodGet, "/admin/users", nil, withCookie(admin)); rec.Code != http.StatusOK {
		t.Fatalf("test-admin lost the page: %d", rec.Code)
	}
	if got := s.userAudit(t, "test-admin"); len(got) != 0 {
		t.Fatalf("refused self-changes audited: %q", got)
	}

	// Another admin may do it: the rule is about oneself.
	hash, _ := identity.HashPassword("erin's long password")
	if err := s.store.CreateUser(context.Background(), model.User{Name: "erin", Role: model.RoleAdmin, PasswordHash: hash}); err != nil {
		t.Fatal(err)
	}
	erin := s.signedIn(t, "erin")
	if rec := s.post("/admin/users/test-admin/role", erin, url.Values{"role": {"operator"}}); rec.Code != http.StatusOK {
		t.Fatalf("erin demotes test-admin = %d %.300s", rec.Code, rec.Body.String())
	}
	if rec := s.do(http.MethodGet, "/admin/users", nil, withCookie(admin)); rec.Code != http.StatusForbidden {
		t.Fatalf("demoted test-admin GET /admin/users = %d, want 403", rec.Code)
	}
	if got := s.userAudit(t, "test-admin"); len(got) != 1 || got[0] != `erin user.role {"from":"admin","to":"operator"}` {
		t.Fatalf("audit = %q, want erin's role change", got)
	}
}

// Behind a single-sign-on proxy nobody signs in with a password: the page
// adds accounts without one and offers no password fields.
func TestAdminUsersProxyMode(t *testing.T) {
	s := newAuthServer(t, config.Auth{Mode: config.AuthProxy, TrustedProxies: []string{"10.0.0.0/8"}})
	as := []reqOpt{from("10.1.2.3:5555"), header("X-Forwarded-User", "test-admin"), header("Sec-Fetch-Site", "same-origin")}
	page := s.do(http.MethodGet, "/admin/users", nil, as...).Body.String()
	if !strings.Contains(page, "auth.mode is proxy") || strings.Contains(page, `type="password"`) {
		t.Fatalf("proxy-mode users page offers passwords: %.500s", page)
	}
	rec := s.do(http.MethodPost, "/admin/users", url.Values{"name": {"frank@example.com"}, "role": {"operator"}}, as...)
	if rec.Code != http.StatusOK {
		t.Fatalf("add in proxy mode = %d %.300s", rec.Code, rec.Body.String())
	}
	if u := s.user(t, "frank@example.com"); u.PasswordHash != "" || u.Role != model.RoleOperator {
		t.Fatalf("frank stored as %+v, want an operator without a password", u)
	}
	if got := s.userAudit(t, "frank@example.com"); len(got) != 1 || got[0] != `test-admin user.create {"password":false,"role":"operator"}` {
		t.Fatalf("audit = %q", got)
	}
}
