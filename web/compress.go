package web

import (
	"cmp"
	"compress/gzip"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/drconsole/drconsole/handlers"
)

// gzipMinSize is the smallest body worth compressing: below about one
// packet, gzip saves no round trip and costs CPU.
const gzipMinSize = 1400

// gzipLevel trades size for CPU on a console that renders every 2 s per
// tab: level 1 still shrinks HTML tables about 8x.
const gzipLevel = gzip.BestSpeed

var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(io.Discard, gzipLevel)
	return w
}}

// compressHTML gzips HTML pages and fragments for clients that accept it.
// Left alone: event streams (they flush event by event), bodies under
// gzipMinSize, HEAD requests, anything not text/html, and responses that
// already carry a Content-Encoding (/metrics and the cached pages,
// handlers/pagecache.go, negotiate their own with handlers.AcceptsGzip).
func compressHTML(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead || !handlers.AcceptsGzip(r.Header.Get("Accept-Encoding")) ||
			strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			next.ServeHTTP(w, r)
			return
		}
		gw := &gzipResponse{ResponseWriter: w}
		defer gw.finish()
		next.ServeHTTP(gw, r)
	})
}

// gzipResponse holds the first gzipMinSize bytes back to decide: a larger
// HTML body goes out compressed, anything else as written.
type gzipResponse struct {
	http.ResponseWriter
	status  int
	buf     []byte
	decided bool
	gz      *gzip.Writer // nil: passing through
}

func (g *gzipResponse) WriteHeader(status int) {
	if g.status == 0 {
		g.status = status
	}
	if !g.compressible() {
		g.passThrough()
	}
}

// compressible: a body may follow and it is HTML nobody encoded yet.
func (g *gzipResponse) compressible() bool {
	h := g.Header()
	if g.status == http.StatusNoContent || g.status == http.StatusNotModified || (g.status >= 100 && g.status < 200) ||
		h.Get("Content-Encoding") != "" {
		return false
	}
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return mt == "text/html"
}

func (g *gzipResponse) Write(b []byte) (int, error) {
	if g.status == 0 {
		g.WriteHeader(http.StatusOK)
	}
	switch {
	case g.decided && g.gz == nil:
		return g.ResponseWriter.Write(b)
	case g.decided:
		return g.gz.Write(b)
	}
	g.buf = append(g.buf, b...)
	if len(g.buf) >= gzipMinSize {
		if err := g.startGzip(); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

// passThrough sends the status and whatever was held, uncompressed.
func (g *gzipResponse) passThrough() {
	if g.decided {
		return
	}
	g.decided = true
	g.ResponseWriter.WriteHeader(cmp.Or(g.status, http.StatusOK))
	if len(g.buf) > 0 {
		g.ResponseWriter.Write(g.buf)
		g.buf = nil
	}
}

func (g *gzipResponse) startGzip() error {
	g.decided = true
	h := g.Header()
	h.Set("Content-Encoding", "gzip")
	h.Add("Vary", "Accept-Encoding")
	h.Del("Content-Length")
	g.ResponseWriter.WriteHeader(g.status)
	g.gz = gzipWriters.Get().(*gzip.Writer)
	g.gz.Reset(g.ResponseWriter)
	_, err := g.gz.Write(g.buf)
	g.buf = nil
	return err
}

// Flush sends what is held: compressed if gzip started, else as is.
func (g *gzipResponse) Flush() {
	if g.gz != nil {
		g.gz.Flush()
	} else {
		g.passThrough()
	}
	if f, ok := g.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (g *gzipResponse) Unwrap() http.ResponseWriter { return g.ResponseWriter }

// finish ends the response: closes the gzip stream (returning the writer
// to the pool) or sends a small body as it was written.
func (g *gzipResponse) finish() {
	if g.gz != nil {
		g.gz.Close()
		g.gz.Reset(io.Discard)
		gzipWriters.Put(g.gz)
		g.gz = nil
		return
	}
	if g.status != 0 || len(g.buf) > 0 {
		g.passThrough()
	}
}
