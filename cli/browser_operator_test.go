package cli

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
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

// demoConsole is `drconsole demo` as `make run` starts it, in process:
// its URL, the passwords it printed, and its log (for a failing test).
type demoConsole struct {
	base      string
	passwords map[string]string
	log       *syncBuffer
}

func startDemoConsole(t *testing.T) *demoConsole {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	out, log := &syncBuffer{}, &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- demoCmd(ctx, []string{"--addr", addr}, out, log) }()
	t.Cleanup(func() { cancel(); <-done })
	s := &demoConsole{base: "http://" + addr, passwords: map[string]string{}, log: log}
	account := regexp.MustCompile(`(?m)^\s+(\w+)\s+\w+\s+password (\S+)$`)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		for _, m := range account.FindAllStringSubmatch(out.String(), -1) {
			s.passwords[m[1]] = m[2]
		}
		if resp, err := http.Get(s.base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && len(s.passwords) == 3 {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sandbox did not come up in a minute:\n%s", out.String())
		}
	}
}

// requests is the tail of the console's request log.
func (s *demoConsole) requests() string {
	var reqs []string
	for _, l := range strings.Split(s.log.String(), "\n") {
		if strings.Contains(l, "msg=http ") {
			reqs = append(reqs, l)
		}
	}
	return strings.Join(reqs[max(0, len(reqs)-30):], "\n")
}

// operator is one person at a browser of their own (two contexts of one
// headless Chromium at times stopped answering), in an 800 px window,
// counting what they do: every click and every field typed into.
type operator struct {
	t              *testing.T
	name           string
	ctx            context.Context
	console        *demoConsole
	clicks, fields int
}

// signIn opens a browser for name and signs in with the sign-in form.
func (s *demoConsole) signIn(t *testing.T, name string) *operator {
	t.Helper()
	o := &operator{t: t, name: name, ctx: webtest.OwnBrowser(t, 10*time.Minute), console: s}
	o.do("sign in", chromedp.EmulateViewport(800, 900), chromedp.Navigate(s.base+"/"), chromedp.WaitVisible(chromedp.CSS("#password")),
		chromedp.SendKeys(chromedp.CSS("#username"), name), chromedp.SendKeys(chromedp.CSS("#password"), s.passwords[name]), chromedp.Click(chromedp.CSS("#sign-in")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="signed-in-user"]`)))
	return o
}

// do runs actions within a minute; on failure it says where the browser
// was, what the page said, which fields refused their value, and the
// console's last requests.
func (o *operator) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	o.t.Helper()
	ctx, cancel := context.WithTimeout(o.ctx, time.Minute)
	defer cancel()
	err := chromedp.Do(ctx, actions...)
	if err == nil {
		return
	}
	ctx, cancel = context.WithTimeout(o.ctx, 5*time.Second)
	defer cancel()
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	page, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
	invalid, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("input:invalid, select:invalid, textarea:invalid")].map(e => e.name + ": " + e.validationMessage)`))
	o.t.Fatalf("%s: %s: %v\nat %s\nfields refusing their value: %q\nrequests:\n%s\npage:\n%.4000s", o.name, what, err, loc, invalid, o.console.requests(), page)
}

// open goes to path (typing an address is not counted as a click).
func (o *operator) open(path string) {
	o.t.Helper()
	o.do("open "+path, chromedp.Navigate(o.console.base+path))
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

// has says whether the page has an element sel now.
func (o *operator) has(sel string) bool {
	o.t.Helper()
	ok, err := chromedp.Run(o.ctx, chromedp.Evaluate[bool]("!!document.querySelector("+jsString(sel)+")"))
	if err != nil {
		o.t.Fatalf("%s: looking for %s: %v", o.name, sel, err)
	}
	return ok
}

func jsString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// screenshot writes the element sel as docs/screenshots/file when the run
// asks for them (DRCONSOLE_SCREENSHOTS=1, `make screenshots`).
func (o *operator) screenshot(file, sel string) {
	o.t.Helper()
	if os.Getenv("DRCONSOLE_SCREENSHOTS") == "" {
		return
	}
	png, err := chromedp.Run(o.ctx, chromedp.Screenshot(chromedp.CSS(sel)))
	if err != nil {
		o.t.Fatalf("screenshot %s of %s: %v", file, sel, err)
	}
	if err := os.WriteFile(filepath.Join("..", "docs", "screenshots", file), png, 0o644); err != nil {
		o.t.Fatal(err)
	}
}

// location is the address of the page o is on.
func (o *operator) location() string {
	o.t.Helper()
	loc, err := chromedp.Run(o.ctx, chromedp.Location())
	if err != nil {
		o.t.Fatalf("%s: location: %v", o.name, err)
	}
	return loc
}

// approveFromNav: the approver follows the navigation's "waiting" link to
// runURL (through the list of waiting runs when there are several) and
// approves the run.
func approveFromNav(o *operator, runURL string) {
	o.t.Helper()
	// Where the link goes is read before the click: the location right
	// after it may still be the page being left.
	nav := `[data-testid="nav-waiting"]`
	o.see(nav)
	href, err := chromedp.Run(o.ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid="nav-waiting"]').getAttribute("href")`))
	if err != nil {
		o.t.Fatalf("%s: reading the nav's link: %v", o.name, err)
	}
	o.click(nav)
	if run := strings.TrimPrefix(runURL, o.console.base); !strings.HasPrefix(href, run) {
		o.click(fmt.Sprintf(`a[href="%s"]`, run))
	}
	o.click("#approve")
	o.see(`[data-testid="you-approved"]`)
}

// runEveryStep runs the approved run open on o's page step by step, each
// as soon as the page offers it (without a reload), typing flow where a
// step asks for it, until the run is finished. offered, when not nil, is
// called as each step is offered.
func runEveryStep(o *operator, flow string, offered func(step int)) {
	o.t.Helper()
	for i := 1; o.has(fmt.Sprintf(`[data-testid="step-%d"]`, i)); i++ {
		o.see(fmt.Sprintf("#execute-%d", i))
		if offered != nil {
			offered(i)
		}
		if confirm := fmt.Sprintf("#confirm-%d", i); o.has(confirm) {
			o.typeInto(confirm, flow)
		}
		o.click(fmt.Sprintf("#execute-%d", i))
		ctx, cancel := context.WithTimeout(o.ctx, 2*time.Minute)
		status, err := chromedp.Run(ctx, chromedp.Poll[string](fmt.Sprintf(
			`(s => s && /done|failed/.test(s.textContent) ? s.textContent : "")(document.querySelector('[data-testid="step-status-%d"]'))`, i),
			chromedp.WithPollingTimeout(0), chromedp.WithPollingInterval(250*time.Millisecond)))
		cancel()
		if err != nil || !strings.Contains(status, "done") {
			page, _ := chromedp.Run(o.ctx, chromedp.Text(chromedp.CSS("#live")))
			o.t.Fatalf("step %d: %q %v\n%.4000s", i, status, err, page)
		}
	}
	o.see(`[data-testid="finished"]`)
}
