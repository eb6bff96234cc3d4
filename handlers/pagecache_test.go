package handlers

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drconsole/drconsole/identity"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/views"
)

// getAs serves one GET for u (nil: nobody signed in).
func (rig *pagesRig) getAs(u *model.Principal, url string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, url, nil)
	if u != nil {
		req = req.WithContext(identity.WithUser(req.Context(), u))
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	rig.router.ServeHTTP(w, req)
	return w
}

// advance moves the clock without a refresh.
func (rig *pagesRig) advance(d time.Duration) {
	rig.mu.Lock()
	rig.now = rig.now.Add(d)
	rig.mu.Unlock()
}

// nextSecond moves the clock to the start of the next second.
func (rig *pagesRig) nextSecond() {
	rig.mu.Lock()
	rig.now = rig.now.Truncate(time.Second).Add(time.Second)
	rig.mu.Unlock()
}

func (rig *pagesRig) renders() uint64 { return rig.h.pageData().rendered.Renders() }

// cachedPaths are the pages served from the rendered-page cache.
func cachedPaths(rig *pagesRig) map[string]string {
	return map[string]string{"flow": views.FlowPath(rig.flow), "topic": views.TopicPath(rig.flow, "t-0003"), "overview": "/"}
}

// A page is rendered again exactly when something its bytes depend on
// changed: each part of the key on its own renders anew, and what is not
// part of it (a poll's HX-Request, the encoding, a later moment within
// the second) is served the held page.
func TestPageCacheKey(t *testing.T) {
	rig := newPagesRig(t, 30, 4, time.Hour)
	vera := &model.Principal{Name: "vera", Role: model.RoleViewer}
	for _, tc := range []struct {
		name   string
		then   func() // between the two GETs
		query  string // the second GET's query
		user   *model.Principal
		header []string
		render bool
	}{
		{name: "the same request", user: vera},
		{name: "later in the same second", then: func() { rig.advance(900 * time.Millisecond) }, user: vera},
		{name: "an htmx poll", user: vera, header: []string{"HX-Request", "true", "HX-Current-URL", "http://x/"}},
		{name: "gzip accepted", user: vera, header: []string{"Accept-Encoding", "gzip"}},
		{name: "another user", user: &model.Principal{Name: "victor", Role: model.RoleViewer}, render: true},
		{name: "another role", user: &model.Principal{Name: "vera", Role: model.RoleOperator}, render: true},
		{name: "signed in by the proxy", user: &model.Principal{Name: "vera", Role: model.RoleViewer, Proxy: true}, render: true},
		{name: "nobody signed in", render: true},
		{name: "another sort", query: "?sort=topic", user: vera, render: true},
		{name: "another page", query: "?page=2", user: vera, render: true},
		{name: "another filter", query: "?q=t-001", user: vera, render: true},
		{name: "a state-changing request", then: rig.h.StateChanged, user: vera, render: true},
		{name: "the next second", then: func() { rig.advance(time.Second) }, user: vera, render: true},
		{name: "a new snapshot in the same second", then: func() { rig.tick(200 * time.Millisecond) }, user: vera, render: true},
	} {
		for page, path := range cachedPaths(rig) {
			rig.nextSecond()
			first := rig.getAs(vera, path)
			if first.Code != http.StatusOK {
				t.Fatalf("%s: %d", path, first.Code)
			}
			if tc.then != nil {
				tc.then()
			}
			before := rig.renders()
			w := rig.getAs(tc.user, path+tc.query, tc.header...)
			if w.Code != http.StatusOK {
				t.Fatalf("%s, %s: %d", tc.name, page, w.Code)
			}
			if rendered := rig.renders() != before; rendered != tc.render {
				t.Errorf("%s, %s page: rendered anew %v, want %v", tc.name, page, rendered, tc.render)
			}
			if !tc.render && !bytes.Equal(decoded(t, w), first.Body.Bytes()) {
				t.Errorf("%s, %s page: the held page differs from the first", tc.name, page)
			}
		}
	}
}

