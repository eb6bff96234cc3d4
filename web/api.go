package web

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/handlers"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/model"
)

// The JSON API under /api/v1 (docs/api.md). It takes an API token as
// "Authorization: Bearer drc_…" and nothing else: no session cookie (so
// a browser's cross-site request carries no credential here, and the
// API needs no CSRF check), no proxy header. The token acts as its owner
// with the role its scope caps (identity/tokens.go); a token that is
// unknown, expired, revoked or whose account is disabled gets 401, a
// role or scope too weak 403, both audited and answered in JSON.

// API rate limits: per token owner and per address, token buckets like
// the cluster reads' (web/costly.go); a script polling a status page
// every few seconds stays far inside them.
const (
	APIBurstPerUser = 120
	APIRatePerUser  = 10.0 // per second
	APIBurstPerAddr = 240
	APIRatePerAddr  = 20.0
	// apiFailuresPerMinute: refused tokens one source may present a
	// minute before it gets 429 (no further audit record) for the rest of
	// the minute: a guesser neither gets far nor floods the audit log.
	apiFailuresPerMinute = 20
)

type apiGate struct {
	h        *handlers.Handlers
	rec      *audit.Recorder
	limit    *CostLimiter
	failures *LoginLimiter
	log      *slog.Logger
}

// apiRoutes mounts the API; costly limits its reads that reach a cluster.
func apiRoutes(h *handlers.Handlers, limit *CostLimiter, costly func(http.Handler) http.Handler, log *slog.Logger) func(chi.Router) {
	g := &apiGate{h: h, rec: audit.New(h.Store), limit: limit, failures: NewLoginLimiter(apiFailuresPerMinute, time.Minute, 10_000), log: log}
	return func(r chi.Router) {
		r.NotFound(h.APINotFound)
		r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
			h.APIRefuse(w, r, http.StatusMethodNotAllowed, r.Method+" is not something "+clip(r.URL.Path)+" takes")
		})
		// The document describes the API; it holds nothing secret.
		r.Get("/openapi.json", h.APIOpenAPI)
		r.Group(func(r chi.Router) {
			r.Use(g.authenticate)
			r.Get("/flows", h.APIFlows)
			r.Get("/flows/{flow}", h.APIFlow)
			r.With(costly).Get("/flows/{flow}/groups", h.APIGroups)
			r.With(costly).Get("/flows/{flow}/groups/{group}", h.APIGroupPlan)
			r.Get("/flows/{flow}/group-quality", h.APIGroupQuality)
			r.Get("/report", h.APIReport)
			if h.Catalog != nil {
				r.With(costly).Get("/savepoints", h.APISavepoints)
			}
			if h.Runbook == nil {
				return
			}
			r.Get("/runs", h.APIRuns)
			r.Get("/runs/{run}", h.APIRun)
			r.Get("/drills", h.APIDrills)
			r.Group(func(r chi.Router) {
				r.Use(g.require(model.RoleOperator))
				r.Post("/runs", h.APIRunCreate)
				r.Post("/runs/{run}/approve", h.APIRunApprove)
				r.Post("/runs/{run}/reject", h.APIRunReject)
				r.Post("/runs/{run}/cancel", h.APIRunCancel)
				r.Post("/runs/{run}/drill", h.APIRunDrill)
				r.Post("/runs/{run}/steps/{step}/execute", h.APIRunExecute)
			})
		})
	}
}

// isAPI: r is for the JSON API.
func isAPI(r *http.Request) bool {
	return r.URL.Path == apiRoot || strings.HasPrefix(r.URL.Path, apiRoot+"/")
}

// apiRoot is where the API is mounted.
const apiRoot = "/api/v1"

// bearer is the token of an "Authorization: Bearer" header; "" when the
// request has none (or another scheme).
func bearer(r *http.Request) string {
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// authenticate puts the token's user in the request context in place of
// whatever the cookie or proxy said, or refuses the request.
func (g *apiGate) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := bearer(r)
		if token == "" {
			g.h.APIRefuse(w, r, http.StatusUnauthorized, "send an API token as \"Authorization: Bearer drc_…\"; make one at /account/tokens (a session cookie does not sign in here)")
			return
		}
		source := "api:" + identity.SourceKey(ClientIP(r))
		if wait, blocked := g.failures.Blocked(source); blocked {
			retryAfter(w, wait)
			g.h.APIRefuse(w, r, http.StatusTooManyRequests, "too many refused API tokens from this address; retry later")
			return
		}
		use, err := identity.Authenticate(r.Context(), g.h.Store, g.rec, token, time.Now())
		switch {
		case errors.Is(err, identity.ErrBadToken):
			g.failures.Failed(source)
			g.h.APIRefuse(w, r, http.StatusUnauthorized, strings.SplitN(err.Error(), "\n", 2)[0])
			return
		case err != nil:
			g.log.Error("reading an API token", "err", err)
			g.h.APIRefuse(w, r, http.StatusServiceUnavailable, "the console cannot check API tokens right now; try again in a moment")
			return
		case !use.Principal.Role.Valid():
			g.h.APIRefuse(w, r, http.StatusForbidden, "the token's account has no role in this console: ask an administrator")
			return
		}
		if wait, ok := g.limit.Allow(use.Principal.Name, ClientIP(r)); !ok {
			retryAfter(w, wait)
			g.h.APIRefuse(w, r, http.StatusTooManyRequests, "too many API requests; retry in a moment")
			return
		}
		ctx := identity.WithToken(identity.WithUser(r.Context(), &use.Principal), use)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// require refuses a token whose capped role is weaker than role (403,
// audited), saying whether the scope or the account is why.
func (g *apiGate) require(role model.Role) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			use, _ := identity.TokenFrom(r.Context())
			if use.Principal.AtLeast(role) {
				next.ServeHTTP(w, r)
				return
			}
			if err := identity.DeniedScope(r.Context(), g.rec, use, r.Method, r.URL.Path, role); err != nil {
				g.log.Error("auditing a refused API request", "err", err)
			}
			msg := "forbidden: this needs the " + string(role) + " role; " + use.Principal.Name + " is " + orNone(use.OwnerRole)
			if use.OwnerRole.AtLeast(role) {
				msg = "forbidden: this token's scope is " + use.Token.Scope + ", which only reads; make an operate token for this"
			}
			g.h.APIRefuse(w, r, http.StatusForbidden, msg)
		})
	}
}

func retryAfter(w http.ResponseWriter, wait time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(max(int((wait+time.Second-1)/time.Second), 1)))
}
