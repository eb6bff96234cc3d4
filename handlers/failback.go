package handlers

import (
	"errors"
	"net/http"
	"time"

	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/handlers/form"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/views"
)

// activeSides is every flow's active side for the overview; a side that
// could not be read is logged and left out (the page shows no claim).
func (h *Handlers) activeSides(r *http.Request) []views.ActiveSide {
	var flows []string
	for _, s := range configuredFlows(h.Monitor.Snapshots()) {
		flows = append(flows, s.Flow.Name)
	}
	if h.Failovers == nil { // no runbook served: no claim
		return nil
	}
	out, err := h.Failovers.ActiveSides(r.Context(), flows)
	if err != nil {
		h.Log.Error("reading the active sides of the flows", "err", err)
	}
	vs := make([]views.ActiveSide, len(out))
	for i, a := range out {
		vs[i] = activeSideView(a)
	}
	return vs
}

// activeSide is one flow's active side for its page (zero when unread).
func (h *Handlers) activeSide(r *http.Request, flow string) views.ActiveSide {
	if h.Failovers == nil { // no runbook served: no claim
		return views.ActiveSide{}
	}
	a, err := h.Failovers.ActiveSideOf(r.Context(), flow)
	if err != nil {
		h.Log.Error("reading the active side", "flow", flow, "err", err)
	}
	return activeSideView(a)
}

// LostToDR is GET /flows/{flow}/lost: what the old primary holds beyond
// what reached DR before the failover, per partition.
func (h *Handlers) LostToDR(w http.ResponseWriter, r *http.Request) {
	s := h.flowParam(w, r)
	if s == nil {
		return
	}
	p := views.LostPage{Chrome: h.chrome("Records lost to DR: " + s.Flow.Name), Flow: s.Flow.Name, Now: h.now(), CanExport: actorMayOperate(r)}
	l, err := h.Failovers.LostToDR(r.Context(), s.Flow.Name)
	switch {
	case errors.Is(err, runbook.ErrPrimaryActive), errors.Is(err, runbook.ErrNotMM2):
		p.Note = err.Error()
	case err != nil:
		h.fail(w, r, refused(err))
		return
	default:
		p.Lost = lostView(l, p.Now)
	}
	h.render(w, r, http.StatusOK, views.Lost(p))
}

// LostExport is POST /flows/{flow}/lost/export: the records lost to DR as
// JSON lines, streamed; the runbook checks the role and audits the export
// before the first byte, and its last line says whether it is complete.
func (h *Handlers) LostExport(w http.ResponseWriter, r *http.Request) {
	s := h.flowParam(w, r)
	if s == nil {
		return
	}
	f := form.ReadLostExport(r)
	if err := f.Validate(); err != nil {
		h.fail(w, r, unreadable(err))
		return
	}
	x, err := h.Failovers.PrepareLostExport(r.Context(), actor(r), s.Flow.Name, f.Only)
	if err != nil {
		h.fail(w, r, refused(err))
		return
	}
	download(w, "application/x-ndjson", x.Filename())
	if err := x.WriteTo(r.Context(), movingDeadline{w: w, rc: http.NewResponseController(w)}); err != nil {
		// Headers are gone; the end line says what went wrong.
		h.Log.Error("exporting the records lost to DR", "flow", s.Flow.Name, "err", err)
	}
}

// movingDeadline lets a long export outlive the server's write timeout
// while each write still has one: a client that stops reading is dropped.
type movingDeadline struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func (m movingDeadline) Write(b []byte) (int, error) {
	_ = m.rc.SetWriteDeadline(time.Now().Add(time.Minute))
	return m.w.Write(b)
}

// configuredFlows leaves out the failbacks' reverse flows: no plan,
// savepoint or active side belongs to them; they are the flows they
// reverse seen the other way.
func configuredFlows(snaps []*flowstate.FlowSnapshot) []*flowstate.FlowSnapshot {
	out := snaps[:0:0]
	for _, s := range snaps {
		if s.Flow.ReverseOf == "" {
			out = append(out, s)
		}
	}
	return out
}
