package web_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// errorPage asks the shared console for path as role (htmx: as a
// background request) and returns the status, headers and body.
func errorPage(t *testing.T, c *console, method, path, role string, htmx bool) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(method, c.URL+path, strings.NewReader("rate=5"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	if htmx {
		req.Header.Set("HX-Request", "true")
	}
	req.AddCookie(sessionCookie(t, c, role))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(body)
}

// A refused or missing page is a page of the console: its language, a
// title, the header with the navigation, what went wrong in words, and a
// way back (issue 31 item 6); an htmx request gets the same as a
// fragment that static/app.js shows.
func TestErrorPagesInTheLayout(t *testing.T) {
	t.Parallel()
	c := startConsole(t)
	for _, tc := range []struct {
		name, method, path, role string
		status                   int
		title, says, back        string
	}{
		{"missing run", http.MethodGet, "/failover/9999", "viewer", http.StatusNotFound,
			"Not Found", "failover run 9999 not found", `href="/failover"`},
		{"missing savepoint", http.MethodGet, "/savepoints/9999", "viewer", http.StatusNotFound,
			"Not Found", "savepoint 9999 not found", `href="/savepoints"`},
		{"no such page", http.MethodGet, "/no/such/page", "viewer", http.StatusNotFound,
			"Not Found", "no page at /no/such/page", `href="/"`},
		{"not a run id", http.MethodGet, "/failover/new", "viewer", http.StatusBadRequest,
			"Bad Request", "bad run id", `href="/failover"`},
		{"viewer presses an operator's button", http.MethodPost, "/demo/mirror-rate", "viewer", http.StatusForbidden,
			"Not allowed", "this needs the operator role", `href="/"`},
		{"operator opens an admin page", http.MethodGet, "/admin/users", "operator", http.StatusForbidden,
			"Not allowed", "this needs the admin role; test-operator is an operator", `href="/"`},
		{"method the page does not take", http.MethodDelete, "/audit", "viewer", http.StatusMethodNotAllowed,
			"Method Not Allowed", "DELETE is not something /audit takes", `href="/"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, hdr, body := errorPage(t, c, tc.method, tc.path, tc.role, false)
			if code != tc.status || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
				t.Fatalf("%s %s = %d %s, want %d HTML:\n%s", tc.method, tc.path, code, hdr.Get("Content-Type"), tc.status, body)
			}
			for _, want := range []string{`<html lang="en">`, "<title>" + tc.title + " · drconsole</title>",
				`<nav aria-label="Main">`, `id="request-error"`, "<h1 id=\"error-heading\">" + tc.title + "</h1>", tc.says, tc.back} {
				if !strings.Contains(body, want) {
					t.Errorf("%s %s lacks %q:\n%s", tc.method, tc.path, want, body)
				}
			}
			if strings.Contains(body, "storage:") {
				t.Errorf("the page shows storage's own words:\n%s", body)
			}
			code, _, frag := errorPage(t, c, tc.method, tc.path, tc.role, true)
			if code != tc.status || strings.Contains(frag, "<html") || !strings.Contains(frag, "data-request-error") ||
				!strings.Contains(frag, tc.says) {
				t.Errorf("htmx %s %s = %d, want %d and the fragment alone:\n%s", tc.method, tc.path, code, tc.status, frag)
			}
		})
	}
	if _, hdr, _ := errorPage(t, c, http.MethodDelete, "/audit", "viewer", false); !strings.Contains(hdr.Get("Allow"), http.MethodGet) {
		t.Errorf("405 Allow = %q, want GET in it", hdr.Get("Allow"))
	}
}
