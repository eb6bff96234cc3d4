package web_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/drconsole/drconsole/views"
)

// pageLog records, per GET of one path, the If-None-Match it came with
// and the status and ETag it was answered with.
type pageLog struct {
	mu   sync.Mutex
	path string
	seen []seenGet
}

type seenGet struct {
	htmx      bool
	inm, etag string
	status    int
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(status int) {
	s.status = status
	s.ResponseWriter.WriteHeader(status)
}

func (l *pageLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		if r.Method != http.MethodGet || r.URL.Path != l.path {
			return
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		l.seen = append(l.seen, seenGet{htmx: r.Header.Get("HX-Request") == "true", inm: r.Header.Get("If-None-Match"),
			etag: w.Header().Get("ETag"), status: sw.status})
	})
}

func (l *pageLog) snapshot() []seenGet {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]seenGet(nil), l.seen...)
}

// With no-cache, private the browser keeps the flow page but asks before
// using it: htmx's 2 s polls come with the ETag held, and a 304 gives the
// script the held page (XMLHttpRequest, which htmx uses, sees a 200 with
// the body), so nothing stale is shown without the server's word.
func TestBrowserFlowPageRevalidates(t *testing.T) {
	t.Parallel()
	c := startConsole(t)
	waitReady(t, c)
	log := &pageLog{path: "/flows/primary->dr"} // as r.URL.Path has it: unescaped
	srv := httptest.NewServer(log.wrap(c.Handler))
	t.Cleanup(srv.Close)
	b := newBrowser(t)
	signIn(t, b, srv.URL+views.FlowPath("primary->dr"), "test-viewer")
	time.Sleep(7 * time.Second) // three polls
	var polls []seenGet
	for _, g := range log.snapshot() {
		if g.htmx {
			polls = append(polls, g)
		}
	}
	if len(polls) < 3 {
		t.Fatalf("%d polls in 7 s, want 3", len(polls))
	}
	// The first poll's URL names the listing's sort (another URL than the
	// one navigated to); each later one holds the previous poll's page.
	for i, p := range polls[1:] {
		if p.inm == "" || p.inm != polls[i].etag {
			t.Fatalf("a poll asked with If-None-Match %q, not the ETag %q it holds: the browser did not revalidate (%+v)", p.inm, polls[i].etag, polls)
		}
	}
	// Two requests in a row fall in one second (the page's key) but for
	// the rare second boundary: the second is a 304 the browser answers
	// from what it holds.
	const twice = `(function () {
		function get() {
			const x = new XMLHttpRequest();
			x.open("GET", location.pathname, false);
			x.setRequestHeader("HX-Request", "true");
			x.send();
			return x.status + " " + (x.responseText.includes('id="live"') ? "live" : "empty");
		}
		return get() + ", " + get();
	})()`
	for try := 0; ; try++ {
		n := len(log.snapshot())
		got, err := chromedp.Run(b, chromedp.Evaluate[string](twice))
		if err != nil {
			t.Fatal(err)
		}
		if got != "200 live, 200 live" {
			t.Fatalf("the script saw %q, want the page twice", got)
		}
		seen := log.snapshot()[n:]
		if len(seen) == 2 && seen[1].status == http.StatusNotModified && seen[1].inm == seen[0].etag {
			break
		}
		if try == 4 {
			t.Fatalf("no 304 for the same page asked twice at once: %+v", seen)
		}
	}
	// text retries a read that races a poll's swap of #live.
	if rpo := text(t, b, `#live [data-testid="rpo"]`); rpo == "" {
		t.Fatalf("the live section after the polls: %q", rpo)
	}
}
