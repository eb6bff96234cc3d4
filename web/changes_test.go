package web

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// countingRecorder notes the change count when the response starts.
type countingRecorder struct {
	*httptest.ResponseRecorder
	count     *int
	started   bool
	atHeaders int
}

func (c *countingRecorder) WriteHeader(status int) {
	if !c.started {
		c.started, c.atHeaders = true, *c.count
	}
	c.ResponseRecorder.WriteHeader(status)
}

func (c *countingRecorder) Write(b []byte) (int, error) {
	c.WriteHeader(http.StatusOK)
	return c.ResponseRecorder.Write(b)
}

// Every state-changing request is counted before its answer leaves (so
// the page its client asks for next is rendered anew); reads are not.
func TestCountChanges(t *testing.T) {
	for _, tc := range []struct {
		method string
		write  func(http.ResponseWriter, *http.Request)
		counts bool
	}{
		{http.MethodPost, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/flows/x", http.StatusSeeOther) }, true},
		{http.MethodPost, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "refused") }, true},
		{http.MethodDelete, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }, true},
		{http.MethodGet, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "page") }, false},
		{http.MethodHead, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }, false},
	} {
		n := 0
		h := countChanges(func() { n++ })(http.HandlerFunc(tc.write))
		rec := &countingRecorder{ResponseRecorder: httptest.NewRecorder(), count: &n}
		h.ServeHTTP(rec, httptest.NewRequest(tc.method, "/", nil))
		if tc.counts && (rec.atHeaders == 0 || n == 0) || !tc.counts && n != 0 {
			t.Errorf("%s: counted %d when the answer started, %d in all; want counted: %v", tc.method, rec.atHeaders, n, tc.counts)
		}
	}
}

// A page that arrives gzipped already (handlers/pagecache.go) passes
// compressHTML untouched: one gzip layer, its own length.
func TestGzipLeavesEncodedPagesAlone(t *testing.T) {
	// Random enough that its gzip is over gzipMinSize.
	rnd := rand.New(rand.NewPCG(1, 2))
	var page strings.Builder
	for range 800 {
		fmt.Fprintf(&page, "<tr><td>t-%08x</td></tr>", rnd.Uint32())
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	io.WriteString(zw, page.String())
	zw.Close()
	h := compressHTML(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Add("Vary", "Accept-Encoding")
		w.WriteHeader(http.StatusOK)
		w.Write(z.Bytes())
	}))
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if z.Len() < gzipMinSize {
		t.Fatalf("the gzipped page is %d bytes, under gzipMinSize", z.Len())
	}
	if !bytes.Equal(rec.Body.Bytes(), z.Bytes()) || len(rec.Header().Values("Vary")) != 1 {
		t.Fatalf("the encoded page was changed on its way: %d bytes, want %d; Vary %q", rec.Body.Len(), z.Len(), rec.Header().Values("Vary"))
	}
}
