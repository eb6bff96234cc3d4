package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/handlers/form"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/views"
)

// SavepointRegister is POST /savepoints/register: add a savepoint by path
// (inside a configured savepoint directory) and read its offsets.
func (h *Handlers) SavepointRegister(w http.ResponseWriter, r *http.Request) {
	f := form.NewSavepointRegister(r)
	path := f.Path
	o := savepointsOpts{flow: f.Flow, registerPath: path}
	if err := f.Validate(); err != nil {
		o.regErr = err.Error()
		h.renderSavepoints(w, r, statusFor(err), o)
		return
	}
	// Audit first: a registration that cannot be put on record does not
	// happen. The outcome (the catalog id) is recorded after it.
	if err := h.Audit(r, audit.SavepointRegStart, "savepoint-path:"+path, map[string]any{"path": path}); err != nil {
		o.regErr = "the audit record could not be written, so nothing was registered: " + err.Error()
		h.renderSavepoints(w, r, statusFor(say(o.regErr, err, errNotAudited)), o)
		return
	}
	id, err := h.Catalog.Register(r.Context(), path)
	if err != nil && !errors.Is(err, model.ErrOffsetsUnreadable) {
		o.regErr = err.Error()
		h.renderSavepoints(w, r, statusFor(refused(err)), o)
		return
	}
	details := map[string]any{"path": path, "savepoint_id": id, "offsets_read": err == nil}
	if err != nil {
		details["error"] = err.Error()
	}
	if aerr := h.Audit(r, audit.SavepointRegister, "savepoint:"+strconv.FormatInt(id, 10), details); aerr != nil {
		h.Log.Error("savepoint registered, but its outcome is not in the audit log", "savepoint", id, "err", aerr)
		o.regErr = fmt.Sprintf("registered as #%d (its registration is on record), but the outcome could not be written to the audit log: %v", id, aerr)
		h.renderSavepoints(w, r, statusFor(say(o.regErr, aerr, errNotAudited)), o)
		return
	}
	target := views.SavepointURL(id)
	if f.Flow != "" {
		target += "?flow=" + url.QueryEscape(f.Flow)
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}
