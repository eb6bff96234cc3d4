// Package identity says who is asking: the signed-in user and their role,
// the client's address, and password hashing. It is a leaf (stdlib and
// bcrypt only) so that web, handlers, views and failover can all read the
// user from a request context without importing each other.
package identity

import (
	"context"
	"net"
	"net/http"
	"regexp"
	"strings"
)

// Roles, weakest first. Viewers see everything and change nothing;
// operators request, approve and run failovers; admins also manage users.
const (
	RoleViewer   = "viewer"
	RoleOperator = "operator"
	RoleAdmin    = "admin"
)

// Roles lists the roles weakest first.
var Roles = []string{RoleViewer, RoleOperator, RoleAdmin}

// Rank orders roles: 0 for an unknown role, then viewer < operator < admin.
func Rank(role string) int {
	for i, r := range Roles {
		if r == role {
			return i + 1
		}
	}
	return 0
}

// ValidRole reports whether role is one of Roles.
func ValidRole(role string) bool { return Rank(role) > 0 }

// User is the authenticated identity of a request.
type User struct {
	Name, Role string
	// Proxy: authenticated by the trusted reverse proxy on every request,
	// so there is no session here to sign out of.
	Proxy bool
}

// AtLeast reports whether u holds role or a stronger one. A nil user holds
// nothing.
func (u *User) AtLeast(role string) bool {
	return u != nil && Rank(u.Role) >= Rank(role) && Rank(role) > 0
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

type ctxKey int

const (
	userKey ctxKey = iota
	clientIPKey
)

// WithUser returns ctx carrying u.
func WithUser(ctx context.Context, u *User) context.Context {
	return context.WithValue(ctx, userKey, u)
}

// UserFrom returns the signed-in user of a request context, or nil.
func UserFrom(ctx context.Context) *User {
	u, _ := ctx.Value(userKey).(*User)
	return u
}

// WithClientIP returns ctx carrying the client address the web middleware
// worked out (from X-Forwarded-For only behind a trusted proxy).
func WithClientIP(ctx context.Context, ip string) context.Context {
	return context.WithValue(ctx, clientIPKey, ip)
}

// ClientIP is the address of the client behind r: what the web
// middleware worked out, else the connection's remote address.
func ClientIP(r *http.Request) string {
	if ip, ok := r.Context().Value(clientIPKey).(string); ok && ip != "" {
		return ip
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
