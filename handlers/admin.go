package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/handlers/form"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/views"
)

// The users page (admins only: web.Router's admin group). Every change
// goes through identity, as `drconsole users` does: checked, then applied
// with its audit record (under the signed-in admin's name) in one
// transaction. Passwords are
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
		h.fail(w, r, say("cannot read the users", err))
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

// userAuditor records a user change as the signed-in admin, in the
// change's transaction.
func (h *Handlers) userAuditor(r *http.Request) identity.Auditor {
	return func(_ context.Context, action audit.Action, subject string, details any, write func(model.AuditEntry) (model.AuditEntry, error)) error {
		actor, ctx := h.auditContext(r)
		err := identity.AuditAs(audit.New(h.Store), actor)(ctx, action, subject, details, write)
		if errors.Is(err, storage.ErrAuditWrite) {
			h.Log.Error("writing the audit log", "action", action, "actor", actor, "err", err)
			return fmt.Errorf("%w (%v)", errAudit, err)
		}
		return err
	}
}

// isSelf reports whether name is the signed-in user.
func isSelf(r *http.Request, name string) bool {
	u := identity.UserFrom(r.Context())
	return u != nil && u.Name == name
}

// newPassword checks the two typed passwords and hashes them; msg says
// what is wrong with them, err that hashing itself failed.
func newPassword(f form.Password) (hash, msg string, err error) {
	if err := f.Validate(); err != nil {
		return "", err.Error(), nil
	}
	hash, err = identity.HashPassword(f.Password)
	return hash, "", err
}

// changeFailed answers a change accounts refused or could not make.
func (h *Handlers) changeFailed(w http.ResponseWriter, r *http.Request, o usersOpts, name string, err error) {
	status, msg := statusFor(err), "Cannot change "+name+": "+err.Error()
	switch {
	case errors.Is(err, errAudit):
		msg = "Cannot write the audit log; nothing was changed."
	case errors.Is(err, storage.ErrUnknownUser):
		msg = "There is no user named " + name + "."
	case errors.Is(err, storage.ErrUserExists):
		msg = fmt.Sprintf("A user named %s already exists: change their role or password in the table.", name)
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
	f := form.ReadNewUser(r)
	name, role := f.Name, f.Role
	o := usersOpts{addName: name, addRole: string(role)}
	refuse := func(msg string) {
		o.addErr = msg
		h.renderUsers(w, r, http.StatusUnprocessableEntity, o)
	}
	if err := f.Validate(false); err != nil {
		refuse(err.Error())
		return
	}
	hash := ""
	if h.Auth.Mode != config.AuthProxy {
		var msg string
		var err error
		if hash, msg, err = newPassword(f.Password); msg != "" {
			refuse(msg)
			return
		} else if err != nil {
			h.changeFailed(w, r, o, name, err)
			return
		}
	}
	if err := identity.CreateUser(r.Context(), h.Store, h.userAuditor(r), name, role, hash, actor(r).Name); err != nil {
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
