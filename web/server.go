// Package web is the console's HTTP server: the chi router, middleware
// (request logging, panic recovery, cross-origin protection, security
// headers, authentication and roles) and the static assets.
package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/handlers"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/static"
)

// Console is the router with its live-update streams (Serve ends them on
// shutdown, which would otherwise wait for them) and the count of failed
// sign-ins (Serve writes what it holds once the requests are done).
type Console struct {
	chi.Router
	Streams  *Streams
	Failures *identity.SignInFailures
	// Cost bounds the GETs that reach a cluster per request.
	Cost *CostLimiter
	// API bounds the JSON API's requests per token owner and address.
	API *CostLimiter
}

// ssoStartsPerMinute is how many single sign-ons one source may start per
// minute: a person starts one per sign-in, an office behind one address
// a few; a flood gets 429.
const ssoStartsPerMinute = 30

// Router builds the console's routes.
func Router(h *handlers.Handlers, log *slog.Logger) *Console {
	streams := &Streams{}
	// kafka_mirror_* are encoded once per monitor refresh; the rest per scrape.
	live := prometheus.NewRegistry()
	metrics := handlers.MetricsCollector{Monitor: h.Monitor, Series: h.Metrics}
	if h.Store != nil {
		metrics.Store = h.Store
	}
	live.MustRegister(metrics.StoreCollector(), metrics.WriterCollector(),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	// Router owns the auth defaults so a Handlers built in code (tests)
	// never runs without a session timeout or a login limit.
	h.Auth.ApplyDefaults()
	if h.Limiter == nil {
		h.Limiter = NewLoginLimiter(h.Auth.LoginMaxFailures, h.Auth.LoginFailureWindow.D(), 10_000)
	}
	if h.StartLimiter == nil {
		h.StartLimiter = NewLoginLimiter(ssoStartsPerMinute, time.Minute, 10_000)
	}
	if h.Failures == nil {
		h.Failures = identity.NewSignInFailures(h.Store, log)
	}
	if h.Auth.Mode == config.AuthOIDC && h.OIDC == nil {
		h.OIDC = identity.NewOIDC(h.Auth.OIDC, h.Auth.GroupRoles)
	}

	cost := NewCostLimiter(DefaultCostBurstPerUser, DefaultCostRatePerUser, DefaultCostBurstPerAddr, DefaultCostRatePerAddr, 10_000)
	costly := limitCost(cost)
	auth := newAuthenticator(h, log)
	// A stream ends with its session (sign-out, sign-out everywhere,
	// expiry, a disabled account) or its user's role.
	streams.Still = auth.stillSignedIn

	r := chi.NewRouter()
	r.Use(recoverPanics(h), requestLog(log), securityHeaders, checkHost(h.Auth, h.Metrics.AllowedHosts, log))
	// HTML pages and fragments gzipped when accepted; event streams never.
	r.Use(compressHTML)
	// Pages are cached per key (handlers/pagecache.go); a state-changing
	// request moves the key on.
	r.Use(countChanges(h.StateChanged))
	// Every state-changing request must come from our own pages; GETs stay
	// free of side effects. Checked before anything else, so a cross-site
	// form cannot even try a password.
	r.Use(http.NewCrossOriginProtection().Handler)
	// Who is asking (session or trusted proxy header) and from where; the
	// groups below decide what they may do.
	r.Use(auth.identify)

	// No such page, or a method the page does not take: the console's
	// error page, with the way back.
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		h.Refuse(w, r, http.StatusNotFound, "no page at "+clip(r.URL.Path))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, req *http.Request) {
		var allow []string
		for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost} {
			if r.Match(chi.NewRouteContext(), m, req.URL.Path) {
				allow = append(allow, m)
			}
		}
		w.Header().Set("Allow", strings.Join(allow, ", "))
		h.Refuse(w, req, http.StatusMethodNotAllowed, req.Method+" is not something "+clip(req.URL.Path)+" takes")
	})

	// Public: signing in, probes, metrics for Prometheus, assets.
	r.Get("/login", h.LoginPage)
	r.Post("/login", h.LoginPost)
	if h.OIDC != nil {
		r.Get("/auth/login", h.OIDCStart)
		r.Get(config.CallbackPath, h.OIDCCallback)
	}
	r.Get("/healthz", h.Healthz)
	r.Get("/readyz", h.Readyz)
	r.Method(http.MethodGet, "/metrics", &handlers.MetricsExposition{Collector: metrics, Live: live, Log: log})
	r.Method(http.MethodGet, "/static/*", http.StripPrefix("/static/", cacheStatic(http.FileServerFS(static.FS))))
	// The JSON API: API tokens only, never the session (web/api.go).
	apiLimit := NewCostLimiter(APIBurstPerUser, APIRatePerUser, APIBurstPerAddr, APIRatePerAddr, 10_000)
	r.Route(apiRoot, apiRoutes(h, apiLimit, costly, log))

	// Everything else needs a signed-in user. Viewers see every page but
	// the admin ones; anything that changes state goes in the operator
	// group below (or the admin one), and web/auth_routes_test.go checks
	// that for every route the router has.
	r.Group(func(r chi.Router) {
		r.Use(RequireUser(h))
		r.Get("/", h.Overview)
		r.Get("/events", streams.Shared(overviewKey, h.OverviewEvents))
		r.Get("/flows/{flow}", h.Flow)
		r.Get("/flows/{flow}/groups", h.Groups)
		r.Get("/flows/{flow}/topics/{topic}", h.Topic)
		r.Get("/flows/{flow}/topics/{topic}/partitions/{partition}", h.Partition)
		// GETs that reach a cluster on every request: rate-limited per
		// user and address (web/costly.go).
		r.With(costly).Get("/translate", h.TranslatePage)
		r.With(costly).Get("/group-picker", h.PlanGroups)
		r.Get("/demo", h.DemoPanel)
		r.Get("/audit", h.AuditPage)
		r.Get("/audit/export", h.AuditExport)
		r.Get("/report", h.Report)
		r.Get("/report.csv", h.ReportCSV)
		r.Get("/report/episodes.csv", h.ReportEpisodes)
		if h.Runbook != nil {
			r.Get("/failover", h.FailoverList)
			r.Get("/failover/{run}", h.FailoverRun)
			// The plan form's pickers and summary: reads, changing nothing.
			r.With(costly).Get("/failover/plan/jars", h.PlanJars)
			r.With(costly).Get("/failover/plan/savepoints", h.PlanSavepoints)
			r.Get("/failover/plan/summary", h.PlanSummary)
			r.With(costly).Get("/failover/plan/rewrite", h.PlanRewriteChoices)
			r.Get("/failover/{run}/events", streams.Handler(h.FailoverRunEvents))
			// The run's section again (the page's forms after the run
			// changed), the navigation's waiting count, and a GET on an
			// action's path: the run page at that step, never a 405.
			r.Get("/failover/{run}/live", h.FailoverRunSection)
			r.Get("/failover/waiting", h.FailoverWaiting)
			for _, action := range []string{"approve", "reject", "rollback", "break-glass", "drill", "previews/recompute", "steps/{step}/execute", "steps/{step}/recompute"} {
				r.Get("/failover/{run}/"+action, h.FailoverActionPage)
			}
			r.With(costly).Get("/failover/{run}/reverse", h.FailoverReverse)
			r.Get("/drills", h.Drills)
			r.Get("/drills/report", h.DrillReport)
			r.Get("/drills/export.csv", h.DrillsExport)
			r.Get("/drills/export.json", h.DrillsExport)
			// A drill's evidence pack: each download adds a record, so
			// it is rate-limited like the audit chain's check.
			r.With(costly).Get("/drills/{run}/evidence.html", h.DrillEvidence)
			r.With(costly).Get("/drills/{run}/evidence.json", h.DrillEvidence)
			r.With(costly).Get("/flows/{flow}/lost", h.LostToDR)
		}
		if h.Catalog != nil {
			r.With(costly).Get("/savepoints", h.Savepoints)
			r.Get("/savepoints/progress", h.SavepointProgress)
			r.Get("/savepoints/events", streams.Handler(h.SavepointEvents))
			r.With(costly).Get("/savepoints/{id}", h.Savepoint)
			r.Get("/savepoints/{id}/offsets.json", h.SavepointOffsets)
		}
		// Anyone signed in manages their own API tokens (a viewer's only
		// read); an admin revokes anyone's (handlers/api_tokens.go).
		r.Get("/account/tokens", h.Tokens)
		r.Post("/account/tokens", h.TokenCreate)
		r.Post("/account/tokens/{id}/revoke", h.TokenRevoke)
		// Anyone signed in may sign out, here or everywhere.
		r.Post("/logout", h.Logout)
		r.Post("/logout/everywhere", h.LogoutEverywhere)
		// Verifying the audit chain reads it and records that it was
		// checked; it changes nothing else, so any signed-in user may.
		// It reads the whole chain and adds a record each time: rate
		// limited like the cluster reads.
		r.With(costly).Post("/audit/verify", h.AuditVerify)
		if h.Runbook != nil {
			// Checking an uploaded evidence pack likewise reads the log
			// and records the check.
			r.With(costly).Post("/drills/evidence/verify", h.DrillEvidenceVerify)
		}

		r.Group(func(r chi.Router) {
			r.Use(RequireRole(h, model.RoleOperator))
			r.Post("/translate", h.TranslatePost)
			r.Post("/flows/{flow}/loss/{id}/ack", h.LossAck)
			r.Post("/demo/mirror-rate", h.DemoMirrorRate)
			r.Post("/demo/mirror", h.DemoMirror)
			r.Post("/demo/primary", h.DemoPrimary)
			r.Post("/demo/consumers", h.DemoConsumers)
			if h.Runbook != nil {
				r.Post("/failover", h.FailoverCreate)
				r.Post("/failover/{run}/approve", h.FailoverApprove)
				r.Post("/failover/{run}/reject", h.FailoverReject)
				r.Post("/failover/{run}/rollback", h.FailoverRollback)
				r.Post("/failover/{run}/break-glass", h.FailoverBreakGlass)
				r.Post("/failover/{run}/steps/{step}/execute", h.FailoverExecute)
				r.Post("/failover/{run}/drill", h.FailoverDrillStart)
				r.Post("/failover/{run}/previews/recompute", h.FailoverRecompute)
				r.Post("/failover/{run}/steps/{step}/recompute", h.FailoverRecomputeStep)
				r.Post("/flows/{flow}/lost/export", h.LostExport)
			}
			if h.Catalog != nil {
				r.Post("/savepoints/sync", h.SavepointSync)
				r.Post("/savepoints/register", h.SavepointRegister)
				r.Post("/savepoints/trigger", h.SavepointTrigger)
			}
		})

		// Admins only, pages included: everything under /admin (and
		// web/auth_routes_test.go holds every /admin route to that).
		r.Group(func(r chi.Router) {
			r.Use(RequireRole(h, model.RoleAdmin))
			r.Get("/admin/users", h.AdminUsers)
			r.Post("/admin/users", h.AdminUserCreate)
			r.Post("/admin/users/{name}/role", h.AdminUserRole)
			r.Post("/admin/users/{name}/password", h.AdminUserPassword)
			r.Post("/admin/users/{name}/disable", h.AdminUserDisable)
			r.Post("/admin/users/{name}/enable", h.AdminUserEnable)
			r.Post("/admin/users/{name}/signout", h.AdminUserSignOut)
		})
	})
	return &Console{Router: r, Streams: streams, Failures: h.Failures, Cost: cost, API: apiLimit}
}

