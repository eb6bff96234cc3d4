package handlers

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

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
		h.Log.Error("writing the audit log", "action", "login.failed", "err", err)
	}
}
