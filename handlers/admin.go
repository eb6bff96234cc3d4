package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/views"
)

// The users page (admins only: web.Router's admin group). Every change
// goes through accounts, as `drconsole users` does: checked, audited
// under the signed-in admin's name first, then applied. Passwords are
// hashed here and never logged or audited.

// lockout is why an admin may not disable or demote themself.
const lockout = "another admin must do it, so the console always keeps an admin who can sign in."

// errAudit: the audit record could not be written, so nothing changed.
var errAudit = errors.New("cannot write the audit log; nothing was changed")

// usersOpts is what a POST hands to the users page.
type usersOpts struct {
	flash, err               string
	row, rowErr              string // an error shown on one user's row
	addName, addRole, addErr string
}

// AdminUsers is GET /admin/users.
func (h *Handlers) AdminUsers(w http.ResponseWriter, r *http.Request) {
	h.renderUsers(w, r, http.StatusOK, usersOpts{})
}

func (h *Handlers) renderUsers(w http.ResponseWriter, r *http.Request, status int, o usersOpts) {
	ctx := r.Context()
	users, err := h.Store.Users(ctx)
	if err != nil {
		h.Log.Error("listing users", "err", err)
		http.Error(w, "cannot read the users", http.StatusInternalServerError)
		return
	}
	counts, err := h.Store.SessionCounts(ctx, h.Auth.IdleTimeout.D(), h.Auth.AbsoluteTimeout.D())
	if err != nil {
		h.Log.Warn("counting sessions", "err", err) // the page is still useful without them
	}
	p := views.AdminUsersPage{Chrome: h.chrome("Users"), Proxy: h.Auth.Mode == config.AuthProxy,
		Flash: o.flash, Error: o.err, AddName: o.addName, AddRole: o.addRole, AddError: o.addErr,
		MinPasswordLen: identity.MinPasswordLen}
	me := identity.UserFrom(ctx)
	shown := o.row == ""
	for _, u := range users {
		row := views.AdminUserRow{User: u, Sessions: counts[u.Name], Self: me != nil && me.Name == u.Name}
		if u.Name == o.row {
			row.Error, shown = o.rowErr, true
		}
		p.Users = append(p.Users, row)
	}
	if !shown {
		p.Error = o.rowErr
	}
	h.render(w, r, status, views.AdminUsers(p))
}

// userAuditor records a user change as the signed-in admin.
func (h *Handlers) userAuditor(r *http.Request) identity.Auditor {
	return func(_ context.Context, action, subject string, details any) error {
		if err := h.Audit(r, action, subject, details); err != nil {
			return fmt.Errorf("%w (%v)", errAudit, err)
		}
		return nil
	}
}

// isSelf reports whether name is the signed-in user.
func isSelf(r *http.Request, name string) bool {
	u := identity.UserFrom(r.Context())
	return u != nil && u.Name == name
}

// newPassword checks the two typed passwords and hashes them; msg says
// what is wrong with them, err that hashing itself failed.
func newPassword(r *http.Request) (hash, msg string, err error) {
	pw, again := r.PostFormValue("password"), r.PostFormValue("password2")
	if pw != again {
		return "", "The two passwords differ; nothing was changed.", nil
	}
	if err := identity.CheckPasswordRules(pw); err != nil {
		return "", err.Error(), nil
	}
	hash, err = identity.HashPassword(pw)
	return hash, "", err
}

// changeFailed answers a change accounts refused or could not make.
func (h *Handlers) changeFailed(w http.ResponseWriter, r *http.Request, o usersOpts, name string, err error) {
	status, msg := http.StatusInternalServerError, "Cannot change "+name+": "+err.Error()
	switch {
	case errors.Is(err, errAudit):
		msg = "Cannot write the audit log; nothing was changed."
	case errors.Is(err, storage.ErrUnknownUser):
		status, msg = http.StatusNotFound, "There is no user named "+name+"."
	case errors.Is(err, storage.ErrUserExists):
		status, msg = http.StatusConflict, fmt.Sprintf("A user named %s already exists: change their role or password in the table.", name)
	default:
		h.Log.Error("changing a user", "user", name, "err", err)
	}
	if o.row == "" && o.addName == "" {
		o.err = msg
	} else if o.row != "" {
		o.rowErr = msg
	} else {
		o.addErr = msg
	}
	h.renderUsers(w, r, status, o)
}

// AdminUserCreate is POST /admin/users: add an account (with a password,
// typed twice, unless auth.mode is proxy).
func (h *Handlers) AdminUserCreate(w http.ResponseWriter, r *http.Request) {
	name, role := model.CanonicalName(r.PostFormValue("name")), r.PostFormValue("role")
	o := usersOpts{addName: name, addRole: role}
	refuse := func(msg string) {
		o.addErr = msg
		h.renderUsers(w, r, http.StatusUnprocessableEntity, o)
	}
	if err := identity.CheckName(name); err != nil {
		refuse("Name " + err.Error() + ".")
		return
	}
	if err := identity.CheckRole(model.Role(role)); err != nil {
		refuse("Role " + err.Error() + ".")
		return
	}
	hash := ""
	if h.Auth.Mode != config.AuthProxy {
		var msg string
		var err error
		if hash, msg, err = newPassword(r); msg != "" {
			refuse(msg)
			return
		} else if err != nil {
			h.changeFailed(w, r, o, name, err)
			return
		}
	}
	if err := identity.CreateUser(r.Context(), h.Store, h.userAuditor(r), name, model.Role(role), hash, actor(r).Name); err != nil {
		h.changeFailed(w, r, o, name, err)
		return
	}
	h.renderUsers(w, r, http.StatusOK, usersOpts{flash: fmt.Sprintf("Added %s (%s).", name, role)})
}

// userParam is the {name} of a row's POST; an impossible name is a 404.
func (h *Handlers) userParam(w http.ResponseWriter, r *http.Request) (string, bool) {
	name := model.CanonicalName(chi.URLParam(r, "name"))
	if identity.CheckName(name) != nil {
		h.renderUsers(w, r, http.StatusNotFound, usersOpts{err: "There is no such user."})
		return "", false
	}
	return name, true
}

// AdminUserRole is POST /admin/users/{name}/role.
func (h *Handlers) AdminUserRole(w http.ResponseWriter, r *http.Request) {
	name, ok := h.userParam(w, r)
	if !ok {
		return
	}
	to := model.Role(r.PostFormValue("role"))
	o := usersOpts{row: name}
	if err := identity.CheckRole(to); err != nil {
		o.rowErr = "Role " + err.Error() + "."
		h.renderUsers(w, r, http.StatusUnprocessableEntity, o)
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
	hash, msg, err := newPassword(r)
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
