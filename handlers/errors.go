package handlers

import (
	"errors"
	"net/http"

	"github.com/drconsole/drconsole/handlers/form"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/storage"
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
	var auditRefused *failover.AuditRefusedError
	switch {
	case err == nil:
		return http.StatusOK
	case errors.Is(err, runbook.ErrRole), errors.Is(err, runbook.ErrSelfApproval), errors.Is(err, failover.ErrStopNeedsRunbook):
		return http.StatusForbidden
	case errors.Is(err, storage.ErrNotFound), errors.Is(err, storage.ErrNoIncident), errors.Is(err, storage.ErrUnknownUser):
		return http.StatusNotFound
	case errors.Is(err, storage.ErrConflict), errors.Is(err, storage.ErrUserExists):
		return http.StatusConflict
	case errors.As(err, &tooBig):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, errBadRequest), errors.Is(err, mm2.ErrTooManyOffsets):
		return http.StatusBadRequest
	case errors.As(err, &auditRefused), errors.Is(err, errNotAudited), errors.Is(err, failover.ErrShuttingDown):
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

// fail answers err as plain text with its status; the console's own
// failures are logged with their cause, which the page does not show.
func (h *Handlers) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := statusFor(err)
	if status >= 500 && h.Log != nil {
		cause := err
		if s, ok := err.(*shown); ok {
			cause = errors.Join(s.errs...)
		}
		h.Log.Error("request failed", "path", r.URL.Path, "status", status, "err", err, "cause", cause)
	}
	http.Error(w, err.Error(), status)
}
