// Package webtest is the browser tests' headless Chromium: one shared by
// the tests of a package, started by the first test that needs it and
// closed by the package's TestMain (Close); or, for a test that plays two
// people, a browser of its own per person (OwnBrowser). A browser per test
// cost seconds each.
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
	once.Do(func() { browser, closeFn, failed = start() })
	if failed != nil {
		t.Fatal(failed)
	}
	ctx, cancelCtx := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	ctx, cancelTimeout := context.WithTimeout(ctx, d)
	t.Cleanup(func() { cancelTimeout(); cancelCtx() })
	return ctx
}

// OwnBrowser starts a Chromium of its own for the test, for up to d, and
// stops it when the test ends. Two people at two browsers are two
// processes: tabs of two contexts of one headless Chromium, each a
// background window to the other, at times stopped answering.
func OwnBrowser(t testing.TB, d time.Duration) context.Context {
	t.Helper()
	ctx, stop, err := start()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancelTimeout := context.WithTimeout(ctx, d)
	t.Cleanup(func() { cancelTimeout(); stop() })
	return ctx
}

// Close stops the shared browser, if a test started it.
func Close() { closeFn() }

// start starts Chromium with the flags this machine needs and returns its
// first tab and how to stop it.
func start() (context.Context, func(), error) {
	path, err := exec.LookPath("chromium")
	if err != nil {
		return nil, nil, errors.New("headless browser tests need Chromium: apt-get install chromium")
	}
	dir, err := os.MkdirTemp("", "drconsole-chromium-")
	if err != nil {
		return nil, nil, err
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
	stop := func() { cancelCtx(); cancelAlloc(); os.RemoveAll(dir) }
	if err := chromedp.Do(ctx); err != nil {
		stop()
		return nil, func() {}, fmt.Errorf("starting Chromium: %w", err)
	}
	return ctx, stop, nil
}
