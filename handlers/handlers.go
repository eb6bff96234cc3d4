// Package handlers holds the console's thin HTTP handlers: read the
// request (handlers/form), ask one service (the monitor and the savepoint
// catalog through the interfaces of services.go, the runbook, the worker,
// storage), render a view. They hold no
// state but the per-refresh page data of pagedata.go (rendered pages
// included, pagecache.go), and start no goroutines (long work belongs to failover.Worker),
// judge nothing (policy is in catalog and failover), and leave the choice
// of an error's HTTP status to statusFor (errors.go). They import neither
// Kafka clients nor the sandbox: DemoControls is wired by main.
package handlers

import (
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/views"
)

// DemoControls is the sandbox's control surface (demo.Sandbox); nil when
// the console watches real clusters.
type DemoControls interface {
	SetMirrorRate(recordsPerSecond int)
	SetMirrorRunning(running bool)
	SetPrimaryDown(down bool)
	// SetConsumersRunning stops (false) or starts (true) the primary's
	// consumer groups, and returns once they have.
	SetConsumersRunning(running bool) error
	State() views.DemoState
}

// Handlers serves the console's pages.
type Handlers struct {
	Monitor MonitorService
	Store   *storage.Store
	Log     *slog.Logger
	Version string
	Demo    DemoControls
	// Auth is how people sign in (handlers/auth.go); Limiter slows
	// password guessing on POST /login (web.Router sets one if nil).
	Auth    config.Auth
	Limiter LoginLimiter
	// StartLimiter bounds single sign-ons started per source (web.Router
	// sets one if nil); Failures audits refused sign-ins, counted per
	// source (web.Router sets one if nil, and web.Serve flushes it).
	StartLimiter LoginLimiter
	Failures     *identity.SignInFailures
	// Metrics shapes /metrics (per-partition series or not).
	Metrics config.Metrics
	// OIDC signs people in at the provider in auth mode oidc; nil
	// otherwise.
	OIDC *identity.OIDC
	// Runbook runs failovers, drills and failbacks; nil serves no
	// failover pages.
	Runbook *runbook.Runbook
	// Catalog is the savepoint catalog; nil serves no savepoint pages.
	Catalog CatalogService
	// Failovers answers the pages' questions of the plan kinds; cli
	// hands in failback.Book of Runbook. Required with Runbook.
	Failovers Failovers
	// Worker runs failover steps and savepoint triggers past the request
	// that started them; cli builds it (failover.Worker) and shuts it
	// down. Required with Runbook.
	Worker Jobs
	// Now is the clock; replaced in tests.
	Now func() time.Time

	pagesOnce sync.Once
	pages     *pageData
}

// SparkWindow is how much RPO history the overview and flow pages show.
const SparkWindow = 6 * time.Hour

func (h *Handlers) chrome(title string) views.Chrome {
	return views.Chrome{Title: title, Demo: h.Demo != nil, Version: h.Version}
}

func (h *Handlers) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// render writes a component, or a 500 when rendering fails.
func (h *Handlers) render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if err := c.Render(r.Context(), w); err != nil {
		h.Log.Error("rendering page", "path", r.URL.Path, "err", err)
	}
}

// flowParam resolves the {flow} URL parameter.
func (h *Handlers) flowParam(w http.ResponseWriter, r *http.Request) *flowstate.FlowSnapshot {
	return h.flowParamWith(w, r, h.fail)
}

// flowParamWith is flowParam answering a miss with fail.
func (h *Handlers) flowParamWith(w http.ResponseWriter, r *http.Request, fail func(http.ResponseWriter, *http.Request, error)) *flowstate.FlowSnapshot {
	name, err := url.PathUnescape(chi.URLParam(r, "flow"))
	if err != nil {
		fail(w, r, badRequest("bad flow name in URL"))
		return nil
	}
	s := h.Monitor.Snapshot(name)
	if s == nil {
		fail(w, r, notFound("flow "+name))
	}
	return s
}

// lagAxis is a lag/RPO chart axis with the configured warning and
// critical lag drawn on it.
func (h *Handlers) lagAxis() views.Axis {
	th := h.Monitor.Thresholds()
	return views.LagAxis(views.Threshold{Name: "warning", Value: float64(th.Warning.Lag.D().Milliseconds())},
		views.Threshold{Name: "critical", Value: float64(th.Critical.Lag.D().Milliseconds())})
}

// Overview is GET /: rendered once per key (pagecache.go).
func (h *Handlers) Overview(w http.ResponseWriter, r *http.Request) {
	now := h.now()
	snaps := h.Monitor.Snapshots()
	h.servePage(w, r, h.pageKey(r, "overview", now, snaps...), now, func(r *http.Request) (templ.Component, bool) {
		p := views.OverviewPage{Chrome: h.chrome("Overview"), Now: now, Window: SparkWindow, CanAck: actorMayOperate(r)}
		p.Losses, p.LossUnknown = h.openLosses(r)
		p.Active = h.activeSides(r)
		for _, s := range snaps {
			p.Cards = append(p.Cards, h.overviewCard(r.Context(), s, now))
		}
		return views.Overview(p), !p.LossUnknown
	})
}

// Healthz is GET /healthz: the process serves requests.
func (h *Handlers) Healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write([]byte("ok\n"))
}

// Readyz is GET /readyz: the database answers and every flow has been
// evaluated once. An unreachable Kafka cluster does not make the console
// unready: showing that is its job.
func (h *Handlers) Readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if err := h.Store.Ping(r.Context()); err != nil {
		http.Error(w, "database: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	if !h.Monitor.Ready() {
		http.Error(w, "first lag refresh not finished", http.StatusServiceUnavailable)
		return
	}
	w.Write([]byte("ready\n"))
}
