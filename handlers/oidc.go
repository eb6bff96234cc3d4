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
// provider, and starting a sign-in changes nothing here but memory, which
// is bounded: per source, StartLimiter allows so many starts per window,
// and identity.OIDC keeps so many pending.
func (h *Handlers) OIDCStart(w http.ResponseWriter, r *http.Request) {
	next := SafeNext(r.URL.Query().Get("next"))
	if h.OIDC == nil {
		h.fail(w, r, notFound("single sign-on"))
		return
	}
	source := identity.SourceKey(identity.ClientIP(r))
	if h.limited(w, r, h.StartLimiter, next, "Too many sign-ins started from your address", "sso-start:"+source) {
		return
	}
	h.StartLimiter.Failed("sso-start:" + source) // counts starts, not failures
	to, _, binding, err := h.OIDC.Start(r.Context(), next, source)
	if err != nil {
		h.Log.Error("single sign-on: starting", "err", err)
		h.loginError(w, r, http.StatusBadGateway, next, "Single sign-on is unavailable: "+err.Error()+
			". A break-glass local account can still sign in below.")
		return
	}
	http.SetCookie(w, h.cookie(stateCookie, config.CallbackPath, binding, int(identity.PendingTTL.Seconds())))
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// OIDCCallback is GET /auth/callback: the provider sends the browser back
// with a code; check it, then sign in like the local form does. A source
// whose callbacks failed too often (h.Limiter, like the password form) is
// answered 429 at once, unless this callback belongs to a sign-in its
// browser started (pending state and binding cookie): behind a proxy
// whose address many people share, one person's garbage must not keep the
// others out. Refusals are audited counted per source (h.Failures).
func (h *Handlers) OIDCCallback(w http.ResponseWriter, r *http.Request) {
	if h.OIDC == nil {
		h.fail(w, r, notFound("single sign-on"))
		return
	}
	q := r.URL.Query()
	state := q.Get("state")
	http.SetCookie(w, h.cookie(stateCookie, config.CallbackPath, "", 0)) // single use
	bindings := h.cookies(r, stateCookie)
	binding := ""
	if len(bindings) == 1 {
		binding = bindings[0]
	}
	failKey := "sso-callback:" + identity.SourceKey(identity.ClientIP(r))
	if !h.OIDC.Pending(state, binding) && h.limited(w, r, h.Limiter, "/", "Too many failed sign-ins", failKey) {
		return
	}
	var l identity.Login
	var err error
	switch {
	case len(bindings) > 1:
		// The browser holds two: one was set by someone else (another
		// path, or a sibling domain over plain http). Trust neither.
		h.OIDC.Finish(r.Context(), state, "", "") // use the state up
		err = &identity.Refused{Reason: "the browser sent more than one sign-in state cookie (one may have been set by another site); sign in again"}
	case q.Get("error") != "":
		err = &identity.Refused{Reason: "the provider said " + clip(q.Get("error"), 64) + ": " + clip(q.Get("error_description"), 200)}
		h.OIDC.Finish(r.Context(), state, binding, "") // use the state up
	default:
		l, err = h.OIDC.Finish(r.Context(), state, binding, q.Get("code"))
	}
	if err == nil {
		err = identity.Admit(r.Context(), h.Store, audit.New(h.Store), l)
	}
	var no *identity.Refused
	switch {
	case errors.As(err, &no):
		h.Limiter.Failed(failKey)
		h.signInFailed(r, identity.Failure{Name: l.Name, Reason: no.Reason, Details: map[string]any{"method": "oidc",
			"username": l.Name, "groups": l.Groups, "reason": no.Reason}})
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
	c, err := r.Cookie(cookieName(h.Auth.InsecureCookie, ssoCookie))
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
