package web

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/handlers"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// UserFrom returns the signed-in user of a request context, or nil.
func UserFrom(ctx context.Context) *model.Principal { return identity.UserFrom(ctx) }

// ClientIP is the address of the client behind r (X-Forwarded-For is
// believed only from a trusted proxy).
func ClientIP(r *http.Request) string { return identity.ClientIP(r) }

// authenticator works out who a request comes from; it never refuses
// anything itself (RequireUser and RequireRole do), so public routes see
// the user too.
type authenticator struct {
	h       *handlers.Handlers
	cfg     config.Auth
	trusted []netip.Prefix
	log     *slog.Logger
}

func newAuthenticator(h *handlers.Handlers, log *slog.Logger) *authenticator {
	return &authenticator{h: h, cfg: h.Auth, trusted: h.Auth.TrustedPrefixes(), log: log}
}

func (a *authenticator) isTrusted(addr netip.Addr) bool {
	for _, p := range a.trusted {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// remote is the address of the TCP peer.
func remote(r *http.Request) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		return ap.Addr().Unmap(), true
	}
	addr, err := netip.ParseAddr(r.RemoteAddr)
	return addr.Unmap(), err == nil
}

// clientIP is the peer address, or, when the peer is a trusted proxy, the
// nearest address in X-Forwarded-For that is not a trusted proxy: the
// entries left of it could have been written by the client itself.
func (a *authenticator) clientIP(r *http.Request) string {
	peer, ok := remote(r)
	if !ok {
		return r.RemoteAddr
	}
	if !a.isTrusted(peer) {
		return peer.String()
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		addr, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		client = addr.Unmap()
		if !a.isTrusted(client) {
			break
		}
	}
	return client.String()
}

// identify puts the client address and the signed-in user, if any, into
// the request context, and the client (address, user agent) that every
// audit record made under this request names.
func (a *authenticator) identify(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ip := a.clientIP(r)
		ctx := audit.WithClient(identity.WithClientIP(r.Context(), ip), audit.Client{IP: ip, UserAgent: r.UserAgent()})
		r = r.WithContext(ctx)
		if isAPI(r) {
			// The API signs in with its tokens alone (web/api.go): a
			// session there is neither read nor renewed.
			next.ServeHTTP(w, r)
			return
		}
		var u *model.Principal
		if a.cfg.Mode == config.AuthProxy {
			if why := a.ambiguousProxyHeaders(r); why != "" {
				a.h.ProxyHeadersRefused(w, r, why)
				return
			}
			u = a.proxyUser(r)
		} else {
			u = a.sessionUser(w, r)
		}
		if u != nil {
			r = r.WithContext(identity.WithUser(ctx, u))
		}
		next.ServeHTTP(w, r)
	})
}

// sessionUser reads the session cookie (local mode).
func (a *authenticator) sessionUser(w http.ResponseWriter, r *http.Request) *model.Principal {
	c, err := r.Cookie(a.h.SessionCookieName())
	if err != nil || c.Value == "" {
		return nil
	}
	lookup := a.h.Store.SessionUser
	// A page polling in an unattended browser is not someone using the
	// console: htmx GETs and live streams (EventSource reconnects) do not
	// extend the idle timeout.
	if r.Method == http.MethodGet && (r.Header.Get("HX-Request") == "true" || r.Header.Get("Accept") == "text/event-stream") {
		lookup = a.h.Store.PeekSession
	}
	su, err := lookup(r.Context(), c.Value, a.cfg.IdleTimeout.D(), a.cfg.AbsoluteTimeout.D())
	switch {
	case err == nil:
		return &model.Principal{Name: su.Name, Role: su.Role}
	case errors.Is(err, storage.ErrNoSession), errors.Is(err, storage.ErrSessionExpired):
		http.SetCookie(w, a.h.SessionCookieFor("")) // stop sending a dead token
	default:
		a.log.Error("reading session", "err", err)
	}
	return nil
}

// ambiguousProxyHeaders says what is wrong when a trusted proxy's request
// names its user more than once: two user headers, a user header with a
// list ("alice, bob"), or two groups headers. Which one is the proxy's
// and which the client's is unknowable (a proxy that appends instead of
// replacing passes the client's on), so none counts: not "first wins".
// "" for a request that is fine, or not from a trusted proxy (whose
// headers count for nothing anyway).
func (a *authenticator) ambiguousProxyHeaders(r *http.Request) string {
	users, groups := r.Header.Values(a.cfg.UserHeader), r.Header.Values(a.cfg.GroupsHeader)
	if len(users) == 0 || (len(users) == 1 && !strings.Contains(users[0], ",") && len(groups) <= 1) {
		return ""
	}
	if peer, ok := remote(r); !ok || !a.isTrusted(peer) {
		return ""
	}
	switch {
	case len(users) > 1:
		return "the request names its user in " + strconv.Itoa(len(users)) + " " + a.cfg.UserHeader + " headers"
	case len(groups) > 1:
		return "the request carries " + strconv.Itoa(len(groups)) + " " + a.cfg.GroupsHeader + " headers"
	default:
		return "the " + a.cfg.UserHeader + " header names more than one user"
	}
}

