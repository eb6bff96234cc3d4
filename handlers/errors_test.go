package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/drconsole/drconsole/handlers/form"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
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
		{&failover.AuditRefusedError{Err: errors.New("disk full")}, http.StatusServiceUnavailable},
		{say("not on record", errors.New("disk full"), errNotAudited), http.StatusServiceUnavailable},
		{refused(failover.ErrShuttingDown), http.StatusServiceUnavailable},
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
