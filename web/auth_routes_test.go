package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
)

// Routes anyone may use, signed in or not.
var publicRoutes = map[string]bool{
	"GET /login": true, "POST /login": true,
	"GET /auth/login": true, "GET /auth/callback": true, // single sign-on (oidc mode: web/oidc_test.go)
	"GET /healthz": true, "GET /readyz": true, "GET /metrics": true, "GET /static/*": true,
}

// State-changing routes open to every signed-in user, viewers included.
var anyUserRoutes = map[string]bool{"POST /logout": true, "POST /logout/everywhere": true, "POST /audit/verify": true,
	// Checking an evidence pack reads the log and records the check, like the chain's check.
	"POST /drills/evidence/verify": true,
	"POST /account/tokens":         true, "POST /account/tokens/{id}/revoke": true}

// roleDenied and adminDenied are how RequireRole words its 403, to tell
// it from a handler's own refusal.
const (
	roleDenied  = "forbidden: this needs the operator role"
	adminDenied = "forbidden: this needs the admin role"
)

// adminRoute: every route under /admin is for admins only, pages too.
func adminRoute(pattern string) bool {
	return pattern == "/admin" || strings.HasPrefix(pattern, "/admin/")
}

var paramRE = regexp.MustCompile(`\{[^}]+\}`)

// concretePath fills a chi pattern with values the sandbox has.
func concretePath(pattern string) string {
	p := strings.NewReplacer("{flow}", "primary-%3Edr", "{topic}", "events", "{partition}", "0",
		"{run}", "999999", "{step}", "0").Replace(pattern)
	p = paramRE.ReplaceAllString(p, "x")
	return strings.Replace(p, "*", "app.css", 1)
}

