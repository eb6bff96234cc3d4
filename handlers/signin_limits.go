package handlers

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/views"
)

// limited answers 429 with the sign-in page (what: "Too many ...") when
// any of keys is blocked in lim.
func (h *Handlers) limited(w http.ResponseWriter, r *http.Request, lim LoginLimiter, next, what string, keys ...string) bool {
	wait, blocked := lim.Blocked(keys...)
	if !blocked {
		return false
	}
	secs := int((wait + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	h.Log.Warn("sign-in refused: "+strings.ToLower(what), "path", r.URL.Path, "ip", identity.ClientIP(r), "retry_after_s", secs)
	page := h.loginPage(next)
	page.Username = model.CanonicalName(r.PostFormValue("username"))
	msg := fmt.Sprintf("%s. Try again in %s.", what, views.Duration(time.Duration(secs)*time.Second))
	if r.Method == http.MethodPost {
		page.Error = msg
	} else {
		page.SSOError = msg
	}
	h.render(w, r, http.StatusTooManyRequests, views.Login(page))
	return true
}

// signInFailed audits a refused sign-in, counted per source and window
// (identity.SignInFailures: the log cannot be grown at will). An unwritten
// record is logged; the sign-in stays refused.
func (h *Handlers) signInFailed(r *http.Request, f identity.Failure) {
	_, ctx := h.auditContext(r)
	if _, err := h.Failures.Record(ctx, f); err != nil {
		h.Log.Error("writing the audit log", "action", audit.LoginFailed, "err", err)
	}
}

// ProxyHeadersRefused answers a trusted proxy's request whose identity
// headers are ambiguous (why: web.authenticator) with 400, audited as a
// failed sign-in (counted per source) and logged: the proxy passes its
// clients' headers on, which an administrator must fix.
func (h *Handlers) ProxyHeadersRefused(w http.ResponseWriter, r *http.Request, why string) {
	h.Log.Warn("refusing a request with ambiguous identity headers", "reason", why, "path", r.URL.Path, "ip", identity.ClientIP(r))
	h.signInFailed(r, identity.Failure{Reason: why, Details: map[string]any{"method": "proxy", "reason": why,
		"users": clipAll(r.Header.Values(h.Auth.UserHeader))}})
	http.Error(w, "Bad request: "+why+". Only one identity may reach the console; the proxy in front of it must replace, not "+
		"append to, the identity headers a client sends.", http.StatusBadRequest)
}

// clipAll clips each of vs, and keeps at most 4.
func clipAll(vs []string) []string {
	out := make([]string, 0, min(len(vs), 4))
	for _, v := range vs[:min(len(vs), 4)] {
		out = append(out, clip(v, 128))
	}
	return out
}
