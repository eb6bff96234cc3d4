package handlers

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"

	"github.com/drconsole/drconsole/handlers/form"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/views"
)

// The one place an error becomes an HTTP status. Handlers do not pick
// statuses for errors: they classify what went wrong (a domain error, or
// one of the wrappers below) and statusFor answers.

var (
	// errBadRequest: the request itself could not be read (a URL
	// parameter, an unreadable form): 400.
	errBadRequest = errors.New("bad request")
	// errInvalid: the request was read but its values are refused (a
	// form field, a plan the runbook will not take): 422.
	errInvalid = errors.New("invalid input")
	// errNotAudited: the audit record an action needs first could not be
	// written, so nothing was done: 503 (try again).
	errNotAudited = errors.New("not audited")
)

// statusFor is the status err answers with. The first rule that matches
// wins; anything unclassified is the console's own failure (500).
func statusFor(err error) int {
	var tooBig *http.MaxBytesError
	var fields form.Errors
	var auditRefused *runbook.AuditRefusedError
	switch {
	case err == nil:
		return http.StatusOK
	case errors.Is(err, runbook.ErrRole), errors.Is(err, runbook.ErrSelfApproval), errors.Is(err, runbook.ErrStopNeedsRunbook):
		return http.StatusForbidden
	case errors.Is(err, storage.ErrNotFound), errors.Is(err, storage.ErrNoIncident), errors.Is(err, storage.ErrUnknownUser):
		return http.StatusNotFound
	case errors.Is(err, storage.ErrConflict), errors.Is(err, storage.ErrUserExists):
		return http.StatusConflict
	case errors.As(err, &tooBig):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, errBadRequest), errors.Is(err, mm2.ErrTooManyOffsets):
		return http.StatusBadRequest
	case errors.As(err, &auditRefused), errors.Is(err, errNotAudited), errors.Is(err, runbook.ErrShuttingDown):
		return http.StatusServiceUnavailable
	case errors.As(err, &fields), errors.Is(err, errInvalid):
		return http.StatusUnprocessableEntity
	}
	return http.StatusInternalServerError
}

// shown is an error whose message is what the page says; it wraps what
// classifies it (and the cause, for the log and errors.Is).
type shown struct {
	msg  string
	errs []error
}

func (e *shown) Error() string   { return e.msg }
func (e *shown) Unwrap() []error { return e.errs }

// say shows msg for an error classified by (and caused by) errs.
func say(msg string, errs ...error) error { return &shown{msg: msg, errs: errs} }

// badRequest: the request could not be read (400).
func badRequest(msg string) error { return say(msg, errBadRequest) }

// unreadable: err says why the request could not be read (400).
func unreadable(err error) error { return say(err.Error(), err, errBadRequest) }

// notFound: what is not there (404).
func notFound(what string) error { return say(what+" not found", storage.ErrNotFound) }

// refused is a domain refusal (the runbook's, the catalog's): an input
// problem (422) unless the error itself says otherwise (403, 404, 409...).
func refused(err error) error { return say(err.Error(), err, errInvalid) }

// fail answers err as the console's error page with its status (a
// fragment for htmx). A 5xx never shows its cause: the page gives a
// reference, and the log line under it has the cause.
func (h *Handlers) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := statusFor(err)
	msg := err.Error()
	var ref string
	if status >= 500 {
		ref = newRef()
		msg = serverMessage(err, status)
		if h.Log != nil {
			cause := err
			if s, ok := err.(*shown); ok {
				cause = errors.Join(s.errs...)
			}
			h.Log.Error("request failed", "ref", ref, "path", r.URL.Path, "status", status, "err", err, "cause", cause)
		}
	} else if status == http.StatusNotFound {
		// storage words its misses "storage: failover run 9: not found".
		msg = strings.Replace(strings.TrimPrefix(msg, "storage: "), ": not found", " not found", 1)
	}
	h.errorPage(w, r, status, msg, ref)
}

// Fail answers err as a handler's own failure is answered (for the web
// middleware: a recovered panic).
func (h *Handlers) Fail(w http.ResponseWriter, r *http.Request, err error) { h.fail(w, r, err) }

// Refuse answers a request the router or its middleware turns away (no
// such page, a method the route does not take, a role too weak) with the
// console's error page; msg says why, for a person.
func (h *Handlers) Refuse(w http.ResponseWriter, r *http.Request, status int, msg string) {
	h.errorPage(w, r, status, msg, "")
}

func (h *Handlers) errorPage(w http.ResponseWriter, r *http.Request, status int, msg, ref string) {
	heading := http.StatusText(status)
	switch status {
	case http.StatusForbidden:
		heading = "Not allowed"
	case http.StatusUnprocessableEntity:
		heading = "Refused"
	case http.StatusInternalServerError:
		heading = "The console failed"
	case http.StatusServiceUnavailable:
		heading = "Not done: try again"
	}
	e := views.ErrorView{Chrome: h.chrome(heading), Status: status, Heading: heading, Message: msg, Ref: ref,
		Back: backLinks(r.URL.Path)}
	if r.Header.Get("HX-Request") == "true" {
		h.render(w, r, status, views.ErrorBox(e))
		return
	}
	h.render(w, r, status, views.ErrorPage(e))
}

// serverMessage is what a person reads of the console's own failure:
// what to do, never the cause (which may name files, SQL or hosts).
func serverMessage(err error, status int) string {
	var auditRefused *runbook.AuditRefusedError
	switch {
	case errors.Is(err, runbook.ErrShuttingDown):
		return runbook.ErrShuttingDown.Error()
	case errors.As(err, &auditRefused), errors.Is(err, errNotAudited):
		return "The audit record this action needs could not be written, so nothing was done. Try again; if it keeps failing, give the reference below to whoever runs the console."
	case status == http.StatusServiceUnavailable:
		return "The console cannot do this right now. Try again in a moment."
	}
	return "The console failed to answer this request. Reload the page to see where things stand before trying again; if it keeps failing, give the reference below to whoever runs the console."
}

// newRef is a short random reference tying an error page to its log line.
func newRef() string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// backLinks are the ways back from a page at path: the list it belongs
// to, then the overview.
func backLinks(path string) []views.Link {
	var links []views.Link
	for _, s := range []struct{ prefix, text, url string }{
		{"/failover", "All failover runs", "/failover"},
		{"/drills", "DR drills", "/drills"},
		{"/savepoints", "Savepoints", "/savepoints"},
		{"/admin", "Users", "/admin/users"},
		{"/audit", "Audit log", "/audit"},
		{"/report", "RPO report", "/report"},
		{"/translate", "Translate offsets", "/translate"},
	} {
		if (path == s.prefix || strings.HasPrefix(path, s.prefix+"/")) && path != s.url {
			links = append(links, views.Link{Text: s.text, URL: s.url})
		}
	}
	return append(links, views.Link{Text: "Overview", URL: "/"})
}
