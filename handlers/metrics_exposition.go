package handlers

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/drconsole/drconsole/monitor"
)

// MetricsExposition serves /metrics: the kafka_mirror_* families are
// text-encoded (and deflated) once per set of monitor snapshots, so a
// scrape copies bytes instead of re-collecting, sorting and encoding every
// series; Live (Go, process, drconsole_*) is gathered on every scrape.
// The cached bytes are built from exactly the snapshots the monitor
// publishes when the scrape arrives, never older.
type MetricsExposition struct {
	Collector MetricsCollector
	Live      prometheus.Gatherer
	Log       *slog.Logger

	mu       sync.Mutex
	cur      *exposition // newest built
	building *exposition // in flight; waiters block on its done
	seq      uint64
}

// exposition is the encoded kafka_mirror_* text of one set of snapshots.
type exposition struct {
	key     []*monitor.FlowSnapshot
	seq     uint64
	done    chan struct{}
	plain   []byte
	deflate []byte // plain, deflated and sync-flushed but not final: the live part is appended
	crc     uint32
	etag    string
}

// textContentType is what promhttp sends for the text format.
var textContentType = string(expfmt.NegotiateAccept(http.Header{}, expfmt.FmtText))

// etagEpoch tells this process's generations from a previous one's.
var etagEpoch = strconv.FormatInt(time.Now().UnixNano(), 36)

// get returns the exposition of the snapshots published now, building it
// when none matches; concurrent callers share one build.
func (m *MetricsExposition) get(r *http.Request) *exposition {
	snaps := m.Collector.Monitor.Snapshots()
	m.mu.Lock()
	if e := m.cur; e != nil && slices.Equal(e.key, snaps) {
		m.mu.Unlock()
		return e
	}
	if e := m.building; e != nil && slices.Equal(e.key, snaps) {
		m.mu.Unlock()
		select {
		case <-e.done:
			return e
		case <-r.Context().Done():
			return nil
		}
	}
	m.seq++
	e := &exposition{key: snaps, seq: m.seq, done: make(chan struct{})}
	m.building = e
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		if m.building == e {
			m.building = nil
		}
		if e.plain != nil && (m.cur == nil || m.cur.seq < e.seq) {
			m.cur = e
		}
		m.mu.Unlock()
		close(e.done)
	}()
	e.build(m.Collector)
	return e
}

func (e *exposition) build(c MetricsCollector) {
	plain := encodeMirror(c, e.key)
	var z bytes.Buffer
	zw, _ := flate.NewWriter(&z, flate.BestSpeed) // level valid: no error
	zw.Write(plain)
	zw.Flush()
	e.deflate, e.crc = z.Bytes(), crc32.ChecksumIEEE(plain)
	e.etag = `W/"` + etagEpoch + "-" + strconv.FormatUint(e.seq, 10) + `"`
	e.plain = plain
}

// encodeMirror writes the kafka_mirror_* families of snaps in the
// Prometheus text format (version 0.0.4), each family's samples together.
func encodeMirror(c MetricsCollector, snaps []*monitor.FlowSnapshot) []byte {
	bufs := map[*family]*bytes.Buffer{}
	c.eachMirror(snaps, func(f *family, v float64, labels ...string) {
		b := bufs[f]
		if b == nil {
			b = &bytes.Buffer{}
			bufs[f] = b
		}
		b.WriteString(f.name)
		for i, li := range f.order {
			if i == 0 {
				b.WriteByte('{')
			} else {
				b.WriteByte(',')
			}
			b.WriteString(f.labels[li])
			b.WriteString(`="`)
			labelEscaper.WriteString(b, labels[li])
			b.WriteByte('"')
		}
		if len(f.order) > 0 {
			b.WriteByte('}')
		}
		b.WriteByte(' ')
		b.Write(strconv.AppendFloat(b.AvailableBuffer(), v, 'g', -1, 64))
		b.WriteByte('\n')
	})
	n := 0
	for _, b := range bufs {
		n += b.Len() + 512
	}
	out := bytes.NewBuffer(make([]byte, 0, n))
	for _, f := range mirrorFamilies {
		b := bufs[f]
		if b == nil {
			continue // no sample: no HELP or TYPE either, as promhttp does
		}
		out.WriteString("# HELP " + f.name + " ")
		helpEscaper.WriteString(out, f.help)
		kind := " gauge\n"
		if f.counter {
			kind = " counter\n"
		}
		out.WriteString("\n# TYPE " + f.name + kind)
		out.Write(b.Bytes())
	}
	return out.Bytes()
}

// The text format's escaping (as expfmt writes it).
var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

// ServeHTTP answers a scrape: the cached families, then the live ones,
// gzip-compressed when the client accepts it. The ETag names the snapshot
// generation; the live series are not part of it (a 304 means the
// kafka_mirror_* figures have not changed since).
func (m *MetricsExposition) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e := m.get(r)
	if e == nil || e.plain == nil {
		http.Error(w, "metrics unavailable", http.StatusServiceUnavailable)
		return
	}
	h := w.Header()
	h.Add("Vary", "Accept-Encoding")
	h.Set("ETag", e.etag)
	if inm := r.Header.Get("If-None-Match"); inm != "" && strings.Contains(inm, e.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	var live bytes.Buffer
	mfs, err := m.Live.Gather()
	if err != nil && m.Log != nil {
		m.Log.Warn("gathering process metrics", "err", err)
	}
	enc := expfmt.NewEncoder(&live, expfmt.FmtText)
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil && m.Log != nil {
			m.Log.Warn("encoding process metrics", "err", err)
		}
	}
	h.Set("Content-Type", textContentType)
	if !acceptsGzip(r.Header.Get("Accept-Encoding")) {
		h.Set("Content-Length", strconv.Itoa(len(e.plain)+live.Len()))
		w.Write(e.plain)
		w.Write(live.Bytes())
		return
	}
	body := e.gzipWith(live.Bytes())
	h.Set("Content-Encoding", "gzip")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
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

// acceptsGzip reads Accept-Encoding: gzip (or *) with a q-value above 0.
func acceptsGzip(header string) bool {
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
