// Package webtest is the browser tests' one headless Chromium, shared by
// the tests of a package: started by the first test that needs it, closed
// by the package's TestMain (Close). A browser per test cost seconds each.
package webtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

var (
	once    sync.Once
	browser context.Context
	failed  error
	closeFn = func() {}
)

// Browser opens a tab in a browser context of its own (own cookies and
// storage, as a browser of its own had) in the shared headless Debian
// Chromium, for up to d. A missing browser fails the test: it is part of
// `make test`.
func Browser(t testing.TB, d time.Duration) context.Context {
	t.Helper()
	once.Do(start)
	if failed != nil {
		t.Fatal(failed)
	}
	ctx, cancelCtx := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	ctx, cancelTimeout := context.WithTimeout(ctx, d)
	t.Cleanup(func() { cancelTimeout(); cancelCtx() })
	return ctx
}

// Close stops the browser, if a test started it.
func Close() { closeFn() }

// start starts Chromium with the flags this machine needs.
func start() {
	path, err := exec.LookPath("chromium")
	if err != nil {
		failed = errors.New("headless browser tests need Chromium: apt-get install chromium")
		return
	}
	dir, err := os.MkdirTemp("", "drconsole-chromium-")
	if err != nil {
		failed = err
		return
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("no-first-run", true),
		chromedp.UserDataDir(dir),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	closeFn = func() { cancelCtx(); cancelAlloc(); os.RemoveAll(dir) }
	if failed = chromedp.Do(ctx); failed != nil {
		failed = fmt.Errorf("starting Chromium: %w", failed)
		return
	}
	browser = ctx
}
