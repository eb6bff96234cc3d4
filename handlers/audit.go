package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/views"
)

// auditPageSize is how many records one audit page shows.
const auditPageSize = 50

// auditFilter reads the filter fields shared by the page and the export.
// Times are UTC: "2026-01-02T15:04" (what a datetime-local input sends),
// "2026-01-02" or RFC 3339.
func auditFilter(q url.Values) (storage.AuditFilter, views.AuditForm, error) {
	form := views.AuditForm{Actor: q.Get("actor"), Action: q.Get("action"), Subject: q.Get("subject"),
		Since: q.Get("since"), Until: q.Get("until")}
	f := storage.AuditFilter{Actor: form.Actor, Action: form.Action, Subject: form.Subject}
	for _, t := range []struct {
		name, v string
		ms      *int64
	}{{"since", form.Since, &f.SinceMs}, {"until", form.Until, &f.UntilMs}} {
		if t.v == "" {
			continue
		}
		at, err := parseUTC(t.v)
		if err != nil {
			return f, form, fmt.Errorf("%s: %q is not a time (use 2026-01-02T15:04, UTC)", t.name, t.v)
		}
		*t.ms = at.UnixMilli()
	}
	return f, form, nil
}

func parseUTC(s string) (time.Time, error) {
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02", time.RFC3339} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("bad time %q", s)
}

// filterQuery is the query string of form, for page and export links.
func filterQuery(form views.AuditForm) url.Values {
	q := url.Values{}
	for k, v := range map[string]string{"actor": form.Actor, "action": form.Action, "subject": form.Subject,
		"since": form.Since, "until": form.Until} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return q
}

// AuditPage is GET /audit: the audit log, newest first, filtered and
// paginated ("before" is the id the next page starts below).
func (h *Handlers) AuditPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, form, err := auditFilter(q)
	p := views.AuditPage{Chrome: h.chrome("Audit log"), Form: form}
	p.Actions, _ = h.Store.AuditActions(r.Context())
	if err != nil {
		p.Error = err.Error()
		h.render(w, r, statusFor(unreadable(err)), views.Audit(p))
		return
	}
	if b := q.Get("before"); b != "" {
		if f.AfterID, err = strconv.Atoi(b); err != nil || f.AfterID < 1 {
			h.fail(w, r, badRequest("before: want a record id"))
			return
		}
		p.Paged = true
	}
	f.Limit = auditPageSize + 1
	entries, err := h.Store.AuditEntries(r.Context(), f)
	if err != nil {
		h.fail(w, r, say("cannot read the audit log", err))
		return
	}
	fq := filterQuery(form)
	if len(entries) > auditPageSize {
		entries = entries[:auditPageSize]
		older := url.Values{}
		for k, v := range fq {
			older[k] = slices.Clone(v)
		}
		older.Set("before", strconv.FormatInt(entries[len(entries)-1].ID, 10))
		p.OlderURL = "/audit?" + older.Encode()
	}
	p.Entries = entries
	p.FirstURL = "/audit?" + fq.Encode()
	for _, format := range storage.AuditExportFormats {
		eq := filterQuery(form)
		eq.Set("format", format)
		p.Exports = append(p.Exports, views.AuditLink{Text: format, URL: "/audit/export?" + eq.Encode()})
	}
	h.render(w, r, http.StatusOK, views.Audit(p))
}

// AuditExport is GET /audit/export?format=jsonl|csv with the page's
// filters: every matching record in chain order, as a download.
func (h *Handlers) AuditExport(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	format := q.Get("format")
	if format == "" {
		format = "jsonl"
	}
	if !slices.Contains(storage.AuditExportFormats, format) {
		h.fail(w, r, badRequest("format: want jsonl or csv"))
		return
	}
	f, _, err := auditFilter(q)
	if err != nil {
		h.fail(w, r, unreadable(err))
		return
	}
	ctype := map[string]string{"jsonl": "application/x-ndjson", "csv": "text/csv; charset=utf-8"}[format]
	download(w, ctype, fmt.Sprintf("drconsole-audit-%s.%s", h.now().UTC().Format("20060102T150405Z"), format))
	if _, err := h.Store.ExportAudit(r.Context(), w, f, format); err != nil {
		// Headers are gone; the truncated download is all we can do.
		h.Log.Error("exporting the audit log", "err", err)
	}
}
