package web

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/handlers"
)

// Every request carries its client for the audit records made under it,
// however deep: the address as the console works it out (X-Forwarded-For
// only from a trusted proxy) and the user agent.
func TestIdentifyNamesTheAuditClient(t *testing.T) {
	h := &handlers.Handlers{Auth: config.Auth{TrustedProxies: []string{"192.0.2.0/24"}}}
	a := newAuthenticator(h, slog.New(slog.NewTextHandler(io.Discard, nil)))
	var got audit.Client
	next := a.identify(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = audit.ClientFrom(r.Context()) }))
	for _, tc := range []struct {
		remote, xff, want string
	}{
		{"198.51.100.4:5555", "203.0.113.9", "198.51.100.4"}, // untrusted peer: its header is ignored
		{"192.0.2.7:5555", "203.0.113.9", "203.0.113.9"},     // trusted proxy: the client it names
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = tc.remote
		r.Header.Set("X-Forwarded-For", tc.xff)
		r.Header.Set("User-Agent", "test-agent/1")
		next.ServeHTTP(httptest.NewRecorder(), r)
		if got.IP != tc.want || got.UserAgent != "test-agent/1" {
			t.Errorf("from %s (X-Forwarded-For %s): audit client %+v, want %s and the user agent", tc.remote, tc.xff, got, tc.want)
		}
	}
}
