package model

import "context"

// Principal is the authenticated identity of a request. It rides on the
// request's context, so web, handlers, views and the runbook read it
// without importing each other (identity sets it).
type Principal struct {
	Name string
	Role Role
	// Proxy: authenticated by the trusted reverse proxy on every request,
	// so there is no session here to sign out of.
	Proxy bool
}

// AtLeast reports whether u holds role or a stronger one. A nil user holds
// nothing.
func (u *Principal) AtLeast(role Role) bool {
	return u != nil && u.Role.AtLeast(role)
}

type principalKey struct{}

// WithPrincipal returns ctx carrying u.
func WithPrincipal(ctx context.Context, u *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, u)
}

// PrincipalFrom returns the signed-in user of a request context, or nil.
func PrincipalFrom(ctx context.Context) *Principal {
	u, _ := ctx.Value(principalKey{}).(*Principal)
	return u
}
