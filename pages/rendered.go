package pages

import (
	"bytes"
	"compress/gzip"
	"container/list"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"sync"
	"sync/atomic"
	"weak"
)

// Rendered holds rendered pages, keyed by everything their bytes depend
// on (the caller builds the key), so that a page many clients poll is
// rendered once per key, not once per request. It is bounded: at most
// MaxEntries pages and MaxBytes of bodies (gzip copies included), the
// least recently used dropped first, and every page of an older stamp
// (the caller's clock second: such a key is never asked for again)
// dropped when a newer one is added.
type Rendered struct {
	MaxEntries int
	MaxBytes   int

	mu    sync.Mutex
	held  map[string]*Page
	lru   list.List // *Page, most recently used first
	bytes int
	stamp int64 // the newest stamp added

	renders atomic.Uint64
}

// Page is one rendered page.
type Page struct {
	Body []byte

	key   string
	stamp int64
	done  chan struct{} // closed when Body (or err) is set
	err   error
	elem  *list.Element // nil once no longer held
	size  int           // bytes counted against MaxBytes

	gzOnce sync.Once
	gz     []byte
}

var errRenderPanicked = errors.New("rendering panicked")

// Get returns key's page, calling render when none is held. Callers
// asking for a key being rendered wait for that one render (or for their
// ctx); other keys do not wait. The page is held only when render says
// keep (a full, successful render) and returns no error: a failed or
// partial render is handed to the callers already waiting, never to later
// ones. A render error is not handed to waiters: each tries again.
func (c *Rendered) Get(ctx context.Context, key string, stamp int64, render func() (body []byte, keep bool, err error)) (*Page, error) {
	for {
		c.mu.Lock()
		p := c.held[key]
		if p == nil {
			p = c.add(key, stamp)
			c.mu.Unlock()
			c.fill(p, render)
			return p, p.err
		}
		if p.elem != nil {
			c.lru.MoveToFront(p.elem)
		}
		c.mu.Unlock()
		select {
		case <-p.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if p.err == nil {
			return p, nil
		}
	}
}

// add holds a new, empty page for key (c.mu held), dropping every page of
// an older stamp.
func (c *Rendered) add(key string, stamp int64) *Page {
	if c.held == nil {
		c.held = map[string]*Page{}
	}
	if stamp > c.stamp {
		c.stamp = stamp
		for e := c.lru.Front(); e != nil; {
			next := e.Next()
			if p := e.Value.(*Page); p.stamp < stamp {
				c.drop(p)
			}
			e = next
		}
	}
	p := &Page{key: key, stamp: stamp, done: make(chan struct{})}
	p.elem = c.lru.PushFront(p)
	c.held[key] = p
	c.trim()
	return p
}

// fill renders p; it closes p.done however render ends (a panic goes on
// up to the server's recoverer, the waiters try again).
func (c *Rendered) fill(p *Page, render func() ([]byte, bool, error)) {
	keep := false
	p.err = errRenderPanicked
	defer func() {
		c.mu.Lock()
		if keep && p.err == nil {
			c.grow(p, len(p.Body))
		} else {
			c.drop(p)
		}
		c.mu.Unlock()
		close(p.done)
	}()
	c.renders.Add(1)
	p.Body, keep, p.err = render()
}

// Renders is how many renders Get has started.
func (c *Rendered) Renders() uint64 { return c.renders.Load() }

// gzipWriters are reused: a new writer allocates about 1 MB. Level 1, as
// web's compressHTML: it still shrinks HTML tables about 8x.
var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed) // a valid level: no error
	return zw
}}

// Gzip is the body gzipped, made on the first ask and kept with the page.
func (c *Rendered) Gzip(p *Page) []byte {
	p.gzOnce.Do(func() {
		var b bytes.Buffer
		zw := gzipWriters.Get().(*gzip.Writer)
		zw.Reset(&b)
		zw.Write(p.Body)
		zw.Close()
		zw.Reset(nil)
		gzipWriters.Put(zw)
		p.gz = b.Bytes()
		c.mu.Lock()
		c.grow(p, len(p.gz))
		c.mu.Unlock()
	})
	return p.gz
}

// grow counts n more bytes of p, if it is still held (c.mu held).
func (c *Rendered) grow(p *Page, n int) {
	if p.elem == nil {
		return
	}
	p.size += n
	c.bytes += n
	c.trim()
}

// trim drops the least recently used pages until the bounds hold (c.mu
// held).
func (c *Rendered) trim() {
	for c.lru.Len() > max(c.MaxEntries, 1) || c.bytes > c.MaxBytes && c.lru.Len() > 0 {
		c.drop(c.lru.Back().Value.(*Page))
	}
}

// drop stops holding p (c.mu held); its waiters still have it.
func (c *Rendered) drop(p *Page) {
	if p.elem == nil {
		return
	}
	c.lru.Remove(p.elem)
	p.elem = nil
	if c.held[p.key] == p {
		delete(c.held, p.key)
	}
	c.bytes -= p.size
}

// Len is how many pages are held (renders in flight included), and their
// bytes.
func (c *Rendered) Len() (pages, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len(), c.bytes
}

// ETag is a strong validator for the page of key, in the encoding named
// (e.g. "gzip"; "" for none): a hash of the key, so that a matching
// If-None-Match is answered without rendering. A representation per
// encoding, as a strong ETag must; the process's epoch tells its pages
// from a previous process's, whose counters named other states.
func ETag(key, encoding string) string {
	sum := sha256.Sum256([]byte(etagEpoch + "\x00" + encoding + "\x00" + key))
	return `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`
}

// etagEpoch differs from one process to the next.
var etagEpoch = func() string {
	var b [16]byte
	rand.Read(b[:])
	return string(b[:])
}()

// Gens numbers values by identity: the value last seen in a slot keeps
// its number, any other gets the next one. A number is never given twice,
// so it names one value for the life of the process (an address would
// not: the GC hands it to a later value), and it holds no value alive.
type Gens[T any] struct {
	mu   sync.Mutex
	n    uint64
	last map[string]gen[T]
}

type gen[T any] struct {
	p weak.Pointer[T]
	n uint64
}

// Of is p's number in slot.
func (g *Gens[T]) Of(slot string, p *T) uint64 {
	w := weak.Make(p)
	g.mu.Lock()
	defer g.mu.Unlock()
	if e, ok := g.last[slot]; ok && e.p == w {
		return e.n
	}
	if g.last == nil {
		g.last = map[string]gen[T]{}
	}
	g.n++
	g.last[slot] = gen[T]{w, g.n}
	return g.n
}
