package pages

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// counted is a render func that counts its calls.
func counted(n *atomic.Int32, body string, keep bool, err error) func() ([]byte, bool, error) {
	return func() ([]byte, bool, error) {
		n.Add(1)
		return []byte(body), keep, err
	}
}

// A held page is rendered once per key; a failed or partial render is
// never held; and what is held stays within its bounds.
func TestRenderedHoldsOnlyKeptPages(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		keep     bool
		err      error
		renders  int32 // after two Gets of one key
		heldPage int
	}{
		{"kept", true, nil, 1, 1},
		{"partial (a read failed)", false, nil, 2, 0},
		{"render error", true, errors.New("boom"), 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c Rendered
			c.MaxEntries, c.MaxBytes = 8, 1<<20
			var n atomic.Int32
			for range 2 {
				p, err := c.Get(ctx, "k", 1, counted(&n, "body", tc.keep, tc.err))
				if !errors.Is(err, tc.err) || err == nil && string(p.Body) != "body" {
					t.Fatalf("Get = %v, %v", p, err)
				}
			}
			if got, _ := c.Len(); n.Load() != tc.renders || got != tc.heldPage {
				t.Fatalf("%d renders, %d held; want %d, %d", n.Load(), got, tc.renders, tc.heldPage)
			}
		})
	}
}

func TestRenderedBounds(t *testing.T) {
	ctx := context.Background()
	var n atomic.Int32
	c := Rendered{MaxEntries: 3, MaxBytes: 1 << 20}
	for i := range 10 {
		c.Get(ctx, strconv.Itoa(i), 1, counted(&n, "x", true, nil))
	}
	if held, _ := c.Len(); held != 3 {
		t.Fatalf("%d pages held, at most 3", held)
	}
	// The least recently used goes first: "7" was asked for again.
	c.Get(ctx, "7", 1, counted(&n, "x", true, nil))
	c.Get(ctx, "10", 1, counted(&n, "x", true, nil))
	before := n.Load()
	c.Get(ctx, "7", 1, counted(&n, "x", true, nil))
	if n.Load() != before {
		t.Fatal("the most recently used page was dropped")
	}

	c = Rendered{MaxEntries: 100, MaxBytes: 1000}
	big := string(bytes.Repeat([]byte("a"), 300))
	for i := range 10 {
		p, _ := c.Get(ctx, strconv.Itoa(i), 1, counted(&n, big, true, nil))
		c.Gzip(p)
	}
	if held, b := c.Len(); b > 1000 || held == 0 || b != held*(300+len(c.Gzip(c.held["9"]))) {
		t.Fatalf("%d pages, %d bytes held; bound 1000, gzip copies counted", held, b)
	}

	// A newer second drops every page of the older ones.
	c.Get(ctx, "new", 2, counted(&n, "x", true, nil))
	if held, b := c.Len(); held != 1 || b != 1 {
		t.Fatalf("%d pages (%d bytes) held after a new second; want only its own", held, b)
	}
}

// Callers asking for one key at once share one render; a slow render
// holds up no other key; a render error is not handed on: a waiter tries
// itself.
func TestRenderedOneRenderPerKey(t *testing.T) {
	ctx := context.Background()
	var c Rendered
	c.MaxEntries, c.MaxBytes = 8, 1<<20
	release := make(chan struct{})
	var n atomic.Int32
	slow := func() ([]byte, bool, error) {
		n.Add(1)
		<-release
		return []byte("slow"), true, nil
	}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if p, err := c.Get(ctx, "slow", 1, slow); err != nil || string(p.Body) != "slow" {
				t.Errorf("Get = %v, %v", p, err)
			}
		})
	}
	done := make(chan struct{})
	go func() {
		c.Get(ctx, "other", 1, counted(new(atomic.Int32), "other", true, nil))
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a slow render of one key held up another")
	}
	// A waiter whose context ends stops waiting.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	for n.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	if _, err := c.Get(cctx, "slow", 1, slow); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled waiter got %v", err)
	}
	close(release)
	wg.Wait()
	if n.Load() != 1 {
		t.Fatalf("%d renders of one key asked for at once, want 1", n.Load())
	}

	first := make(chan struct{})
	var m atomic.Int32
	failing := func() ([]byte, bool, error) {
		m.Add(1)
		<-first
		return nil, false, errors.New("client gone")
	}
	errc := make(chan error)
	go func() { _, err := c.Get(ctx, "e", 1, failing); errc <- err }()
	for m.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	got := make(chan *Page)
	go func() { p, _ := c.Get(ctx, "e", 1, counted(&m, "fine", true, nil)); got <- p }()
	time.Sleep(10 * time.Millisecond) // the second caller waits on the first render
	close(first)
	if err := <-errc; err == nil {
		t.Fatal("the failed render reported no error")
	}
	if p := <-got; p == nil || string(p.Body) != "fine" || m.Load() != 2 {
		t.Fatalf("the waiter got %v after %d renders; want its own render", p, m.Load())
	}
}

func TestRenderedGzip(t *testing.T) {
	var c Rendered
	c.MaxEntries, c.MaxBytes = 8, 1<<20
	body := bytes.Repeat([]byte("<tr><td>t-0001</td></tr>"), 500)
	p, err := c.Get(context.Background(), "k", 1, func() ([]byte, bool, error) { return body, true, nil })
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(c.Gzip(p)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(got, body) || &c.Gzip(p)[0] != &c.Gzip(p)[0] {
		t.Fatalf("gzip copy decodes to %d bytes (%v), want the body's %d, made once", len(got), err, len(body))
	}
}

func TestETagAndGens(t *testing.T) {
	if ETag("a", "") != ETag("a", "") || ETag("a", "") == ETag("b", "") || ETag("a", "") == ETag("a", "gzip") {
		t.Fatal("an ETag must name its key and encoding, and only them")
	}
	var g Gens[int]
	a, b := new(int), new(int)
	na := g.Of("f", a)
	if g.Of("f", a) != na || g.Of("f", b) == na {
		t.Fatal("one value, one number; another value, another")
	}
	if g.Of("f", a) == na {
		t.Fatal("a number was given twice")
	}
}
