package handlers

import (
	"fmt"
	"net/http"

	"github.com/drconsole/drconsole/handlers/form"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/model"
)

// Changes to an existing user, from their row of the users page: role,
// password, disable and enable (admin.go has the page and adding users).

// AdminUserRole is POST /admin/users/{name}/role.
func (h *Handlers) AdminUserRole(w http.ResponseWriter, r *http.Request) {
	name, ok := h.userParam(w, r)
	if !ok {
		return
	}
	f := form.ReadRole(r)
	to := f.Role
	o := usersOpts{row: name}
	if err := f.Validate(); err != nil {
		o.rowErr = err.Error()
		h.renderUsers(w, r, statusFor(err), o)
		return
	}
	if isSelf(r, name) && to != model.RoleAdmin {
		o.rowErr = "You cannot drop your own admin role: " + lockout
		h.renderUsers(w, r, http.StatusForbidden, o)
		return
	}
	from, err := identity.SetRole(r.Context(), h.Store, h.userAuditor(r), name, to)
	if err != nil {
		h.changeFailed(w, r, o, name, err)
		return
	}
	flash := fmt.Sprintf("%s is now %s (was %s), from their next click on.", name, to, from)
	if from == to {
		flash = fmt.Sprintf("%s is already %s; nothing changed.", name, to)
	}
	h.renderUsers(w, r, http.StatusOK, usersOpts{flash: flash})
}

// AdminUserPassword is POST /admin/users/{name}/password: a new password,
// typed twice; the user is signed out everywhere.
func (h *Handlers) AdminUserPassword(w http.ResponseWriter, r *http.Request) {
	name, ok := h.userParam(w, r)
	if !ok {
		return
	}
	o := usersOpts{row: name}
	hash, msg, err := newPassword(form.ReadPassword(r))
	if msg != "" {
		o.rowErr = msg
		h.renderUsers(w, r, http.StatusUnprocessableEntity, o)
		return
	}
	if err == nil {
		err = identity.SetPassword(r.Context(), h.Store, h.userAuditor(r), name, hash)
	}
	if err != nil {
		h.changeFailed(w, r, o, name, err)
		return
	}
	flash := "New password set for " + name + "; their sessions are signed out."
	if isSelf(r, name) {
		flash = "Your password is changed and your sessions are signed out, this one too: sign in again with the new password."
	}
	h.renderUsers(w, r, http.StatusOK, usersOpts{flash: flash})
}

// AdminUserDisable is POST /admin/users/{name}/disable: the account can no
// longer sign in and its sessions end.
func (h *Handlers) AdminUserDisable(w http.ResponseWriter, r *http.Request) {
	h.setDisabled(w, r, true)
}

// AdminUserEnable is POST /admin/users/{name}/enable.
func (h *Handlers) AdminUserEnable(w http.ResponseWriter, r *http.Request) {
	h.setDisabled(w, r, false)
}

func (h *Handlers) setDisabled(w http.ResponseWriter, r *http.Request, disable bool) {
	name, ok := h.userParam(w, r)
	if !ok {
		return
	}
	o := usersOpts{row: name}
	if disable && isSelf(r, name) {
		o.rowErr = "You cannot disable yourself: " + lockout
		h.renderUsers(w, r, http.StatusForbidden, o)
		return
	}
	if err := identity.SetDisabled(r.Context(), h.Store, h.userAuditor(r), name, disable); err != nil {
		h.changeFailed(w, r, o, name, err)
		return
	}
	flash := "Enabled " + name + ": they can sign in again."
	if disable {
		flash = "Disabled " + name + " and signed them out everywhere."
	}
	h.renderUsers(w, r, http.StatusOK, usersOpts{flash: flash})
}
