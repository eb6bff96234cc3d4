package handlers

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/drconsole/drconsole/identity"
)

// Sign out everywhere: a user ends every session of their own (the
// account menu), an admin every session of a user (the users page). One
// audited change through identity.SignOutEverywhere; the live streams of
// those sessions end within a tick (web.Streams).

// signOutEverywhere ends every session of name. Like a single sign-out,
// it happens even when the audit log cannot record it: refusing would
// keep a session someone wants ended (perhaps a stolen one) alive. note
// then says so, and the log has the error.
func (h *Handlers) signOutEverywhere(r *http.Request, name string) (n int64, note string, err error) {
	n, err = identity.SignOutEverywhere(r.Context(), h.Store, h.userAuditor(r), name)
	if !errors.Is(err, errAudit) {
		return n, "", err
	}
	if n, err = h.Store.DeleteUserSessions(r.Context(), name); err != nil {
		return 0, "", err
	}
	h.Log.Error("signed out everywhere without an audit record", "user", name, "sessions", n)
	return n, " The audit log could not record it.", nil
}

// LogoutEverywhere is POST /logout/everywhere: end every session of the
// signed-in user, this one included.
func (h *Handlers) LogoutEverywhere(w http.ResponseWriter, r *http.Request) {
	u := identity.UserFrom(r.Context())
	if u == nil || u.Proxy {
		// Behind the proxy the console holds no session: the proxy's own
		// sign-out is the one that counts.
		h.fail(w, r, badRequest("signed in through the reverse proxy: sign out there"))
		return
	}
	n, _, err := h.signOutEverywhere(r, u.Name)
	if err != nil {
		h.fail(w, r, say("cannot sign out everywhere; nothing was changed: "+err.Error(), err))
		return
	}
	h.Log.Info("signed out everywhere", "user", u.Name, "sessions", n, "ip", identity.ClientIP(r))
	http.SetCookie(w, h.SessionCookieFor(""))
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// AdminUserSignOut is POST /admin/users/{name}/signout: end every session
// of a user (the account stays as it is; disable it to keep them out).
func (h *Handlers) AdminUserSignOut(w http.ResponseWriter, r *http.Request) {
	name, ok := h.userParam(w, r)
	if !ok {
		return
	}
	n, note, err := h.signOutEverywhere(r, name)
	if err != nil {
		h.changeFailed(w, r, usersOpts{row: name}, name, err)
		return
	}
	flash := fmt.Sprintf("Signed %s out everywhere (%d sessions ended); they can sign in again.", name, n)
	if isSelf(r, name) {
		flash = fmt.Sprintf("Signed you out everywhere (%d sessions ended), this one too: sign in again.", n)
	}
	h.renderUsers(w, r, http.StatusOK, usersOpts{flash: flash + note})
}
