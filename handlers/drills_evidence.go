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
	"github.com/drconsole/drconsole/handlers/form"
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

// DrillEvidenceVerify is POST /drills/evidence/verify, for anyone signed
// in: the check of `drconsole audit verify --evidence` on an uploaded
// pack against the console's database, shown on the drills page in the
// command's words and recorded as drill.evidence-verify with what it
// found. A check whose record could not be written still shows what it
// found, with a 503 saying it is not on record.
func (h *Handlers) DrillEvidenceVerify(w http.ResponseWriter, r *http.Request) {
	data, err := form.ReadEvidence(w, r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	shown := &views.EvidenceVerified{}
	subject := "evidence-pack"
	details := map[string]any{}
	p, err := audit.ParseEvidence(data)
	if err == nil {
		subject, details["run"] = runbook.RunSubject(p.Run), p.Run
		var c audit.EvidenceCheck
		c, err = audit.VerifyEvidence(r.Context(), h.Store, p, subject)
		var problem *audit.EvidenceProblem
		if err != nil && !errors.As(err, &problem) {
			h.fail(w, r, say("cannot read the audit log to check the pack", err))
			return
		}
		if err == nil {
			shown.OK, shown.Lines = true, c.Lines(p)
		}
	}
	if err != nil {
		shown.Problem = err.Error()
		details["problem"] = shown.Problem
	}
	details["intact"] = shown.OK
	status := http.StatusOK
	if err := h.Audit(r, audit.DrillEvidenceVerify, subject, details); err != nil {
		status = statusFor(errNotAudited)
		shown.NotRecorded = "This check could not be written to the audit log (the console's log has why): what it found is above, but it is not on record. Try again."
	}
	h.renderDrills(w, r, status, false, shown)
}