func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		// frame-ancestors backs X-Frame-Options (clickjacking); form-action
		// keeps an injected form from posting elsewhere; base-uri 'none'
		// stops an injected <base> from re-pointing relative URLs.
		h.Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "+
			"frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
		next.ServeHTTP(w, r)
	})
}

// checkHost refuses requests whose Host is not this console's: a DNS
// rebinding page (evil.example resolving to 127.0.0.1) would otherwise be
// same-origin with the console in the victim's browser. Allowed: the host
// of auth.public_url, localhost, and IP addresses (a rebinding page cannot
// make a browser send one). /metrics too: it names flows and topics and
// tells RPO and failover counts; Prometheus scrapes pod or node IPs (the
// Helm chart's ServiceMonitor does), and a scrape by DNS name needs that
// name in metrics.allowed_hosts. Only the probes, which tell nothing but
// "up", answer whatever the Host, for load balancers and kubelets.
func checkHost(auth config.Auth, metricsHosts []string, log *slog.Logger) func(http.Handler) http.Handler {
	public, _ := auth.PublicHost() // validated with the config
	scrapers := map[string]bool{}
	for _, h := range metricsHosts {
		scrapers[strings.ToLower(strings.TrimSuffix(h, "."))] = true
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/healthz", "/readyz":
				next.ServeHTTP(w, r)
				return
			case "/metrics":
				if scrapers[hostName(r.Host)] {
					next.ServeHTTP(w, r)
					return
				}
			}
			if !hostAllowed(r.Host, public) {
				log.Warn("refusing a request for another host (DNS rebinding?)", "host", clip(r.Host), "path", r.URL.Path, "remote", r.RemoteAddr)
				want := "localhost or an IP address"
				if public != "" {
					want = public + ", " + want
				}
				http.Error(w, fmt.Sprintf("this console answers to %s, not %q: set auth.public_url to the address people use", want, clip(r.Host)),
					http.StatusMisdirectedRequest)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// hostAllowed: host (a Host header, port optional) is public, localhost or
// an IP address.
func hostAllowed(host, public string) bool {
	h := hostName(host)
	if h == "" {
		return false
	}
	if h == "localhost" || (public != "" && h == public) {
		return true
	}
	_, err := netip.ParseAddr(h)
	return err == nil
}

// hostName is a Host header's name: no port, no brackets, no final dot,
// lower case.
func hostName(host string) string {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	return strings.ToLower(strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"), "."))
}

// cacheStatic lets browsers keep assets for an hour; the vendored htmx
// file name carries its version.
func cacheStatic(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		next.ServeHTTP(w, r)
	})
}

// recoverPanics answers a handler's panic with the console's 500 page (a
// reference; the panic and its stack in the log under it) rather than a
// bare answer; http.ErrAbortHandler still aborts the response.
func recoverPanics(h *handlers.Handlers) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if rv := recover(); rv != nil {
					if rv == http.ErrAbortHandler {
						panic(rv)
					}
					h.Fail(w, r, fmt.Errorf("panic: %v\n%s", rv, debug.Stack()))
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// requestLog logs each request with slog; polling fragments, scrapes and
// probes log at debug. A probe's 503 is the probe's answer ("not ready
// yet", at every start), not a server error.
func requestLog(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			next.ServeHTTP(ww, r)
			level := slog.LevelInfo
			probe := r.URL.Path == "/healthz" || r.URL.Path == "/readyz"
			if r.Header.Get("HX-Request") == "true" && r.Method == http.MethodGet || r.URL.Path == "/metrics" || probe {
				level = slog.LevelDebug
			}
			if ww.Status() >= 500 && !probe {
				level = slog.LevelError
			}
			log.Log(r.Context(), level, "http", "method", r.Method, "path", r.URL.Path, "status", ww.Status(),
				"bytes", ww.BytesWritten(), "duration", time.Since(start), "remote", r.RemoteAddr)
		})
	}
}

// Serve runs the server on ln until ctx is done, then shuts down gracefully.
func Serve(ctx context.Context, ln net.Listener, handler http.Handler, log *slog.Logger) error {
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	if c, ok := handler.(*Console); ok {
		srv.RegisterOnShutdown(c.Streams.CloseAll)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	if c, ok := handler.(*Console); ok && c.Failures != nil {
		c.Failures.Flush() // after the requests (a shutdown that timed out may lose a straggler's count)
	}
	if err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
