package handlers

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/common/expfmt"
)

// ServeHTTP answers a scrape: the cached families, then the live ones,
// gzip-compressed when the client accepts it. The ETag names the snapshot
// generation; the live series are not part of it (a 304 means the
// kafka_mirror_* figures have not changed since).
func (m *MetricsExposition) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e := m.get(r)
	if e == nil || !e.built {
		http.Error(w, "metrics unavailable", http.StatusServiceUnavailable)
		return
	}
	h := w.Header()
	h.Add("Vary", "Accept-Encoding")
	h.Set("ETag", e.etag)
	if etagMatches(r.Header.Get("If-None-Match"), e.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := m.liveBody(e, time.Now())
	h.Set("Content-Type", textContentType)
	if !AcceptsGzip(r.Header.Get("Accept-Encoding")) {
		h.Set("Content-Length", strconv.Itoa(len(e.plain)+len(body.text)))
		w.Write(e.plain)
		w.Write(body.text)
		return
	}
	gz := body.gzip(e)
	h.Set("Content-Encoding", "gzip")
	h.Set("Content-Length", strconv.Itoa(len(gz)))
	w.Write(gz)
}

// liveMaxAge bounds how old the live series of a scrape may be. Scrapes
// within it share one gathering and one compressed body: 32 concurrent
// scrapers each gzipping their own copy held 32 compressors (about 1 MB
// each) at once, the console's memory peak at 100k partitions.
const liveMaxAge = time.Second

// live is one gathering of the live series and, made on the first ask,
// the whole response gzipped with it.
type live struct {
	e    *exposition // the cached families it was appended to
	at   time.Time
	text []byte
	once sync.Once
	gz   []byte
}

// liveBody returns the live series gathered at most liveMaxAge before now,
// for the exposition e; concurrent scrapes wait for one gathering.
func (m *MetricsExposition) liveBody(e *exposition, now time.Time) *live {
	m.liveMu.Lock()
	defer m.liveMu.Unlock()
	if l := m.live; l != nil && l.e == e && now.Sub(l.at) < liveMaxAge && !now.Before(l.at) {
		return l
	}
	var text bytes.Buffer
	mfs, err := m.Live.Gather()
	if err != nil && m.Log != nil {
		m.Log.Warn("gathering process metrics", "err", err)
	}
	enc := expfmt.NewEncoder(&text, expfmt.FmtText)
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil && m.Log != nil {
			m.Log.Warn("encoding process metrics", "err", err)
		}
	}
	m.live = &live{e: e, at: now, text: text.Bytes()}
	return m.live
}

// gzip is e's cached families and the live series as one gzip member.
func (l *live) gzip(e *exposition) []byte {
	l.once.Do(func() { l.gz = e.gzipWith(l.text) })
	return l.gz
}

var flatePool = sync.Pool{New: func() any { zw, _ := flate.NewWriter(nil, flate.BestSpeed); return zw }}

// gzipWith is one gzip member of plain followed by live: the cached deflate
// blocks, live's blocks (the last one final), then the CRC and length of
// both. One member, not two concatenated, so every client decodes it.
func (e *exposition) gzipWith(live []byte) []byte {
	out := make([]byte, 0, 10+len(e.deflate)+len(live)/2+64)
	out = append(out, 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255) // RFC 1952 header: deflate, no name, no mtime, OS unknown
	out = append(out, e.deflate...)
	buf := bytes.NewBuffer(out)
	zw := flatePool.Get().(*flate.Writer)
	zw.Reset(buf)
	zw.Write(live)
	zw.Close()
	flatePool.Put(zw)
	out = buf.Bytes()
	out = binary.LittleEndian.AppendUint32(out, crc32.Update(e.crc, crc32.IEEETable, live))
	return binary.LittleEndian.AppendUint32(out, uint32(len(e.plain)+len(live)))
}

// AcceptsGzip reads Accept-Encoding: gzip (or *) with a q-value above 0;
// an explicit gzip;q=0 wins over *. web's compressHTML asks it too, so a
// handler that negotiates its own encoding and the middleware agree.
func AcceptsGzip(header string) bool {
	star := false
	for part := range strings.SplitSeq(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		name = strings.ToLower(strings.TrimSpace(name))
		if name != "gzip" && name != "*" {
			continue
		}
		ok := true
		if q, found := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q="); found {
			v, err := strconv.ParseFloat(q, 64)
			ok = err == nil && v > 0
		}
		if name == "gzip" {
			return ok
		}
		star = ok
	}
	return star
}
