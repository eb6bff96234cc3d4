package web

import (
	"bufio"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func htmlHandler(body string, ctype string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ctype)
		w.WriteHeader(http.StatusOK)
		// In pieces, as templ writes.
		for i := 0; i < len(body); i += 100 {
			io.WriteString(w, body[i:min(i+100, len(body))])
		}
	})
}

// A page is gzipped only for a client that accepts gzip, and only when it
// is HTML and large enough; the pooled writers give every response its
// own whole stream.
func TestGzipOnlyWhenAccepted(t *testing.T) {
	page := "<table>" + strings.Repeat("<tr><td>events-0001</td><td class=num>12,345</td></tr>\n", 200) + "</table>"
	for _, c := range []struct {
		name, accept, ctype, body string
		gzipped                   bool
	}{
		{"accepted", "gzip, deflate, br", "text/html; charset=utf-8", page, true},
		{"weighted", "br;q=1.0, gzip;q=0.5", "text/html; charset=utf-8", page, true},
		{"any", "*", "text/html; charset=utf-8", page, true},
		{"not asked", "", "text/html; charset=utf-8", page, false},
		{"refused", "gzip;q=0, br", "text/html; charset=utf-8", page, false},
		{"identity only", "identity", "text/html; charset=utf-8", page, false},
		{"small", "gzip", "text/html; charset=utf-8", "<p>ok</p>", false},
		{"not html", "gzip", "application/json", strings.Repeat(`{"a":1}`, 500), false},
	} {
		for range 2 { // the second time from the pool
			req := httptest.NewRequest(http.MethodGet, "/flows/x", nil)
			if c.accept != "" {
				req.Header.Set("Accept-Encoding", c.accept)
			}
			w := httptest.NewRecorder()
			compressHTML(htmlHandler(c.body, c.ctype)).ServeHTTP(w, req)
			got := w.Body.String()
			if enc := w.Header().Get("Content-Encoding"); (enc == "gzip") != c.gzipped {
				t.Fatalf("%s: Content-Encoding %q, want gzip: %v", c.name, enc, c.gzipped)
			}
			if c.gzipped {
				zr, err := gzip.NewReader(w.Body)
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				b, err := io.ReadAll(zr)
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				got = string(b)
				if w.Header().Get("Vary") != "Accept-Encoding" || w.Body.Len() > len(c.body)/4 {
					t.Fatalf("%s: Vary %q, %d bytes for %d", c.name, w.Header().Get("Vary"), w.Body.Len(), len(c.body))
				}
			}
			if got != c.body || w.Code != http.StatusOK {
				t.Fatalf("%s: status %d, body of %d bytes differs from the %d written", c.name, w.Code, len(got), len(c.body))
			}
		}
	}
}

// An event stream goes out uncompressed and event by event, even to a
// client that accepts gzip: the first event arrives while the handler
// still runs, and the write deadline reaches the connection.
func TestGzipLeavesEventStreamsAlone(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(compressHTML(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		if err := rc.SetWriteDeadline(time.Now().Add(time.Minute)); err != nil {
			t.Errorf("write deadline: %v", err)
		}
		io.WriteString(w, "event: a\ndata: "+strings.Repeat("x", 3000)+"\n\n")
		if err := rc.Flush(); err != nil {
			t.Errorf("flush: %v", err)
		}
		<-release
	})))
	defer srv.Close()
	defer close(release)
	for _, accept := range []string{"text/event-stream", ""} { // EventSource sends the first
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		if enc := resp.Header.Get("Content-Encoding"); enc != "" {
			t.Fatalf("Accept %q: stream sent with Content-Encoding %q", accept, enc)
		}
		line, err := bufio.NewReader(resp.Body).ReadString('\n')
		if err != nil || line != "event: a\n" {
			t.Fatalf("Accept %q: first line %q, %v", accept, line, err)
		}
		resp.Body.Close()
	}
}
