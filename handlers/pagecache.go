package handlers

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"

	"github.com/drconsole/drconsole/flowstate"
	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/pages"
)

// The overview, flow and topic pages (and the flow and topic pages' 2 s
// polls, which fetch the same URL and keep #live) are rendered once per
// key and served from pages.Rendered: a key names what the bytes depend
// on, and the second, so a held page is at most a second behind a fresh
// render (its ages too) and never behind the viewer's own changes. The
// ETag is a hash of the key, so a poll whose page has not changed is a
// 304 without rendering.

// Bounds of the rendered-page cache: a flow page of 100 topics is about
// 56 kB, 15 kB gzipped, so 48 of them fit in 4 MB; and 48 distinct
// listings in one second are far more than the people on a DR console
// look at.
const (
	renderedMaxEntries = 48
	renderedMaxBytes   = 4 << 20
)

// pageKey is what a cached page's bytes depend on. page names the handler
// (two handlers never share a key); snaps are the flows it shows.
func (h *Handlers) pageKey(r *http.Request, page string, now time.Time, snaps ...*flowstate.FlowSnapshot) string {
	pd := h.pageData()
	var b strings.Builder
	b.WriteString(page)
	// The route as escaped (a flow named "a/topics/b" is not topic b of
	// flow a) and the whole query, which the listing (filter, sort, page)
	// is read from; a junk parameter costs a miss, never a wrong page.
	// HX-Request is not in it: a poll gets the same whole page (and keeps
	// #live with hx-select), so the handlers never branch on it.
	b.WriteString("\x00" + r.URL.EscapedPath() + "?" + r.URL.RawQuery)
	// The viewer as the layout shows them (name, role, and a sign-out
	// button unless a proxy signed them in) and as the role decides the
	// ack buttons. Nothing else is per person: cross-origin protection
	// needs no token in the page, and these pages show no flash messages.
	if u := identity.UserFrom(r.Context()); u != nil {
		b.WriteString("\x00" + strconv.Quote(u.Name) + " " + string(u.Role) + " " + strconv.FormatBool(u.Proxy))
	}
	// Each flow's snapshot (one per refresh): its figures, and the losses
	// its refresh stored before publishing it. What ingestion records
	// between refreshes (an incarnation) shows within the second, below.
	for _, s := range snaps {
		b.WriteString("\x00" + strconv.FormatUint(pd.gens.Of(s.Flow.Name, s), 36))
	}
	// Every state-changing request through the console (an acknowledged
	// loss): its operator sees the result on the very next GET.
	b.WriteString("\x00" + strconv.FormatUint(pd.changes.Load(), 36))
	// The second: pages print ages ("3 s ago"), and whatever else changes
	// without a refresh or a request (a loss recorded between refreshes)
	// shows within it.
	b.WriteString("\x00" + strconv.FormatInt(now.Unix(), 36))
	return b.String()
}

// StateChanged tells the page cache that a request may have changed what
// pages show (web counts every state-changing request).
func (h *Handlers) StateChanged() { h.pageData().changes.Add(1) }

// servePage answers with key's page, rendering view on a miss: once per
// key however many ask at once. view's keep is false when a read failed
// (the page says "unknown"): such a page is served, not held. view gets r
// without its cancellation: the page is rendered for everyone waiting for
// it, so the asker's leaving must not cut its reads short.
func (h *Handlers) servePage(w http.ResponseWriter, r *http.Request, key string, now time.Time, view func(*http.Request) (c templ.Component, keep bool)) {
	gz := AcceptsGzip(r.Header.Get("Accept-Encoding"))
	enc := ""
	if gz {
		enc = "gzip"
	}
	etag := pages.ETag(key, enc)
	hd := w.Header()
	hd.Add("Vary", "Accept-Encoding")
	// no-cache, not no-store: the browser keeps the page but asks before
	// showing it again (htmx's polls too), and a 304 answers.
	hd.Set("Cache-Control", "no-cache, private")
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		hd.Set("ETag", etag)
		w.WriteHeader(http.StatusNotModified)
		return
	}
	rd := &h.pageData().rendered
	p, err := rd.Get(r.Context(), key, now.Unix(), func() ([]byte, bool, error) {
		r := r.WithContext(context.WithoutCancel(r.Context()))
		c, keep := view(r)
		var buf bytes.Buffer
		err := c.Render(r.Context(), &buf)
		return buf.Bytes(), keep, err
	})
	if err != nil && r.Context().Err() != nil {
		return // the client left while waiting for the render
	}
	if err != nil {
		hd.Set("Cache-Control", "no-store")
		h.fail(w, r, say("rendering the page failed", err))
		return
	}
	body := p.Body
	if gz {
		body = rd.Gzip(p)
		hd.Set("Content-Encoding", "gzip") // web's compressHTML leaves it alone
	}
	hd.Set("ETag", etag)
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

// etagMatches: If-None-Match names etag (weakly or not) or is "*".
func etagMatches(inm, etag string) bool {
	return strings.TrimSpace(inm) == "*" || inm != "" && strings.Contains(inm, etag)
}
