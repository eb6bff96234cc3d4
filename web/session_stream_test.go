package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/handlers"
	"github.com/drconsole/drconsole/runbook/failback"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/web"
)

// A live stream is not someone using the console: an overview left open
// (its EventSource reconnecting) must not keep a session alive past the
// idle timeout. The session is used once by a stream after 1 s, then a
// normal page at 3.6 s must find it expired (idle timeout 3 s). Were the
// stream to renew it, the page would still be signed in.
func TestLiveStreamDoesNotExtendTheSession(t *testing.T) {
	c := startConsole(t)
	const idle = 3 * time.Second
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	h := &handlers.Handlers{Monitor: c.Monitor, Store: c.Store, Log: log, Version: "test", Runbook: c.Runbook,
		Auth: config.Auth{InsecureCookie: true, PublicURL: testPublicURL, IdleTimeout: config.Duration(idle),
			AbsoluteTimeout: config.Duration(time.Hour)}, Worker: &failover.Worker{Runbook: c.Runbook, Log: log}, Failovers: failback.BookOf(c.Runbook)}
	srv := httptest.NewServer(web.Router(h, log))
	t.Cleanup(srv.Close)
	cookie := sessionCookie(t, c, "viewer")
	start := time.Now()

	time.Sleep(time.Second) // past idle/32: a renewing request would renew now
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.AddCookie(cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	io.Copy(io.Discard, resp.Body) // until the context ends it
	resp.Body.Close()
	if time.Since(start) >= idle {
		t.Skip("the machine was too slow to open the stream inside the idle timeout; nothing shown")
	}

	time.Sleep(time.Until(start.Add(3600 * time.Millisecond)))
	page, _ := http.NewRequest(http.MethodGet, srv.URL+"/", nil)
	page.AddCookie(cookie)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = noRedirect.Do(page)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther && resp.StatusCode != http.StatusFound {
		t.Fatalf("the page after 3.6 s with only a stream in between: %d, want a redirect to sign in (the stream renewed the session)", resp.StatusCode)
	}
}
