package model

import (
	"regexp"
	"strings"
)

// Role is what an account may do. Roles are ordered: each holds everything
// the weaker ones do.
type Role string

// Roles, weakest first. Viewers see everything and change nothing;
// operators request, approve and run failovers; admins also manage users.
const (
	RoleViewer   Role = "viewer"
	RoleOperator Role = "operator"
	RoleAdmin    Role = "admin"
)

// Roles lists the roles weakest first.
var Roles = []Role{RoleViewer, RoleOperator, RoleAdmin}

// Rank orders roles: 0 for an unknown role, then viewer < operator < admin.
func (r Role) Rank() int {
	for i, x := range Roles {
		if x == r {
			return i + 1
		}
	}
	return 0
}

// Valid reports whether r is one of Roles.
func (r Role) Valid() bool { return r.Rank() > 0 }

// AtLeast reports whether r holds min or a stronger role. An unknown role
// holds nothing, and nothing holds an unknown role.
func (r Role) AtLeast(min Role) bool { return r.Rank() >= min.Rank() && min.Rank() > 0 }

// User is an account that may use the console. Passwords are hashed by
// identity (bcrypt): nothing below it sees a clear-text password.
type User struct {
	Name string
	Role Role
	// PasswordHash is bcrypt; "" means no password sign-in (proxy mode).
	PasswordHash string
	CreatedMs    int64
	Disabled     bool
	// CreatedBy is who created the account ("cli:<os user>" from the
	// command line; "" when not on record). Approvals from an account the
	// requester created do not count.
	CreatedBy string
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$`)

// CanonicalName is the one form of a user name that sign-in, the proxy
// header, roles, approvals, sessions and the users table compare: trimmed
// and lower case. "Bob" and "bob" are one person; were they two, a proxy
// sending "Carol" could dodge the row that disables "carol".
func CanonicalName(name string) string { return strings.ToLower(strings.TrimSpace(name)) }

// ValidName reports whether name is acceptable as a user name: letters,
// digits and . _ @ - (e-mail addresses from a proxy fit), at most 64
// characters. ':' is left out so "cli:<os user>" actors cannot be faked.
func ValidName(name string) bool { return nameRE.MatchString(name) }
