// Package identity is who the console's users are and who is asking: the
// signed-in user of a request and the client's address, password hashing,
// and the one way accounts are created and changed (accounts.go), shared
// by `drconsole users` and the admin page; single sign-on (oidc.go) and
// the counted audit records of failed sign-ins (failures.go). Roles and the account record
// are model's; the users table is storage's. The signed-in user is model's
// Principal, so web, handlers, views and failover read it from a request
// context without importing each other.
package identity

import (
	"context"
	"net"
	"net/http"
	"net/netip"

	"github.com/drconsole/drconsole/model"
)

type ctxKey int

const clientIPKey ctxKey = iota

// WithUser returns ctx carrying u.
func WithUser(ctx context.Context, u *model.Principal) context.Context {
	return model.WithPrincipal(ctx, u)
}

// UserFrom returns the signed-in user of a request context, or nil.
func UserFrom(ctx context.Context) *model.Principal { return model.PrincipalFrom(ctx) }

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

// SourceKey is the source an address counts as for per-source limits: an
// IPv4 address itself, an IPv6 address's /64 (one host is usually given a
// whole /64, so its addresses are one source), anything else as given.
func SourceKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return clip(ip)
	}
	if a = a.Unmap(); a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}
