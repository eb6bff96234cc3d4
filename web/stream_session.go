package web

import (
	"context"
	"net/http"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/model"
)

// stillSignedIn is Streams.Still: r (the request that opened a live
// stream) is still signed in as the user and role it was opened with. In
// local and OIDC mode its session is read again without renewing it (a
// stream is not someone using the console): signed out here or
// everywhere, expired, or its account disabled, the session is gone. In
// proxy mode the proxy's header is read again against the users table (a
// disabled account, a changed role). Any doubt (an unreadable database)
// ends the stream: the browser reconnects through the sign-in check.
func (a *authenticator) stillSignedIn(ctx context.Context, r *http.Request) bool {
	was := identity.UserFrom(r.Context())
	if was == nil {
		return false
	}
	var now *model.Principal
	if a.cfg.Mode == config.AuthProxy {
		now = a.proxyUser(r.WithContext(ctx))
	} else if c, err := r.Cookie(a.h.SessionCookieName()); err == nil {
		if su, err := a.h.Store.PeekSession(ctx, c.Value, a.cfg.IdleTimeout.D(), a.cfg.AbsoluteTimeout.D()); err == nil {
			now = &model.Principal{Name: su.Name, Role: su.Role}
		}
	}
	return now != nil && now.Name == was.Name && now.Role == was.Role
}
