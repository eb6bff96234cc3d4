package flinktest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// REST starts a JobManager stand-in that answers routes (with the shapes
// seen from Flink 2.2.1 in testenv, which reads the same fields from the
// real JobManager) and Flink's 404 otherwise, and returns its URL.
func REST(t testing.TB, routes map[string]func(w http.ResponseWriter, body map[string]any)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, ok := routes[r.Method+" "+r.URL.Path]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"errors":["Not found: `+r.URL.Path+`"]}`)
			return
		}
		var body map[string]any
		if r.Body != nil {
			json.NewDecoder(r.Body).Decode(&body)
		}
		w.Header().Set("Content-Type", "application/json")
		h(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
