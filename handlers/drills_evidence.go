package handlers

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/safefile"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/views"
)

// anchorFileLimit bounds the anchor file a pack reads its newest line
// from: hourly lines for centuries.
const anchorFileLimit = 1 << 30

// DrillEvidence is GET /drills/{run}/evidence.{html,json}, for anyone
// signed in: the drill's evidence pack, put on record first
// (drill.evidence-export, under the run: the pack holds its own export
// record). The JSON is the pack's canonical form; the HTML shows it and
// embeds it verbatim. A drill still running has none (409); a download
// whose record could not be written is not made (503).
func (h *Handlers) DrillEvidence(w http.ResponseWriter, r *http.Request) {
	id, ok := runID(r)
	if !ok {
		h.fail(w, r, badRequest("bad run number in URL"))
		return
	}
	format := "json"
	if strings.HasSuffix(r.URL.Path, ".html") {
		format = "html"
	}
	actor, ctx := h.auditContext(r)
	cfg := h.Runbook.Config
	pack, body, err := audit.New(h.Store).Evidence(ctx, audit.EvidenceRequest{Run: id, Subject: runbook.RunSubject(id), Actor: actor,
		Format: format, AnchorFile: cfg.AuditAnchor.File, AnchorURL: cfg.AuditAnchor.URL != "", OpenAnchor: func() (io.ReadCloser, error) {
			f, _, err := safefile.Open(cfg.AuditAnchor.File, anchorFileLimit)
			if err != nil {
				return nil, safefile.Named(cfg.AuditAnchor.File, err)
			}
			return f, nil
		},
		Objectives: func(flow string) (time.Duration, time.Duration) {
			if f := cfg.Flow(flow); f != nil {
				return f.Objectives.RTO.D(), f.Objectives.RPO.D()
			}
			return 0, 0
		}})
	switch {
	case errors.Is(err, storage.ErrNotFound):
		h.fail(w, r, notFound("drill of run "+strconv.FormatInt(id, 10)))
		return
	case errors.Is(err, audit.ErrDrillRunning):
		h.fail(w, r, say(err.Error(), storage.ErrConflict))
		return
	case errors.Is(err, audit.ErrExportNotRecorded):
		h.fail(w, r, say(audit.ErrExportNotRecorded.Error()+": try again", err, errNotAudited))
		return
	case err != nil:
		h.fail(w, r, say("cannot make the drill's evidence pack", err))
		return
	}
	name := fmt.Sprintf("drconsole-drill-%d-evidence.%s", id, format)
	if format == "json" {
		download(w, "application/json", name)
		w.Write(body)
		return
	}
	var page bytes.Buffer
	if err := views.Evidence(views.EvidencePage{Pack: pack, JSON: string(body), Script: audit.EvidenceScript}).Render(ctx, &page); err != nil {
		h.fail(w, r, say("cannot make the drill's evidence pack", err))
		return
	}
	download(w, "text/html; charset=utf-8", name)
	w.Write(page.Bytes())
}
