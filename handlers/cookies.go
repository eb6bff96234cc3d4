package handlers

import (
	"net/http"
	"strings"
)

// The console's cookies: HttpOnly (no script reads them), SameSite=Lax
// (sent when the provider redirects back, not on cross-site POSTs),
// Secure unless the sandbox serves plain http (auth.insecure_cookie).
//
// Secure, they carry a prefix the browser enforces: __Host- for the
// session and the sign-in state (accepted only from this very origin over
// https, with Path=/ and no Domain, so a sibling subdomain or a plain-http
// page on the same host cannot toss one in), __Secure- for the sign-out
// hint, which keeps its /logout path so a 3.5 kB ID token does not ride
// on every request. Plain names are never read then: a tossed
// drconsole_session or drconsole_oidc_state counts for nothing.
const (
	// SessionCookie holds the session token (its plain name; see
	// SessionCookieName).
	SessionCookie = "drconsole_session"
	// stateCookie binds a sign-in to the browser that started it
	// (handlers/oidc.go): a callback arriving in another browser (login
	// CSRF) finds no match.
	stateCookie = "drconsole_oidc_state"
	// ssoCookie marks a session begun at the provider and holds its ID
	// token for id_token_hint ("-" when too big for a cookie). Only sent
	// to /logout.
	ssoCookie = "drconsole_sso"
	// maxHint keeps the cookie under browsers' 4096-byte limit.
	maxHint = 3500
)

// SessionCookieName is the session cookie's name: with the __Host- prefix
// unless insecure (auth.insecure_cookie, plain http).
func SessionCookieName(insecure bool) string { return cookieName(insecure, SessionCookie) }

func cookieName(insecure bool, base string) string {
	switch {
	case insecure:
		return base
	case base == ssoCookie:
		return "__Secure-" + base
	default:
		return "__Host-" + base
	}
}

// SessionCookieName is the name of this console's session cookie.
func (h *Handlers) SessionCookieName() string { return SessionCookieName(h.Auth.InsecureCookie) }

// cookie is the console's cookie base with value, on path (or / under the
// __Host- prefix). An empty value deletes it; maxAge 0 ends it with the
// browser.
func (h *Handlers) cookie(base, path, value string, maxAge int) *http.Cookie {
	name := cookieName(h.Auth.InsecureCookie, base)
	if strings.HasPrefix(name, "__Host-") {
		path = "/"
	}
	c := &http.Cookie{Name: name, Value: value, Path: path, HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: !h.Auth.InsecureCookie, MaxAge: maxAge}
	if value == "" {
		c.MaxAge = -1
	}
	return c
}

// cookies are the values of the console's cookie base that r carries
// (more than one: someone set another with a different path or domain).
func (h *Handlers) cookies(r *http.Request, base string) []string {
	name := cookieName(h.Auth.InsecureCookie, base)
	var vs []string
	for _, c := range r.Cookies() {
		if c.Name == name {
			vs = append(vs, c.Value)
		}
	}
	return vs
}

// SessionCookieFor is the cookie carrying token. No Max-Age: it ends with
// the browser, and the server enforces the idle and absolute timeouts
// anyway. An empty token gives a cookie that deletes it.
func (h *Handlers) SessionCookieFor(token string) *http.Cookie {
	return h.cookie(SessionCookie, "/", token, 0)
}
