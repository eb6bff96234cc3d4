package web_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
)

// TestScreenshots writes the README's screenshots of the sandbox into
// docs/screenshots/ (headless Chromium, like the browser tests). It only
// runs when asked, after the forms change:
//
//	DRCONSOLE_SCREENSHOTS=1 go test -count=1 -run TestScreenshots ./web/
func TestScreenshots(t *testing.T) {
	if os.Getenv("DRCONSOLE_SCREENSHOTS") == "" {
		t.Skip("set DRCONSOLE_SCREENSHOTS=1 to write docs/screenshots/")
	}
	dir := filepath.Join("..", "docs", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c := startConsole(t)
	waitReady(t, c)
	// A slowed mirror for a while, so the charts show lag rising and the
	// warning line, not a flat zero.
	c.Sandbox.SetMirrorRate(5)
	t.Cleanup(func() { c.Sandbox.SetMirrorRate(0) })
	deadline := time.Now().Add(60 * time.Second)
	for s := c.Monitor.Snapshot("primary->dr"); s.RPOMs == nil || *s.RPOMs < 20_000; s = c.Monitor.Snapshot("primary->dr") {
		if time.Now().After(deadline) {
			t.Fatal("RPO did not reach 20 s in 60 s with the mirror slowed")
		}
		time.Sleep(500 * time.Millisecond)
	}
	// The RPO report counts complete minutes: wait for one to be recorded.
	for {
		ms, err := c.Store.FlowMinutes(context.Background(), "primary->dr", 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) > 0 && ms[0].MinuteMs < time.Now().Truncate(time.Minute).UnixMilli() {
			break
		}
		if time.Now().After(deadline.Add(70 * time.Second)) {
			t.Fatal("no complete minute of RPO history recorded")
		}
		time.Sleep(500 * time.Millisecond)
	}
	id, err := c.Runbook.Create(context.Background(), runbook.Actor{Name: "test-operator", Role: "operator"},
		runbook.Plan{Flow: "primary->dr", Steps: []runbook.Step{{Kind: failover.KindPreflight}, {Kind: failover.KindStopMirror},
			{Kind: failover.KindTranslateGroup, Group: "billing", AllowPartial: true}}}, "drill: primary region lost")
	if err != nil {
		t.Fatal(err)
	}
	ctx := newBrowser(t)
	signIn(t, ctx, c.URL+"/", "test-admin")
	for _, shot := range []struct{ file, path, sel string }{
		{"overview.png", "/", "main"},
		{"flow-rpo-chart.png", "/flows/primary-%3Edr", ".chart"},
		{"failover-plan.png", "/failover", "#new-plan"},
		{"failover-run.png", fmt.Sprintf("/failover/%d", id), "main"},
		{"savepoints-trigger.png", "/savepoints", "#trigger"},
		{"translate.png", "/translate", "form.translate"},
		{"report.png", "/report", ".report-flow"},
	} {
		err := chromedp.Do(ctx, chromedp.Navigate(c.URL+shot.path), chromedp.WaitVisible(chromedp.CSS(shot.sel)))
		var png []byte
		if err == nil {
			png, err = chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(shot.sel)))
		}
		if err != nil {
			t.Fatalf("%s (%s %s): %v", shot.file, shot.path, shot.sel, err)
		}
		if err := os.WriteFile(filepath.Join(dir, shot.file), png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", filepath.Join(dir, shot.file), len(png))
	}
}
