package form

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/go-chi/chi/v5"
)

// LossAck is POST /flows/{flow}/loss/{id}/ack: which data loss incident
// of which flow an operator acknowledges (both in the URL).
type LossAck struct {
	Flow    string
	ID      int64
	badFlow bool
	badID   bool
}

// ReadLossAck reads the acknowledgement's URL.
func ReadLossAck(r *http.Request) LossAck {
	var f LossAck
	var err error
	f.Flow, err = url.PathUnescape(chi.URLParam(r, "flow"))
	f.badFlow = err != nil
	f.ID, err = strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	f.badID = err != nil
	return f
}

// FlowOK reports whether the flow name could be read (one that cannot
// names no flow).
func (f LossAck) FlowOK() bool { return !f.badFlow }

// Validate checks the incident id.
func (f LossAck) Validate() error {
	if f.badID {
		return Errors{"id": "bad incident id in URL"}
	}
	return nil
}
