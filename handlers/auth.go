package handlers

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/views"
)

// LoginLimiter slows password guessing (web.LoginLimiter). Locks are per
// "user:<name>@ip:<address>" only; "user:<name>" and "ip:<address>" alone
// are only ever delayed: a lock per name would let anyone lock a person
// out from elsewhere, and a lock per address would lock out everyone
// behind a proxy whose address they share (one not in
// auth.trusted_proxies, so its address is the client's).
type LoginLimiter interface {
	// Blocked reports whether any key is locked and for how long.
	Blocked(keys ...string) (retryAfter time.Duration, blocked bool)
	// Delay is how long an attempt on key waits first (0: none).
	Delay(key string) time.Duration
	// Failed counts a failure; locked is true when this one locked a key.
	Failed(keys ...string) (locked bool)
	// Succeeded forgets the failures of keys.
	Succeeded(keys ...string)
}

// LoginPage is GET /login.
func (h *Handlers) LoginPage(w http.ResponseWriter, r *http.Request) {
	next := SafeNext(r.URL.Query().Get("next"))
	if u := identity.UserFrom(r.Context()); u != nil && u.Role != "" {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	p := h.loginPage(next)
	p.ProxyUser = r.Header.Get(h.Auth.UserHeader)
	h.render(w, r, http.StatusOK, views.Login(p))
}

// loginPage is the sign-in page for the mode: the proxy's note, or the
// form, with the single sign-on button above it in oidc mode.
func (h *Handlers) loginPage(next string) views.LoginPage {
	p := views.LoginPage{Chrome: h.chrome("Sign in"), Next: next, Proxy: h.Auth.Mode == config.AuthProxy}
	if h.Auth.Mode == config.AuthOIDC {
		p.SSO = h.Auth.OIDC.Name
		p.SSOURL = "/auth/login?next=" + url.QueryEscape(next)
	}
	return p
}

// loginFailed is the one message for every refused sign-in: saying
// whether the name exists would tell an attacker which names to try.
const loginFailed = "Wrong user name or password."

// LoginPost is POST /login: check the password, start a new session.
func (h *Handlers) LoginPost(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	page := h.loginPage(SafeNext(r.PostFormValue("next")))
	if page.Proxy {
		h.render(w, r, http.StatusNotFound, views.Login(page))
		return
	}
	name := model.CanonicalName(r.PostFormValue("username"))
	page.Username = name
	pw := r.PostFormValue("password")
	ip := identity.ClientIP(r)
	nameKey := "user:" + clip(name, 128)
	ipKey, pairKey := "ip:"+ip, nameKey+"@ip:"+ip

	if h.limited(w, r, h.Limiter, page.Next, "Too many failed sign-ins", pairKey) {
		return
	}

	// A name under attack from many addresses, or an address trying many
	// names: every attempt waits, right password or not (the wait tells
	// nothing), none is refused.
	if d := max(h.Limiter.Delay(nameKey), h.Limiter.Delay(ipKey)); d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return
		}
	}

	u, err := h.Store.UserByName(ctx, name)
	if err != nil && !errors.Is(err, storage.ErrUnknownUser) {
		h.fail(w, r, say("cannot read the user database", err))
		return
	}
	// Always one bcrypt comparison, against a dummy hash for an unknown
	// user: the time taken does not tell which names exist.
	ok := identity.CheckPassword(u.PasswordHash, pw)
	var why string
	switch {
	case err != nil:
		why = "unknown user"
	case u.Disabled:
		why = "account disabled"
	case u.PasswordHash == "":
		why = "account has no password (proxy sign-in only)"
	case !ok:
		why = "wrong password"
	}
	if why != "" {
		locked := h.Limiter.Failed(pairKey)
		h.Limiter.Failed(nameKey, ipKey)
		h.signInFailed(r, identity.Failure{Name: name, Reason: why, Details: map[string]any{"method": "password",
			"username": clip(name, 128), "reason": why, "locked": locked, "name_slowed": h.Limiter.Delay(nameKey) > 0}})
		page.Error = loginFailed
		h.render(w, r, http.StatusUnauthorized, views.Login(page))
		return
	}

	if !h.startSession(w, r, u.Name, map[string]any{"role": u.Role, "method": "password"}, "") {
		return
	}
	// Only the name's failures are forgiven: forgiving the address too
	// would let someone with one account reset their guessing budget.
	h.Limiter.Succeeded(nameKey, pairKey)
	http.Redirect(w, r, page.Next, http.StatusSeeOther)
}