// Every route of the router, found with chi.Walk (so a route added later
// is checked without touching this test):
//   - a state-changing one refuses a request without a session (401), a
//     viewer (403 from the role gate), and a cross-origin browser request
//     even from an operator (403); an operator same-origin gets past all
//     three;
//   - a page needs a session (303 to the sign-in form, 401 for htmx) unless
//     it is public, and is open to viewers;
//   - a route under /admin, page or not, also refuses an operator (403
//     from the role gate) and lets an admin through.
func TestEveryRouteEnforcesSessionRoleAndOrigin(t *testing.T) {
	c := startConsole(t)
	waitReady(t, c)
	type route struct{ method, pattern string }
	var routes []route
	err := chi.Walk(c.Handler.(chi.Routes), func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		routes = append(routes, route{method, pattern})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var gets, changes, admins int
	for _, rt := range routes {
		if rt.method == http.MethodGet {
			gets++
		} else {
			changes++
		}
		if adminRoute(rt.pattern) {
			admins++
		}
	}
	if gets < 10 || changes < 5 || admins < 2 {
		t.Fatalf("walk found %d GET, %d other and %d admin routes: not seeing the router", gets, changes, admins)
	}
	// refusedByGate: a 403 from RequireRole, not from a handler.
	refusedByGate := func(rec *httptest.ResponseRecorder, want string) bool {
		return rec.Code == http.StatusForbidden && strings.Contains(rec.Body.String(), want)
	}
	form := url.Values{"rate": {"0"}, "running": {"true"}, "down": {"false"}}.Encode()
	do := func(method, path string, cookie *http.Cookie, site string, htmx bool) *httptest.ResponseRecorder {
		var body *strings.Reader
		if method != http.MethodGet {
			body = strings.NewReader(form)
		} else {
			body = strings.NewReader("")
		}
		req := httptest.NewRequest(method, path, body)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if site != "" {
			req.Header.Set("Sec-Fetch-Site", site)
		}
		if htmx {
			req.Header.Set("HX-Request", "true")
		}
		if cookie != nil {
			req.AddCookie(cookie)
		}
		if strings.HasSuffix(path, "/events") {
			// A live stream runs until its request ends.
			ctx, cancel := context.WithTimeout(req.Context(), 300*time.Millisecond)
			defer cancel()
			req = req.WithContext(ctx)
		}
		rec := httptest.NewRecorder()
		c.Handler.ServeHTTP(rec, req)
		return rec
	}
	for _, rt := range routes {
		key := rt.method + " " + rt.pattern
		path := concretePath(rt.pattern)
		t.Run(key, func(t *testing.T) {
			if strings.HasPrefix(rt.pattern, "/api/v1/") {
				apiRouteGates(t, c, rt.method, path) // tokens, not sessions (api_test.go)
				return
			}
			switch rt.method {
			case http.MethodGet, http.MethodHead, http.MethodOptions:
				anon := do(rt.method, path, nil, "", false)
				if publicRoutes[key] {
					if anon.Code == http.StatusSeeOther || anon.Code == http.StatusUnauthorized {
						t.Errorf("public route without a session = %d", anon.Code)
					}
					return
				}
				if loc := anon.Header().Get("Location"); anon.Code != http.StatusSeeOther || !strings.HasPrefix(loc, "/login?next=") {
					t.Errorf("without a session = %d Location %q, want 303 to /login?next=", anon.Code, loc)
				}
				if hx := do(rt.method, path, nil, "", true); hx.Code != http.StatusUnauthorized || !strings.HasPrefix(hx.Header().Get("HX-Redirect"), "/login?next=") {
					t.Errorf("htmx without a session = %d HX-Redirect %q, want 401 and a redirect to /login", hx.Code, hx.Header().Get("HX-Redirect"))
				}
				if adminRoute(rt.pattern) {
					for _, role := range []string{"viewer", "operator"} {
						if rec := do(rt.method, path, sessionCookie(t, c, role), "", false); !refusedByGate(rec, adminDenied) {
							t.Errorf("%s on an admin page = %d %.100q, want 403 from the role gate", role, rec.Code, rec.Body.String())
						}
					}
					if a := do(rt.method, path, sessionCookie(t, c, "admin"), "", false); a.Code == http.StatusUnauthorized ||
						a.Code == http.StatusForbidden || a.Code == http.StatusSeeOther || a.Code >= 500 {
						t.Errorf("admin = %d on an admin page: %.200s", a.Code, a.Body.String())
					}
					return
				}
				if v := do(rt.method, path, sessionCookie(t, c, "viewer"), "", false); v.Code == http.StatusUnauthorized ||
					v.Code == http.StatusForbidden || v.Code == http.StatusSeeOther || v.Code >= 500 {
					t.Errorf("viewer = %d: viewers see every page: %.200s", v.Code, v.Body.String())
				}
			default:
				// (c) Cross-origin: refused whoever is signed in, public or not.
				for _, site := range []string{"cross-site", "same-site"} {
					if rec := do(rt.method, path, sessionCookie(t, c, "admin"), site, false); rec.Code != http.StatusForbidden {
						t.Errorf("Sec-Fetch-Site %s as admin = %d, want 403", site, rec.Code)
					}
				}
				if publicRoutes[key] {
					return
				}
				// (a) No session.
				if rec := do(rt.method, path, nil, "same-origin", false); rec.Code != http.StatusUnauthorized {
					t.Errorf("without a session = %d, want 401", rec.Code)
				}
				if rec := do(rt.method, path, &http.Cookie{Name: "drconsole_session", Value: "forged"}, "same-origin", false); rec.Code != http.StatusUnauthorized {
					t.Errorf("with a forged session = %d, want 401", rec.Code)
				}
				// (b) Wrong role.
				viewer := do(rt.method, path, sessionCookie(t, c, "viewer"), "same-origin", false)
				if adminRoute(rt.pattern) {
					for role, rec := range map[string]*httptest.ResponseRecorder{"viewer": viewer,
						"operator": do(rt.method, path, sessionCookie(t, c, "operator"), "same-origin", false)} {
						if !refusedByGate(rec, adminDenied) {
							t.Errorf("%s on an admin route = %d %.100q, want 403 from the role gate", role, rec.Code, rec.Body.String())
						}
					}
					// An admin from our own page gets through every gate
					// (the handler refuses the junk form or the unknown user).
					a := do(rt.method, path, sessionCookie(t, c, "admin"), "same-origin", false)
					if a.Code == http.StatusUnauthorized || strings.Contains(a.Body.String(), "forbidden: this needs the") || a.Code >= 500 {
						t.Errorf("admin same-origin = %d: %.200s", a.Code, a.Body.String())
					}
					return
				}
				if anyUserRoutes[key] {
					if viewer.Code == http.StatusUnauthorized || viewer.Code == http.StatusForbidden {
						t.Errorf("viewer = %d on a route open to every signed-in user", viewer.Code)
					}
				} else if viewer.Code != http.StatusForbidden || !strings.Contains(viewer.Body.String(), roleDenied) {
					t.Errorf("viewer = %d %.100q, want 403 from the role gate", viewer.Code, viewer.Body.String())
				}
				// The right role from our own page gets through every gate
				// (the handler may still refuse the junk form).
				op := do(rt.method, path, sessionCookie(t, c, "operator"), "same-origin", false)
				if op.Code == http.StatusUnauthorized || strings.Contains(op.Body.String(), "forbidden: this needs the") || op.Code >= 500 {
					t.Errorf("operator same-origin = %d: %.200s", op.Code, op.Body.String())
				}
			}
		})
	}
}
