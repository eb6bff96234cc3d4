package web

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/handlers"
)

// A handler's panic is the console's 500 page with a reference, the panic
// and its stack in the log under it; the page shows neither.
func TestPanicIsTheErrorPage(t *testing.T) {
	var logs bytes.Buffer
	h := &handlers.Handlers{Log: slog.New(slog.NewTextHandler(&logs, nil)), Version: "test"}
	panicky := recoverPanics(h)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("secret state") }))
	rec := httptest.NewRecorder()
	panicky.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/failover/3", nil))
	body := rec.Body.String()
	m := regexp.MustCompile(`data-testid="error-ref">([0-9a-f]+)<`).FindStringSubmatch(body)
	if rec.Code != http.StatusInternalServerError || !strings.Contains(body, `<html lang="en">`) || m == nil || strings.Contains(body, "secret") {
		t.Fatalf("%d:\n%s", rec.Code, body)
	}
	if !strings.Contains(logs.String(), "ref="+m[1]) || !strings.Contains(logs.String(), "panic: secret state") {
		t.Fatalf("log:\n%s", logs.String())
	}
}
