package handlers

import (
	"net/http"
	"strconv"

	"github.com/drconsole/drconsole/views"
)

// DemoPanel is GET /demo: the sandbox control panel.
func (h *Handlers) DemoPanel(w http.ResponseWriter, r *http.Request) {
	h.renderDemo(w, r, http.StatusOK, "")
}

func (h *Handlers) renderDemo(w http.ResponseWriter, r *http.Request, status int, flash string) {
	if h.Demo == nil {
		h.fail(w, r, notFound("sandbox controls (only in `drconsole demo`)"))
		return
	}
	h.render(w, r, status, views.Demo(views.DemoPage{Chrome: h.chrome("Sandbox controls"), Now: h.now(),
		State: h.Demo.State(), Flash: flash}))
}

// DemoMirrorRate is POST /demo/mirror-rate (rate=records per second, 0 unlimited).
func (h *Handlers) DemoMirrorRate(w http.ResponseWriter, r *http.Request) {
	if h.Demo == nil {
		h.fail(w, r, notFound("sandbox controls"))
		return
	}
	rate, err := strconv.Atoi(r.PostFormValue("rate"))
	if err != nil || rate < 0 || rate > 1_000_000 {
		h.renderDemo(w, r, http.StatusBadRequest, "rate must be a whole number of records per second from 0 (unlimited) to 1000000")
		return
	}
	h.Demo.SetMirrorRate(rate)
	msg := "Mirror rate set to " + strconv.Itoa(rate) + " records/s."
	if rate == 0 {
		msg = "Mirror rate unlimited."
	}
	h.Log.Info("demo control", "mirror_rate", rate)
	h.renderDemo(w, r, http.StatusOK, msg)
}

// DemoMirror is POST /demo/mirror (running=true|false).
func (h *Handlers) DemoMirror(w http.ResponseWriter, r *http.Request) {
	running, ok := h.demoSwitch(w, r, "running")
	if !ok {
		return
	}
	h.Demo.SetMirrorRunning(running)
	h.Log.Info("demo control", "mirror_running", running)
	msg := "Mirror stopped: heartbeats stop reaching DR, lag grows."
	if running {
		msg = "Mirror started."
	}
	h.renderDemo(w, r, http.StatusOK, msg)
}

// DemoPrimary is POST /demo/primary (down=true|false).
func (h *Handlers) DemoPrimary(w http.ResponseWriter, r *http.Request) {
	down, ok := h.demoSwitch(w, r, "down")
	if !ok {
		return
	}
	h.Demo.SetPrimaryDown(down)
	h.Log.Info("demo control", "primary_down", down)
	msg := "Primary is down: it refuses every request."
	if !down {
		msg = "Primary is back."
	}
	h.renderDemo(w, r, http.StatusOK, msg)
}

// DemoConsumers is POST /demo/consumers (running=true|false): the primary's
// consumer groups stop (their members commit and leave, the groups are
// empty, as when the applications moved to DR) or start again from their
// committed offsets. A failback moves the groups back only while they are
// empty on the primary.
func (h *Handlers) DemoConsumers(w http.ResponseWriter, r *http.Request) {
	running, ok := h.demoSwitch(w, r, "running")
	if !ok {
		return
	}
	if err := h.Demo.SetConsumersRunning(running); err != nil {
		h.Log.Warn("demo control", "consumers_running", running, "err", err)
		h.renderDemo(w, r, http.StatusInternalServerError, "The primary's consumers did not start: "+err.Error())
		return
	}
	h.Log.Info("demo control", "consumers_running", running)
	msg := "The primary's consumers stopped: their groups are empty, as when the applications run in DR."
	if running {
		msg = "The primary's consumers started again from their groups' committed offsets."
	}
	h.renderDemo(w, r, http.StatusOK, msg)
}

// demoSwitch reads the true-or-false field of a sandbox control's form;
// ok is false when it has answered the request already (no sandbox, or
// a value that is neither).
func (h *Handlers) demoSwitch(w http.ResponseWriter, r *http.Request, field string) (on, ok bool) {
	if h.Demo == nil {
		h.fail(w, r, notFound("sandbox controls"))
		return false, false
	}
	on, err := strconv.ParseBool(r.PostFormValue(field))
	if err != nil {
		h.renderDemo(w, r, http.StatusBadRequest, field+" must be true or false")
		return false, false
	}
	return on, true
}
