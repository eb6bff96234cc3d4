// Package clusterlinktest holds what tests of the Cluster Linking REST
// client share across packages (its reads in clusterlink, its mirror
// actions in runbook/internal/effect): a server that answers every
// request alike and records them, and Confluent's error answers.
package clusterlinktest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Request is what the server was asked.
type Request struct {
	Method, Path, Query, ContentType, Auth string
	Body                                   string
}

// Server answers every request with status and body and records what it
// was asked.
func Server(t testing.TB, status int, contentType, body string) (*httptest.Server, func() []Request) {
	t.Helper()
	var mu sync.Mutex
	var seen []Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, Request{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Content-Type"), r.Header.Get("Authorization"), string(b)})
		mu.Unlock()
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []Request {
		mu.Lock()
		defer mu.Unlock()
		return append([]Request(nil), seen...)
	}
}

// HTTPErrorCase is a non-2xx answer and what the client must make of it.
type HTTPErrorCase struct {
	Name, ContentType, Body string
	Status, Code            int
	Message                 string
	Retriable, Auth         bool
}

// HTTPErrorCases are Confluent's error bodies, Jetty's HTML and a gateway's
// plain text.
var HTTPErrorCases = []HTTPErrorCase{
	{"auth", "application/json", `{"error_code":40101,"message":"Authentication failed"}`, 401, 40101, "Authentication failed", false, true},
	{"unsupported", "application/json", `{"error_code":40035,"message":"The version of this API is not supported in the underlying Kafka cluster."}`, 400, 40035, "The version of this API is not supported in the underlying Kafka cluster.", false, false},
	{"rate limited", "text/html", `<html><head><title>Error 429 Too Many Requests</title></head><body><h2>HTTP ERROR 429</h2></body></html>`, 429, 0, "Too Many Requests", true, false},
	{"retriable kafka", "application/json", `{"error_code":50003,"message":"Retriable Kafka error"}`, 503, 50003, "Retriable Kafka error", true, false},
	{"generic 500", "application/json", `{"error_code":500,"message":"Internal Server Error"}`, 500, 500, "Internal Server Error", true, false},
	{"not found", "application/json", `{"error_code":404,"message":"Cluster link 'x' does not exist."}`, 404, 404, "Cluster link 'x' does not exist.", false, false},
	{"plain text", "text/plain", `gateway says no`, 502, 0, "gateway says no", true, false},
}

// Check fails t unless the error the client returned for the case (err,
// and what its *clusterlink.HTTPError says: op, status, code, message,
// retriable, auth) is the one the case describes.
func (tc HTTPErrorCase) Check(t testing.TB, err error, op string, status, code int, message string, retriable, auth bool) {
	t.Helper()
	if status != tc.Status || code != tc.Code || message != tc.Message || retriable != tc.Retriable || auth != tc.Auth {
		t.Fatalf("%s: error status %d code %d message %q retriable %v auth %v", tc.Name, status, code, message, retriable, auth)
	}
	if !strings.Contains(err.Error(), op) || op == "" {
		t.Fatalf("message %q does not name the operation", err)
	}
}

// Hanging is a server that answers nothing until the test ends: for
// timeouts.
func Hanging(t testing.TB) *httptest.Server {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: the handlers return, then the server closes
	return srv
}
