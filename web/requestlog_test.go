package web

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A readiness probe answering 503 while the console starts is logged at
// debug, not as a server error; any other 5xx is an error; pages at info.
func TestRequestLogLevels(t *testing.T) {
	for _, c := range []struct {
		path   string
		status int
		want   string
	}{
		{"/readyz", http.StatusServiceUnavailable, "level=DEBUG"},
		{"/healthz", http.StatusOK, "level=DEBUG"},
		{"/flows/x", http.StatusServiceUnavailable, "level=ERROR"},
		{"/flows/x", http.StatusOK, "level=INFO"},
	} {
		var buf bytes.Buffer
		log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
		h := requestLog(log)(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(c.status) }))
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, c.path, nil))
		if !strings.Contains(buf.String(), c.want) {
			t.Errorf("%s %d logged %q, want %s", c.path, c.status, buf.String(), c.want)
		}
	}
}
