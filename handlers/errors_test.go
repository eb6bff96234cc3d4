package handlers

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/handlers/form"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/storage"
)

// Every class of error answers with its status, wrapped or not; a domain
// refusal is 422 unless it names a sharper status; the rest is 500.
func TestStatusFor(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{fmt.Errorf("approve: %w", runbook.ErrRole), http.StatusForbidden},
		{refused(runbook.ErrSelfApproval), http.StatusForbidden},
		{notFound("flow x"), http.StatusNotFound},
		{refused(fmt.Errorf("run 3: %w", storage.ErrNotFound)), http.StatusNotFound},
		{storage.ErrNoIncident, http.StatusNotFound},
		{storage.ErrUnknownUser, http.StatusNotFound},
		{refused(fmt.Errorf("claim: %w", storage.ErrConflict)), http.StatusConflict},
		{storage.ErrUserExists, http.StatusConflict},
		{fmt.Errorf("form: %w", &http.MaxBytesError{Limit: 1}), http.StatusRequestEntityTooLarge},
		{say("x", fmt.Errorf("form: %w", &http.MaxBytesError{Limit: 1}), errBadRequest), http.StatusRequestEntityTooLarge},
		{badRequest("bad run id"), http.StatusBadRequest},
		{refused(fmt.Errorf("preview: %w", mm2.ErrTooManyOffsets)), http.StatusBadRequest},
		{&runbook.AuditRefusedError{Err: errors.New("disk full")}, http.StatusServiceUnavailable},
		{say("not on record", errors.New("disk full"), errNotAudited), http.StatusServiceUnavailable},
		{refused(runbook.ErrShuttingDown), http.StatusServiceUnavailable},
		{form.Errors{"path": "give the savepoint's path"}, http.StatusUnprocessableEntity},
		{refused(errors.New("no flow named x")), http.StatusUnprocessableEntity},
		{refused(runbook.ErrNotApproved), http.StatusUnprocessableEntity},
		{say("cannot read the savepoint catalog", errors.New("database is locked")), http.StatusInternalServerError},
		{errors.New("anything else"), http.StatusInternalServerError},
	} {
		if got := statusFor(tc.err); got != tc.want {
			t.Errorf("statusFor(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// say shows its message, not its cause, and keeps the cause for errors.Is.
func TestSayHidesCause(t *testing.T) {
	cause := errors.New("SQL logic error near ...")
	err := say("cannot read the users", cause)
	if err.Error() != "cannot read the users" || !errors.Is(err, cause) {
		t.Fatalf("%q, Is cause %v", err, errors.Is(err, cause))
	}
}

// unreadable shows the error's own words and answers 400.
func TestUnreadable(t *testing.T) {
	err := unreadable(errors.New("before: want a record id"))
	if err.Error() != "before: want a record id" || statusFor(err) != http.StatusBadRequest {
		t.Fatalf("%q %d", err, statusFor(err))
	}
}

// The console's own failure is a page in the layout that shows neither the
// cause nor the handler's wording of it, only a reference, and the log
// line under that reference has the cause (issue 31 item 6).
func TestServerErrorShowsAReferenceNotTheCause(t *testing.T) {
	var logs bytes.Buffer
	h := &Handlers{Log: slog.New(slog.NewTextHandler(&logs, nil)), Version: "test"}
	for _, tc := range []struct {
		name   string
		err    error
		status int
		says   string
	}{
		{"unclassified", errors.New("open /var/lib/drconsole/secret.db: permission denied"), http.StatusInternalServerError,
			"The console failed to answer this request"},
		{"worded with its cause", say("cannot read the users: near \"secret_table\": syntax error", errors.New("SQL")),
			http.StatusInternalServerError, "The console failed to answer this request"},
		{"not audited", &runbook.AuditRefusedError{Err: errors.New("disk I/O error at /var/lib/secret")},
			http.StatusServiceUnavailable, "could not be written, so nothing was done"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs.Reset()
			rec := httptest.NewRecorder()
			h.fail(rec, httptest.NewRequest(http.MethodGet, "/failover/3", nil), tc.err)
			body := rec.Body.String()
			if rec.Code != tc.status || !strings.Contains(body, `<html lang="en">`) || !strings.Contains(body, "<title>") ||
				!strings.Contains(body, tc.says) || !strings.Contains(body, `href="/failover"`) {
				t.Fatalf("%d:\n%s", rec.Code, body)
			}
			if strings.Contains(body, "secret") {
				t.Fatalf("the page shows the cause:\n%s", body)
			}
			m := regexp.MustCompile(`data-testid="error-ref">([0-9a-f]{10})<`).FindStringSubmatch(body)
			if m == nil {
				t.Fatalf("no reference on the page:\n%s", body)
			}
			if !strings.Contains(logs.String(), "ref="+m[1]) || !strings.Contains(logs.String(), "secret") {
				t.Fatalf("the log has no line with ref %s and the cause:\n%s", m[1], logs.String())
			}
		})
	}
	// An htmx request gets the box alone.
	req := httptest.NewRequest(http.MethodPost, "/demo/mirror", nil)
	req.Header.Set("HX-Request", "true")
	rec := httptest.NewRecorder()
	h.fail(rec, req, errors.New("boom"))
	if rec.Code != 500 || strings.Contains(rec.Body.String(), "<html") || !strings.Contains(rec.Body.String(), "data-request-error") {
		t.Fatalf("htmx: %d %s", rec.Code, rec.Body.String())
	}
}

// A 404 says what was not found, in the console's words, not storage's.
func TestNotFoundSaysWhat(t *testing.T) {
	h := &Handlers{Version: "test"}
	rec := httptest.NewRecorder()
	h.fail(rec, httptest.NewRequest(http.MethodGet, "/failover/9999", nil), refused(fmt.Errorf("storage: failover run 9999: %w", storage.ErrNotFound)))
	if body := rec.Body.String(); rec.Code != 404 || !strings.Contains(body, "failover run 9999 not found") || strings.Contains(body, "storage:") {
		t.Fatalf("%d %s", rec.Code, body)
	}
}
