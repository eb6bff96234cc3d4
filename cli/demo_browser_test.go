package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/drconsole/drconsole/web/webtest"
)

// syncBuffer is an io.Writer the test reads while demoCmd writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// operator is one person at one browser, counting what they do: every
// click and every field they type into. Typing goes a key at a time.
type operator struct {
	t              *testing.T
	name           string
	ctx            context.Context
	clicks, fields int
}

func (o *operator) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	o.t.Helper()
	if err := chromedp.Do(o.ctx, actions...); err != nil {
		o.t.Fatalf("%s: %s: %v", o.name, what, err)
	}
}

// click presses the element sel, once it is visible.
func (o *operator) click(sel string) {
	o.t.Helper()
	o.clicks++
	o.do("click "+sel, chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.ScrollIntoView(chromedp.CSS(sel)), chromedp.Click(chromedp.CSS(sel)))
}

// typeInto types text into the field sel at about 8 keys a second.
func (o *operator) typeInto(sel, text string) {
	o.t.Helper()
	o.fields++
	o.do("focus "+sel, chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.Focus(chromedp.CSS(sel)))
	for _, r := range text {
		o.do("type into "+sel, chromedp.SendKeys(chromedp.CSS(sel), string(r)), chromedp.Sleep(120*time.Millisecond))
	}
}

// see waits for sel to be visible and returns its text.
func (o *operator) see(sel string) string {
	o.t.Helper()
	o.do("wait for "+sel, chromedp.WaitVisible(chromedp.CSS(sel)))
	text, err := chromedp.Run(o.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		o.t.Fatalf("%s: reading %s: %v", o.name, sel, err)
	}
	return text
}

// The whole sandbox failover as two people do it in two browsers, in an
// 800 px window, with the sandbox exactly as `make run` starts it: the
// primary goes down while both have the overview open; alice starts the
// failover from the incident view, bob learns from the navigation that a
// run waits for him and approves it, alice's page offers each step as it
// becomes possible, without a reload. Every click and typed field is
// counted: issue 31 measured 26 clicks and 7 typed fields before, and asks
// for at most 12 and 2.
func TestSandboxFailoverJourneyInTheBrowser(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- demoCmd(ctx, []string{"--addr", addr}, out, io.Discard) }()
	t.Cleanup(func() { cancel(); <-done })
	base := "http://" + addr
	passwords := map[string]string{}
	account := regexp.MustCompile(`(?m)^\s+(\w+)\s+\w+\s+password (\S+)$`)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		for _, m := range account.FindAllStringSubmatch(out.String(), -1) {
			passwords[m[1]] = m[2]
		}
		if resp, err := http.Get(base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && len(passwords) == 3 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sandbox did not come up in a minute:\n%s", out.String())
		}
	}

	signIn := func(name string) *operator {
		o := &operator{t: t, name: name, ctx: webtest.Browser(t, 10*time.Minute)}
		o.do("sign in", chromedp.EmulateViewport(800, 900), chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#password")),
			chromedp.SendKeys(chromedp.CSS("#username"), name), chromedp.SendKeys(chromedp.CSS("#password"), passwords[name]), chromedp.Click(chromedp.CSS("#sign-in")),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="signed-in-user"]`)))
		return o
	}
	t.Cleanup(webtest.Close) // the package's only browser test
	alice, bob := signIn("alice"), signIn("bob")

	// The outage, from the sandbox page (not part of the failover).
	alice.do("take the primary down", chromedp.Navigate(base+"/demo"), chromedp.Click(chromedp.CSS("#primary-down")),
		chromedp.WaitVisible(chromedp.CSS("#primary-up")), chromedp.Navigate(base+"/"))
	bob.do("open the overview", chromedp.Navigate(base+"/"))

	// Alice: the incident leads the overview, and takes her to a plan.
	alice.see(`[data-testid="incident"][data-flow="primary->dr"]`)
	if risk := alice.see(`[data-testid="incident"][data-flow="primary->dr"] [data-testid="incident-at-risk"]`); !strings.HasPrefix(risk, "≥ ") && !strings.HasPrefix(risk, "unknown") {
		t.Errorf("with the primary down the data at risk reads %q: not a lower bound", risk)
	}
	alice.click(`a[id="incident-failover-primary->dr"]`)
	summary := alice.see(`[data-testid="plan-summary"]`)
	alice.click("#create-plan")
	alice.see(`[data-testid="run-status"]`)
	runURL, err := chromedp.Run(alice.ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}

	// Bob: the overview he left open says a run waits for him.
	bob.click(`[data-testid="nav-waiting"]`)
	if loc, _ := chromedp.Run(bob.ctx, chromedp.Location()); !strings.HasPrefix(loc, runURL) {
		bob.click(fmt.Sprintf(`a[href="%s"]`, strings.TrimPrefix(runURL, base)))
	}
	bob.click("#approve")
	bob.see(`[data-testid="you-approved"]`)

	// Alice: each step as it becomes possible, on the page she left open.
	for i := 1; ; i++ {
		step := fmt.Sprintf(`[data-testid="step-%d"]`, i)
		exists, err := chromedp.Run(alice.ctx, chromedp.Evaluate[bool](fmt.Sprintf(`!!document.querySelector(%q)`, step)))
		if err != nil {
			t.Fatal(err)
		}
		if !exists {
			break
		}
		alice.see(fmt.Sprintf("#execute-%d", i)) // offered as soon as it may run, without a reload
		confirm := fmt.Sprintf("#confirm-%d", i)
		if asked, _ := chromedp.Run(alice.ctx, chromedp.Evaluate[bool](fmt.Sprintf(`!!document.querySelector(%q)`, confirm))); asked {
			alice.typeInto(confirm, "primary->dr")
		}
		alice.click(fmt.Sprintf("#execute-%d", i))
		status := fmt.Sprintf(`[data-testid="step-status-%d"]`, i)
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(250 * time.Millisecond) {
			s, _ := chromedp.Run(alice.ctx, chromedp.Text(chromedp.CSS(status)))
			if strings.Contains(s, "done") {
				break
			}
			if strings.Contains(s, "failed") || time.Now().After(deadline) {
				page, _ := chromedp.Run(alice.ctx, chromedp.Text(chromedp.CSS("#live")))
				t.Fatalf("step %d: %q\nplan summary: %s\n%.4000s", i, s, summary, page)
			}
		}
	}
	alice.see(`[data-testid="finished"]`)
	t.Logf("the failover took %d clicks and %d typed fields (alice %d and %d, bob %d and %d)",
		alice.clicks+bob.clicks, alice.fields+bob.fields, alice.clicks, alice.fields, bob.clicks, bob.fields)
	if c, f := alice.clicks+bob.clicks, alice.fields+bob.fields; c > 12 || f > 2 {
		t.Errorf("the failover took %d clicks and %d typed fields: at most 12 and 2", c, f)
	}
	if active := alice.see(`[data-testid="finished-active"]`); !strings.Contains(active, "DR") {
		t.Errorf("after the failover the page says %q of the active side", active)
	}
}
