package web_test

import (
	"encoding/json"
	"html/template"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/drconsole/drconsole/config"
)

// idp is an in-process OpenID Connect provider: oauth2-proxy's mockoidc
// (real discovery, JWKS, RS256-signed ID tokens, PKCE S256 checked at
// its token endpoint) with what a real provider has and it lacks: a
// login page (a person picks who they are), an end_session_endpoint in
// discovery (when endSession) and a logout page. Its users' ID token
// claims can be tampered with before signing: the same key signs a token
// from the wrong issuer, for the wrong audience, expired, or with
// another nonce.
type idp struct {
	m         *mockoidc.MockOIDC
	logoutURL string // the end_session_endpoint

	mu      sync.Mutex
	users   map[string]*idpUser // by the name typed on the login page
	authz   []url.Values        // what the authorization endpoint got
	tokens  []url.Values        // what the token endpoint got
	logouts []url.Values        // what the logout page got
}

// idpUser is a person at the provider; tamper changes their next ID
// token's standard claims.
type idpUser struct {
	mockoidc.MockUser
	tamper func(*mockoidc.IDTokenClaims)
}

func (u *idpUser) Claims(scope []string, base *mockoidc.IDTokenClaims) (jwt.Claims, error) {
	if u.tamper != nil {
		u.tamper(base)
	}
	return u.MockUser.Claims(scope, base)
}

var idpLoginPage = template.Must(template.New("login").Parse(`<!DOCTYPE html><title>Test IdP</title>
<h1>Test IdP: log in</h1><form method="get" action="">
{{range $k, $v := .}}{{range $v}}<input type="hidden" name="{{$k}}" value="{{.}}">{{end}}{{end}}
<label>User <input id="idp-user" name="login"></label><button id="idp-login" type="submit">Log in</button></form>`))

func startIdP(t *testing.T, endSession bool) *idp {
	t.Helper()
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &idp{m: m, users: map[string]*idpUser{}}
	logout := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/logout" {
			http.NotFound(w, r) // the browser's favicon request
			return
		}
		p.mu.Lock()
		p.logouts = append(p.logouts, r.URL.Query())
		p.mu.Unlock()
		w.Write([]byte(`<!DOCTYPE html><title>Test IdP</title><p id="idp-logged-out">Logged out of the test IdP.</p>`))
	}))
	t.Cleanup(logout.Close)
	p.logoutURL = logout.URL + "/logout"
	m.AddMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.ParseForm()
			switch r.URL.Path {
			case mockoidc.AuthorizationEndpoint:
				p.mu.Lock()
				p.authz = append(p.authz, r.Form)
				u := p.users[r.Form.Get("login")]
				p.mu.Unlock()
				if r.Form.Get("login") == "" {
					w.Header().Set("Content-Type", "text/html; charset=utf-8")
					idpLoginPage.Execute(w, r.Form)
					return
				}
				if u == nil {
					http.Error(w, "no such user at the test IdP", http.StatusForbidden)
					return
				}
				m.QueueUser(u)
			case mockoidc.TokenEndpoint:
				p.mu.Lock()
				p.tokens = append(p.tokens, r.PostForm)
				p.mu.Unlock()
			case mockoidc.DiscoveryEndpoint:
				if endSession {
					rec := httptest.NewRecorder()
					next.ServeHTTP(rec, r)
					var doc map[string]any
					if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
						http.Error(w, err.Error(), http.StatusInternalServerError)
						return
					}
					doc["end_session_endpoint"] = p.logoutURL
					w.Header().Set("Content-Type", "application/json")
					json.NewEncoder(w).Encode(doc)
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ln, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown() })
	return p
}

// user adds a person who logs in as login with these groups.
func (p *idp) user(login string, groups ...string) *idpUser {
	u := &idpUser{MockUser: mockoidc.MockUser{Subject: "sub-" + login, PreferredUsername: login, Email: login + "@example.com",
		EmailVerified: true, Groups: groups}}
	p.mu.Lock()
	p.users[login] = u
	p.mu.Unlock()
	return u
}

// auth is an oidc-mode auth config for a console at publicURL, its
// client registered at p.
func (p *idp) auth(publicURL string) config.Auth {
	return config.Auth{Mode: config.AuthOIDC, PublicURL: publicURL,
		GroupRoles: map[string]string{"dr-admins": "admin", "sre": "operator", "engineering": "viewer"},
		OIDC:       config.OIDC{Name: "Test IdP", Issuer: p.m.Issuer(), ClientID: p.m.ClientID, ClientSecret: p.m.ClientSecret}}
}
