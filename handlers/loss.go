package handlers

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/views"
)

// lossHistoryRows is how many incidents the flow page lists.
const lossHistoryRows = 100

// openLosses returns every flow's unacknowledged losses for the overview,
// and whether they could not be read (then the page says so).
func (h *Handlers) openLosses(r *http.Request) ([]storage.LossIncident, bool) {
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
	flow, err := url.PathUnescape(chi.URLParam(r, "flow"))
	if err != nil || h.Monitor.Snapshot(flow) == nil {
		h.notFound(w, r, "flow")
		return
	}
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil {
		http.Error(w, "bad incident id in URL", http.StatusBadRequest)
		return
	}
	inc, err := h.Store.OpenLossIncident(r.Context(), flow, id)
	if errors.Is(err, storage.ErrNoIncident) {
		h.notFound(w, r, "unacknowledged loss incident "+strconv.FormatInt(id, 10)+" of flow "+flow)
		return
	}
	if err != nil {
		http.Error(w, "reading loss incidents failed; try again: "+err.Error(), http.StatusInternalServerError)
		return
	}
	if err := h.Audit(r, "loss.acknowledge", "flow:"+flow, map[string]any{"incident": inc.ID, "topic": inc.Topic,
		"partition": inc.Partition, "first_offset": inc.FirstOffset, "last_offset": inc.LastOffset, "lost": inc.Lost}); err != nil {
		http.Error(w, "the audit log could not be written, so nothing was acknowledged; try again", http.StatusInternalServerError)
		return
	}
	actor := "anonymous"
	if u := identity.UserFrom(r.Context()); u != nil {
		actor = u.Name
	}
	err = h.Store.AckLossIncident(r.Context(), flow, id, actor, h.now().UnixMilli())
	if errors.Is(err, storage.ErrNoIncident) {
		h.notFound(w, r, "unacknowledged loss incident "+strconv.FormatInt(id, 10)+" of flow "+flow)
		return
	}
	if err != nil {
		http.Error(w, "acknowledging failed; try again: "+err.Error(), http.StatusInternalServerError)
		return
	}
	http.Redirect(w, r, views.FlowPath(flow), http.StatusSeeOther)
}