// proxyUser reads the identity header of a trusted reverse proxy (proxy
// mode). The role comes from the users table when the name is there
// (where an admin can also disable it), else from the groups header
// through auth.group_roles; a known name without either gets no role.
func (a *authenticator) proxyUser(r *http.Request) *model.Principal {
	// One canonical form: "Carol" from the proxy is the disabled "carol".
	// The name is checked before lowering: Unicode lowers the Kelvin sign
	// to "k", so another directory identity would become kate.
	raw := strings.TrimSpace(r.Header.Get(a.cfg.UserHeader))
	name := model.CanonicalName(raw)
	if name == "" {
		return nil
	}
	if peer, ok := remote(r); !ok || !a.isTrusted(peer) {
		// Anyone can send the header; only the proxy's copy counts.
		a.log.Warn("ignoring identity header from an untrusted address", "header", a.cfg.UserHeader,
			"user", clip(name), "remote", r.RemoteAddr, "path", r.URL.Path)
		return nil
	}
	if !model.ValidName(raw) {
		a.log.Warn("ignoring identity header: not a valid user name", "header", a.cfg.UserHeader, "user", clip(name))
		return nil
	}
	u := &model.Principal{Name: name, Proxy: true}
	row, err := a.h.Store.UserByName(r.Context(), name)
	switch {
	case err == nil && row.Disabled:
		a.log.Warn("proxy user is disabled", "user", name)
		return nil
	case err == nil:
		u.Role = row.Role
	case errors.Is(err, storage.ErrUnknownUser):
		u.Role = identity.RoleForGroups(a.cfg.GroupRoles, strings.Split(r.Header.Get(a.cfg.GroupsHeader), ","))
	default:
		a.log.Error("reading proxy user", "user", name, "err", err)
		return nil
	}
	return u
}

func clip(s string) string {
	if len(s) > 128 {
		return s[:128]
	}
	return s
}

// RequireUser refuses requests without a signed-in user that has a role:
// a page GET is sent to the sign-in form (and back afterwards), anything
// else (a POST, an htmx fragment) gets 401; an account without a role gets
// the console's 403 page.
func RequireUser(h *handlers.Handlers) func(http.Handler) http.Handler {
	return gate(h, func(u *model.Principal) string {
		if !u.Role.Valid() {
			return "signed in as " + u.Name + ", but that account has no role in this console: ask an administrator"
		}
		return ""
	})
}

// RequireRole refuses users weaker than role with the console's 403 page
// (a fragment for htmx, which static/app.js shows), and requests without
// a user like RequireUser.
func RequireRole(h *handlers.Handlers, role model.Role) func(http.Handler) http.Handler {
	return gate(h, func(u *model.Principal) string {
		if !u.AtLeast(role) {
			return "forbidden: this needs the " + string(role) + " role; " + u.Name + " is " + orNone(u.Role)
		}
		return ""
	})
}

// gate lets a signed-in user through unless refuse says why not (403);
// a request without one is unauthenticated.
func gate(h *handlers.Handlers, refuse func(*model.Principal) string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u := UserFrom(r.Context())
			if u == nil {
				unauthenticated(w, r)
				return
			}
			if why := refuse(u); why != "" {
				h.Refuse(w, r, http.StatusForbidden, why)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

func orNone(role model.Role) string {
	if role == "" {
		return "no role"
	}
	if strings.ContainsRune("aeiou", rune(role[0])) {
		return "an " + string(role)
	}
	return "a " + string(role)
}

func unauthenticated(w http.ResponseWriter, r *http.Request) {
	htmx := r.Header.Get("HX-Request") == "true"
	next := r.URL.RequestURI()
	if htmx {
		// A fragment's own URL is no page to return to; the page it sits
		// on is.
		if cu, err := url.Parse(r.Header.Get("HX-Current-URL")); err == nil && cu.Path != "" {
			next = cu.RequestURI()
		}
	}
	login := "/login?next=" + url.QueryEscape(handlers.SafeNext(next))
	if (r.Method == http.MethodGet || r.Method == http.MethodHead) && !htmx {
		http.Redirect(w, r, login, http.StatusSeeOther)
		return
	}
	if htmx {
		w.Header().Set("HX-Redirect", login) // htmx navigates there
	}
	http.Error(w, "sign in first", http.StatusUnauthorized)
}
