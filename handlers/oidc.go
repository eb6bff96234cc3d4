package handlers

import (
	"errors"
	"net/http"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/views"
)

// OIDC sign-in (auth.mode oidc, identity.OIDC). The local form stays on
// the sign-in page for break-glass accounts: the provider is one more
// thing that can be down during a disaster.

const (
	// stateCookie binds a sign-in's state to the browser that started it:
	// a callback arriving in another browser (login CSRF) finds no match.
	// Only sent to the callback.
	stateCookie = "drconsole_oidc_state"
	// ssoCookie marks a session begun at the provider and holds its ID
	// token for id_token_hint ("-" when too big for a cookie). Only sent
	// to /logout.
	ssoCookie = "drconsole_sso"
	// maxHint keeps the cookie under browsers' 4096-byte limit.
	maxHint = 3500
)

// cookie is one of the console's cookies: HttpOnly (no script reads it),
// SameSite=Lax (sent when the provider redirects back, not on cross-site
// POSTs), Secure unless the sandbox serves plain http. An empty value
// deletes it; maxAge 0 ends it with the browser.
func (h *Handlers) cookie(name, path, value string, maxAge int) *http.Cookie {
	c := &http.Cookie{Name: name, Value: value, Path: path, HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: !h.Auth.InsecureCookie, MaxAge: maxAge}
	if value == "" {
		c.MaxAge = -1
	}
	return c
}

// ssoHintCookie is the sign-out hint of an OIDC session (idToken "": none,
// which deletes it).
func (h *Handlers) ssoHintCookie(idToken string) *http.Cookie {
	if len(idToken) > maxHint {
		idToken = "-"
	}
	return h.cookie(ssoCookie, "/logout", idToken, 0)
}

// OIDCStart is GET /auth/login: off to the provider. A GET link, not a
// form: the CSP's form-action 'self' would stop a form's redirect to the
// provider, and starting a sign-in changes nothing.
func (h *Handlers) OIDCStart(w http.ResponseWriter, r *http.Request) {
	next := SafeNext(r.URL.Query().Get("next"))
	if h.OIDC == nil {
		h.fail(w, r, notFound("single sign-on"))
		return
	}
	to, state, err := h.OIDC.Start(r.Context(), next)
	if err != nil {
		h.Log.Error("single sign-on: starting", "err", err)
		h.loginError(w, r, http.StatusBadGateway, next, "Single sign-on is unavailable: "+err.Error()+
			". A break-glass local account can still sign in below.")
		return
	}
	http.SetCookie(w, h.cookie(stateCookie, config.CallbackPath, state, int(identity.PendingTTL.Seconds())))
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// OIDCCallback is GET /auth/callback: the provider sends the browser back
// with a code; check it, then sign in like the local form does.
func (h *Handlers) OIDCCallback(w http.ResponseWriter, r *http.Request) {
	if h.OIDC == nil {
		h.fail(w, r, notFound("single sign-on"))
		return
	}
	q := r.URL.Query()
	state := q.Get("state")
	http.SetCookie(w, h.cookie(stateCookie, config.CallbackPath, "", 0)) // single use
	var l identity.Login
	var err error
	c, cerr := r.Cookie(stateCookie)
	switch {
	case q.Get("error") != "":
		err = &identity.Refused{Reason: "the provider said " + clip(q.Get("error"), 64) + ": " + clip(q.Get("error_description"), 200)}
		h.OIDC.Finish(r.Context(), state, "") // use the state up
	case cerr != nil || c.Value == "" || c.Value != state:
		// Not the browser that started this sign-in, or it took too long.
		err = &identity.Refused{Reason: "the sign-in state does not match this browser's (cookie missing or different)"}
	default:
		l, err = h.OIDC.Finish(r.Context(), state, q.Get("code"))
	}
	if err == nil {
		err = identity.Admit(r.Context(), h.Store, audit.New(h.Store), l)
	}
	var no *identity.Refused
	switch {
	case errors.As(err, &no):
		subject := "user:" + l.Name
		if l.Name == "" {
			subject = "user:?"
		}
		h.auditAs(r, "anonymous", "login.failed", subject, map[string]any{"method": "oidc", "username": l.Name,
			"groups": l.Groups, "reason": no.Reason})
		h.Log.Warn("single sign-on refused", "user", l.Name, "reason", no.Reason, "ip", identity.ClientIP(r))
		h.loginError(w, r, http.StatusForbidden, SafeNext(l.Next), "Single sign-on refused: "+no.Reason+".")
		return
	case err != nil:
		h.Log.Error("single sign-on", "err", err)
		h.loginError(w, r, http.StatusBadGateway, SafeNext(l.Next), "Single sign-on failed: "+err.Error()+".")
		return
	}
	if h.startSession(w, r, l.Name, map[string]any{"role": l.Role, "method": "oidc", "groups": l.Groups, "subject": l.Subject}, l.IDToken) {
		http.Redirect(w, r, SafeNext(l.Next), http.StatusSeeOther)
	}
}

// loginError shows the sign-in page (SSO button and break-glass form)
// with msg.
func (h *Handlers) loginError(w http.ResponseWriter, r *http.Request, status int, next, msg string) {
	p := h.loginPage(next)
	p.SSOError = msg
	h.render(w, r, status, views.Login(p))
}

// afterLogout is where a signed-out browser goes: the provider's
// end_session_endpoint for a session begun there (RP-initiated logout),
// else the sign-in page. It deletes the hint.
func (h *Handlers) afterLogout(w http.ResponseWriter, r *http.Request) string {
	c, err := r.Cookie(ssoCookie)
	if err != nil || c.Value == "" {
		return ""
	}
	http.SetCookie(w, h.ssoHintCookie(""))
	if h.OIDC == nil {
		return ""
	}
	hint := c.Value
	if hint == "-" {
		hint = ""
	}
	return h.OIDC.LogoutURL(r.Context(), hint)
}
