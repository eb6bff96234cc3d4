package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/model"
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
// paged by record id, so a page stays the same while records are added:
// "before" lists the records below an id (older), "after" those above it
// (newer).
func (h *Handlers) AuditPage(w http.ResponseWriter, r *http.Request) {
	h.renderAudit(w, r, http.StatusOK, nil)
}

func (h *Handlers) renderAudit(w http.ResponseWriter, r *http.Request, status int, verified *views.AuditVerified) {
	q := r.URL.Query()
	f, form, err := auditFilter(q)
	p := views.AuditPage{Chrome: h.chrome("Audit log"), Form: form, Verified: verified}
	p.Actions, _ = h.Store.AuditActions(r.Context())
	if err != nil {
		p.Error = err.Error()
		h.render(w, r, statusFor(unreadable(err)), views.Audit(p))
		return
	}
	before, after, err := auditCursor(q)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	entries, newer, older, err := h.auditEntries(r, f, before, after)
	if err != nil {
		h.fail(w, r, say("cannot read the audit log", err))
		return
	}
	fq := filterQuery(form)
	at := func(k string, id int64) string {
		u := url.Values{}
		for k, v := range fq {
			u[k] = slices.Clone(v)
		}
		u.Set(k, strconv.FormatInt(id, 10))
		return "/audit?" + u.Encode()
	}
	if older {
		p.OlderURL = at("before", entries[len(entries)-1].ID)
	}
	if newer && len(entries) > 0 {
		p.NewerURL = at("after", entries[0].ID)
	}
	p.Paged = newer
	admin := identity.UserFrom(r.Context()).AtLeast(model.RoleAdmin)
	for _, e := range entries {
		row := views.AuditRow{AuditEntry: e, SubjectURL: subjectURL(e.Subject, admin)}
		row.Fields, row.Readable = views.AuditDetails(e.Details)
		p.Entries = append(p.Entries, row)
	}
	p.FirstURL = "/audit?" + fq.Encode()
	for _, format := range storage.AuditExportFormats {
		eq := filterQuery(form)
		eq.Set("format", format)
		p.Exports = append(p.Exports, views.Link{Text: format, URL: "/audit/export?" + eq.Encode()})
	}
	h.render(w, r, status, views.Audit(p))
}

// auditCursor reads "before" or "after", a record id (0: not given).
func auditCursor(q url.Values) (before, after int, err error) {
	for _, c := range []struct {
		name string
		id   *int
	}{{"before", &before}, {"after", &after}} {
		if v := q.Get(c.name); v != "" {
			if *c.id, err = strconv.Atoi(v); err != nil || *c.id < 1 {
				return 0, 0, badRequest(c.name + ": want a record id")
			}
		}
	}
	if before > 0 && after > 0 {
		return 0, 0, badRequest("give before or after, not both")
	}
	return before, after, nil
}

// auditEntries is one page of records matching f, newest first: below
// before, above after (the newest page when fewer than a page are above
// it), or the newest; and whether newer and older records match too.
func (h *Handlers) auditEntries(r *http.Request, f storage.AuditFilter, before, after int) (entries []model.AuditEntry, newer, older bool, err error) {
	f.Limit = auditPageSize + 1
	if after > 0 {
		f.AfterID, f.Oldest = after, true
		if entries, err = h.Store.AuditEntries(r.Context(), f); err != nil {
			return nil, false, false, err
		}
		if len(entries) > auditPageSize {
			entries = entries[:auditPageSize]
			slices.Reverse(entries)
			return entries, true, true, nil
		}
		f.AfterID, f.Oldest = 0, false // the newest page
	} else if before > 0 {
		f.AfterID = before
		newer = true
	}
	if entries, err = h.Store.AuditEntries(r.Context(), f); err != nil {
		return nil, false, false, err
	}
	if len(entries) > auditPageSize {
		entries, older = entries[:auditPageSize], true
	}
	return entries, newer, older, nil
}

// subjectURL is the page of what a record is about: its failover run,
// savepoint or flow, or for an admin the users page; "" for the rest.
func subjectURL(subject string, admin bool) string {
	kind, rest, _ := strings.Cut(subject, ":")
	id, err := strconv.ParseInt(rest, 10, 64)
	switch {
	case kind == "failover-run" && err == nil && id > 0:
		return views.RunPath(id)
	case kind == "savepoint" && err == nil && id > 0:
		return "/savepoints/" + rest
	case kind == "flow" && rest != "":
		return views.FlowPath(rest)
	case kind == "user" && admin && model.ValidName(rest):
		return "/admin/users"
	}
	return ""
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