// decoded is w's body, gunzipped when it says so.
func decoded(t *testing.T, w *httptest.ResponseRecorder) []byte {
	t.Helper()
	if w.Header().Get("Content-Encoding") != "gzip" {
		return w.Body.Bytes()
	}
	zr, err := gzip.NewReader(w.Body)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// An operator who acknowledges a loss sees it on the next GET, in the
// same second: the acknowledgement's request moves every key on.
func TestPageCacheShowsAnAckAtOnce(t *testing.T) {
	rig := newPagesRig(t, 5, 2, time.Hour)
	ctx := context.Background()
	now := rig.now.UnixMilli()
	id, err := rig.store.AddLossIncident(ctx, model.LossIncident{Flow: rig.flow, Topic: "t-0001", Partition: 1,
		FirstOffset: 7001, LastOffset: 7042, Lost: 42, DetectedMs: now - 5000, ConfirmedMs: now, How: "test"})
	if err != nil {
		t.Fatal(err)
	}
	op := &model.Principal{Name: "olga", Role: model.RoleOperator}
	rig.nextSecond()
	if body := rig.getAs(op, views.FlowPath(rig.flow)).Body.String(); !strings.Contains(body, ">Acknowledge</button>") {
		t.Fatal("the flow page offers no acknowledgement")
	}
	if body := rig.getAs(op, "/").Body.String(); !strings.Contains(body, "7001–7042") {
		t.Fatal("the overview does not show the loss")
	}
	if err := rig.store.AckLossIncident(ctx, rig.flow, id, "olga", now); err != nil {
		t.Fatal(err)
	}
	rig.h.StateChanged() // web's countChanges, as the ack's POST answers
	rig.advance(100 * time.Millisecond)
	if body := rig.getAs(op, views.FlowPath(rig.flow)).Body.String(); !strings.Contains(body, "by olga") {
		t.Fatal("the flow page does not show the acknowledgement made a moment ago")
	}
	if body := rig.getAs(op, "/").Body.String(); strings.Contains(body, "7001–7042") {
		t.Fatal("the overview still shows the acknowledged loss")
	}
}

// The ETag names the key and the encoding: a client that holds the page
// is answered 304, without a body or a render, until the key moves on.
func TestPageCacheNotModified(t *testing.T) {
	rig := newPagesRig(t, 5, 2, time.Hour)
	gz := []string{"Accept-Encoding", "gzip"}
	for page, path := range cachedPaths(rig) {
		rig.nextSecond()
		first := rig.getAs(nil, path, gz...)
		etag := first.Header().Get("ETag")
		plain := rig.getAs(nil, path).Header().Get("ETag")
		if etag == "" || strings.HasPrefix(etag, "W/") || etag == plain {
			t.Fatalf("%s: ETag %q (identity: %q): want a strong one per encoding", page, etag, plain)
		}
		before := rig.renders()
		for _, tc := range []struct {
			name, inm string
			want      int
		}{
			{"its ETag", etag, http.StatusNotModified},
			{"its ETag, weakly, among others", `"x", W/` + etag, http.StatusNotModified},
			{"any", "*", http.StatusNotModified},
			{"another ETag", `"x"`, http.StatusOK},
			{"the identity body's ETag", plain, http.StatusOK},
		} {
			w := rig.getAs(nil, path, "Accept-Encoding", "gzip", "If-None-Match", tc.inm)
			if w.Code != tc.want {
				t.Errorf("%s, If-None-Match %s: %d, want %d", page, tc.name, w.Code, tc.want)
			}
			if h := w.Header(); h.Get("Cache-Control") != "no-cache, private" || h.Get("Vary") != "Accept-Encoding" || h.Get("ETag") != etag {
				t.Errorf("%s, %s: headers %v", page, tc.name, h)
			}
			if tc.want == http.StatusNotModified && w.Body.Len() != 0 {
				t.Errorf("%s: a 304 with a body", page)
			}
		}
		if rig.renders() != before {
			t.Errorf("%s: revalidations rendered the page", page)
		}
		rig.advance(time.Second)
		if w := rig.getAs(nil, path, "Accept-Encoding", "gzip", "If-None-Match", etag); w.Code != http.StatusOK || w.Header().Get("ETag") == etag {
			t.Errorf("%s: a second later: %d, ETag %q: want a new page", page, w.Code, w.Header().Get("ETag"))
		}
	}
}

// The gzip copy and the identity body are the same page, both whole.
func TestPageCacheEncodings(t *testing.T) {
	rig := newPagesRig(t, 30, 4, time.Hour)
	for page, path := range cachedPaths(rig) {
		plain := rig.getAs(nil, path)
		for _, accept := range []string{"gzip", "gzip, deflate, br", "*"} {
			z := rig.getAs(nil, path, "Accept-Encoding", accept)
			if z.Header().Get("Content-Encoding") != "gzip" || z.Header().Get("Content-Length") != strconv.Itoa(z.Body.Len()) {
				t.Fatalf("%s, Accept-Encoding %q: headers %v", page, accept, z.Header())
			}
			if body := decoded(t, z); !bytes.Equal(body, plain.Body.Bytes()) || !bytes.HasSuffix(bytes.TrimSpace(body), []byte("</html>")) {
				t.Errorf("%s: the gzip copy decodes to %d bytes, the identity body is %d", page, len(body), plain.Body.Len())
			}
		}
		for _, accept := range []string{"", "identity", "gzip;q=0", "gzip;q=0, *"} {
			if w := rig.getAs(nil, path, "Accept-Encoding", accept); w.Header().Get("Content-Encoding") != "" || !bytes.Equal(w.Body.Bytes(), plain.Body.Bytes()) {
				t.Errorf("%s, Accept-Encoding %q: Content-Encoding %q", page, accept, w.Header().Get("Content-Encoding"))
			}
		}
		if plain.Header().Get("Content-Length") != strconv.Itoa(plain.Body.Len()) || plain.Header().Get("Content-Type") != "text/html; charset=utf-8" {
			t.Errorf("%s: headers %v", page, plain.Header())
		}
	}
}

// Refusals and pages whose reads failed are never held: the next request
// asks again.
func TestPageCacheHoldsNoErrors(t *testing.T) {
	rig := newPagesRig(t, 5, 2, time.Hour)
	before := rig.renders()
	for range 2 {
		if w := rig.getAs(nil, views.TopicPath(rig.flow, "nope")); w.Code != http.StatusNotFound || w.Header().Get("ETag") != "" {
			t.Fatalf("unknown topic: %d, ETag %q", w.Code, w.Header().Get("ETag"))
		}
	}
	if rig.renders() != before {
		t.Fatal("a refused request rendered a page")
	}
	rig.store.Close() // every read fails from now on: the pages say what is unknown
	for page, path := range cachedPaths(rig) {
		if page == "topic" {
			continue // reads nothing from storage
		}
		before := rig.renders()
		for range 2 {
			if w := rig.getAs(nil, path); w.Code != http.StatusOK {
				t.Fatalf("%s: %d", page, w.Code)
			}
		}
		if n := rig.renders() - before; n != 2 {
			t.Errorf("%s: %d renders for two requests while storage fails: a partial page was held", page, n)
		}
	}
}

// However many listings are asked for, the cache stays within its bounds.
func TestPageCacheBounded(t *testing.T) {
	rig := newPagesRig(t, 300, 2, time.Hour)
	for i := range 3 * renderedMaxEntries {
		if w := rig.getAs(nil, views.FlowPath(rig.flow)+"?q=t-0"+strconv.Itoa(i)); w.Code != http.StatusOK {
			t.Fatal(w.Code)
		}
		rig.getAs(nil, views.FlowPath(rig.flow)+"?q=t-0"+strconv.Itoa(i), "Accept-Encoding", "gzip")
	}
	n, b := rig.h.pageData().rendered.Len()
	if n == 0 || n > renderedMaxEntries || b > renderedMaxBytes {
		t.Fatalf("%d pages, %d bytes held; bounds %d, %d", n, b, renderedMaxEntries, renderedMaxBytes)
	}
}

// Keys tell routes apart as escaped, and one handler's pages from
// another's, so a flow named "a/topics/b" could never be served topic b
// of flow a.
func TestPageKeyNamesTheRoute(t *testing.T) {
	rig := newPagesRig(t, 2, 1, time.Minute)
	now := rig.clock()
	key := func(page, url string) string {
		return rig.h.pageKey(httptest.NewRequest(http.MethodGet, url, nil), page, now)
	}
	if key("flow", "/flows/a%2Ftopics%2Fb") == key("flow", "/flows/a/topics/b") || key("flow", "/x") == key("topic", "/x") {
		t.Fatal("two routes share a key")
	}
}

// A page is rendered for everyone waiting for it: the first asker's
// leaving does not cut its reads short (which would make it a partial
// page, "unknown" for all who waited).
func TestPageCacheRenderOutlivesItsAsker(t *testing.T) {
	rig := newPagesRig(t, 5, 2, time.Hour)
	for page, path := range cachedPaths(rig) {
		rig.nextSecond()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		req := httptest.NewRequest(http.MethodGet, path, nil).WithContext(ctx)
		w := httptest.NewRecorder()
		rig.router.ServeHTTP(w, req)
		before := rig.renders()
		if again := rig.getAs(nil, path); w.Code != http.StatusOK || !bytes.Equal(again.Body.Bytes(), w.Body.Bytes()) || rig.renders() != before {
			t.Errorf("%s: a render for a request gone: %d, held %v", page, w.Code, rig.renders() == before)
		}
	}
}

// Many clients asking for one page at once share one render.
func TestPageCacheOneRenderForConcurrentAskers(t *testing.T) {
	rig := newPagesRig(t, 300, 4, time.Hour)
	for page, path := range cachedPaths(rig) {
		rig.nextSecond()
		before := rig.renders()
		var wg sync.WaitGroup
		bodies := make([][]byte, 16)
		for i := range bodies {
			wg.Go(func() { bodies[i] = rig.getAs(nil, path).Body.Bytes() })
		}
		wg.Wait()
		if n := rig.renders() - before; n != 1 {
			t.Errorf("%s: %d renders for 16 clients asking at once, want 1", page, n)
		}
		for _, b := range bodies[1:] {
			if !bytes.Equal(b, bodies[0]) {
				t.Fatalf("%s: clients got different pages", page)
			}
		}
	}
}
