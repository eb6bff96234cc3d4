package handlers

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/handlers/form"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/views"
)

// lossHistoryRows is how many incidents the flow page lists.
const lossHistoryRows = 100

// openLosses returns every flow's unacknowledged losses for the overview,
// and whether they could not be read (then the page says so).
func (h *Handlers) openLosses(r *http.Request) ([]model.LossIncident, bool) {
	xs, err := h.Store.LossIncidents(r.Context(), "", true, lossHistoryRows)
	if err != nil {
		h.Log.Error("reading data loss incidents", "err", err)
	}
	return xs, err != nil
}

// LossAck is POST /flows/{flow}/loss/{id}/ack: an operator acknowledges a
// data loss, which then leaves the overview (the flow page keeps it). The
// audit record is written first: no audit, no acknowledgement.
func (h *Handlers) LossAck(w http.ResponseWriter, r *http.Request) {
	f := form.ReadLossAck(r)
	if !f.FlowOK() || h.Monitor.Snapshot(f.Flow) == nil {
		h.fail(w, r, notFound("flow"))
		return
	}
	if err := f.Validate(); err != nil {
		h.fail(w, r, unreadable(err))
		return
	}
	flow, id := f.Flow, f.ID
	inc, err := h.Store.OpenLossIncident(r.Context(), flow, id)
	if err != nil {
		h.fail(w, r, lossErr(err, flow, id, "reading loss incidents failed; try again: "))
		return
	}
	if err := h.Audit(r, audit.LossAcknowledge, "flow:"+flow, map[string]any{"incident": inc.ID, "topic": inc.Topic,
		"partition": inc.Partition, "first_offset": inc.FirstOffset, "last_offset": inc.LastOffset, "lost": inc.Lost}); err != nil {
		h.fail(w, r, say("the audit log could not be written, so nothing was acknowledged; try again", err))
		return
	}
	actor := "anonymous"
	if u := identity.UserFrom(r.Context()); u != nil {
		actor = u.Name
	}
	if err := h.Store.AckLossIncident(r.Context(), flow, id, actor, h.now().UnixMilli()); err != nil {
		h.fail(w, r, lossErr(err, flow, id, "acknowledging failed; try again: "))
		return
	}
	http.Redirect(w, r, views.FlowPath(flow), http.StatusSeeOther)
}

// lossErr words a failure to find or acknowledge incident id: gone (or
// already acknowledged), else what failed.
func lossErr(err error, flow string, id int64, failed string) error {
	if errors.Is(err, storage.ErrNoIncident) {
		return say("unacknowledged loss incident "+strconv.FormatInt(id, 10)+" of flow "+flow+" not found", err)
	}
	return say(failed+err.Error(), err)
}
