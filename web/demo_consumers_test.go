package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The sandbox page stops and starts the primary's consumers (a failback
// needs their groups empty): an operator's button, refused to a viewer,
// and the page says which state they are in.
func TestDemoConsumersControl(t *testing.T) {
	c := startConsole(t)
	if !c.Sandbox.ConsumersRunning() {
		t.Fatal("the sandbox's consumers do not run at start")
	}
	t.Cleanup(func() { c.Sandbox.SetConsumersRunning(true) })

	resp, _ := postForm(t, c, sessionCookie(t, c, "viewer"), "/demo/consumers", url.Values{"running": {"false"}}, nil)
	if resp.StatusCode != http.StatusForbidden || !c.Sandbox.ConsumersRunning() {
		t.Fatalf("a viewer stops the consumers: %d, running %v", resp.StatusCode, c.Sandbox.ConsumersRunning())
	}

	op := sessionCookie(t, c, "operator")
	resp, page := postForm(t, c, op, "/demo/consumers", url.Values{"running": {"false"}}, nil)
	if resp.StatusCode != http.StatusOK || c.Sandbox.ConsumersRunning() {
		t.Fatalf("stop: %d, running %v\n%.300s", resp.StatusCode, c.Sandbox.ConsumersRunning(), page)
	}
	for _, want := range []string{`id="consumers-start"`, "STOPPED: their groups are empty", "consumers stopped"} {
		if !strings.Contains(page, want) {
			t.Errorf("after stop the page lacks %q", want)
		}
	}
	if strings.Contains(page, `id="consumers-stop"`) {
		t.Error("after stop the page still offers to stop")
	}

	resp, page = postForm(t, c, op, "/demo/consumers", url.Values{"running": {"true"}}, nil)
	if resp.StatusCode != http.StatusOK || !c.Sandbox.ConsumersRunning() {
		t.Fatalf("start: %d, running %v\n%.300s", resp.StatusCode, c.Sandbox.ConsumersRunning(), page)
	}
	if !strings.Contains(page, `id="consumers-stop"`) || !strings.Contains(page, `data-testid="consumers-state">running`) {
		t.Errorf("after start the page lacks the stop button or the running state:\n%s", page)
	}
}
