package form

import (
	"net/http"

	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/model"
)

// NewUser is POST /admin/users: an account to add, with its password
// typed twice (ignored when auth.mode is proxy).
type NewUser struct {
	Name     string
	Role     model.Role
	Password Password
}

// ReadNewUser reads the add-user form; the name is canonical.
func ReadNewUser(r *http.Request) NewUser {
	return NewUser{Name: model.CanonicalName(r.PostFormValue("name")), Role: model.Role(r.PostFormValue("role")), Password: ReadPassword(r)}
}

// Validate checks the name and role, and the password unless withPassword
// is false (proxy auth: nobody signs in here).
func (f NewUser) Validate(withPassword bool) error {
	if err := identity.CheckNewName(f.Name); err != nil {
		return Errors{"name": "Name " + err.Error() + "."}
	}
	if err := identity.CheckRole(f.Role); err != nil {
		return Errors{"role": "Role " + err.Error() + "."}
	}
	if withPassword {
		return f.Password.Validate()
	}
	return nil
}

// Role is POST /admin/users/{name}/role.
type Role struct{ Role model.Role }

// ReadRole reads the role form.
func ReadRole(r *http.Request) Role { return Role{Role: model.Role(r.PostFormValue("role"))} }

// Validate checks the role is one the console knows.
func (f Role) Validate() error {
	if err := identity.CheckRole(f.Role); err != nil {
		return Errors{"role": "Role " + err.Error() + "."}
	}
	return nil
}

// Password is a new password, typed twice.
type Password struct{ Password, Again string }

// ReadPassword reads a password form (password, password2).
func ReadPassword(r *http.Request) Password {
	return Password{Password: r.PostFormValue("password"), Again: r.PostFormValue("password2")}
}

// Validate: the two match and the password keeps the rules.
func (f Password) Validate() error {
	if f.Password != f.Again {
		return Errors{"password2": "The two passwords differ; nothing was changed."}
	}
	if err := identity.CheckPasswordRules(f.Password); err != nil {
		return Errors{"password": err.Error()}
	}
	return nil
}