// startSession signs name in, whichever way they proved who they are:
// the "login" record (details), a new session and its cookie, and the
// sign-out hint of an OIDC sign-in (ssoHint, "" for none: oidc.go). false:
// it failed and the error page is written.
func (h *Handlers) startSession(w http.ResponseWriter, r *http.Request, name string, details map[string]any, ssoHint string) bool {
	ctx := r.Context()
	// Audit first: a sign-in the audit log cannot record does not happen.
	if _, err := h.auditAs(r, name, audit.Login, "user:"+name, details); err != nil {
		h.fail(w, r, say("cannot write the audit log; sign-in refused", err))
		return false
	}
	// A session that existed before sign-in (planted, or someone else's on
	// a shared browser) is never promoted: delete it, issue a new token.
	if c, err := r.Cookie(h.SessionCookieName()); err == nil {
		h.Store.DeleteSession(ctx, c.Value)
	}
	ip := identity.ClientIP(r)
	token, err := h.Store.CreateSession(ctx, name, ip, r.UserAgent())
	if err != nil {
		h.fail(w, r, say("cannot create a session", err))
		return false
	}
	if n, err := h.Store.PurgeSessions(ctx, h.Auth.IdleTimeout.D(), h.Auth.AbsoluteTimeout.D()); err != nil {
		h.Log.Warn("purging expired sessions", "err", err)
	} else if n > 0 {
		h.Log.Debug("purged expired sessions", "n", n)
	}
	h.Log.Info("signed in", "user", name, "role", details["role"], "method", details["method"], "ip", ip)
	http.SetCookie(w, h.SessionCookieFor(token))
	http.SetCookie(w, h.ssoHintCookie(ssoHint))
	return true
}

// Logout is POST /logout: end this session.
func (h *Handlers) Logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(h.SessionCookieName()); err == nil {
		if err := h.Store.DeleteSession(r.Context(), c.Value); err != nil {
			h.Log.Error("sign-out: deleting session", "err", err)
		}
	}
	http.SetCookie(w, h.SessionCookieFor(""))
	// Best effort, after the fact: a sign-out the audit log cannot record
	// still ends the session (refusing it would keep the session alive).
	to := h.afterLogout(w, r)
	if u := identity.UserFrom(r.Context()); u != nil {
		h.auditAs(r, u.Name, audit.Logout, "user:"+u.Name, map[string]any{"provider_logout": to != ""})
	}
	if to == "" {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	// A page that moves on, not a redirect: the CSP's form-action 'self'
	// would stop the sign-out form's redirect to the provider.
	h.render(w, r, http.StatusOK, views.SignedOut(to))
}

// Audit appends a record for the request's signed-in user, client address
// and user agent. details is marshalled to JSON (nil: {}). Failures are
// logged and returned: a caller about to change something must not go on.
func (h *Handlers) Audit(r *http.Request, action audit.Action, subject string, details any) error {
	_, err := h.record(r, action, subject, details)
	return err
}

// record is Audit with the proof of the write, for what an effect needs.
func (h *Handlers) record(r *http.Request, action audit.Action, subject string, details any) (audit.Written, error) {
	actor, _ := h.auditContext(r)
	return h.auditAs(r, actor, action, subject, details)
}

// auditContext is who r's records name as actor (the signed-in user, or
// anonymous) and the context that names r's client in them.
func (h *Handlers) auditContext(r *http.Request) (actor string, ctx context.Context) {
	actor = "anonymous"
	if u := identity.UserFrom(r.Context()); u != nil {
		actor = u.Name
	}
	return actor, audit.WithClient(r.Context(), audit.Client{IP: identity.ClientIP(r), UserAgent: r.UserAgent()})
}

func (h *Handlers) auditAs(r *http.Request, actor string, action audit.Action, subject string, details any) (audit.Written, error) {
	_, ctx := h.auditContext(r)
	w, err := audit.New(h.Store).Record(ctx, actor, action, subject, details)
	if err != nil {
		h.Log.Error("writing the audit log", "action", action, "actor", actor, "err", err)
	}
	return w, err
}

// clip cuts s to n bytes: a failed sign-in's name is attacker-chosen.
func clip(s string, n int) string {
	if len(s) > n {
		return strings.ToValidUTF8(s[:n], "")
	}
	return s
}
