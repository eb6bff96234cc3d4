package handlers

import (
	"bytes"
	"compress/flate"
	"hash/crc32"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"weak"

	"github.com/drconsole/drconsole/flowstate"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// MetricsExposition serves /metrics: the kafka_mirror_* families are
// text-encoded (and deflated) once per set of monitor snapshots, so a
// scrape copies bytes instead of re-collecting, sorting and encoding every
// series; Live (Go, process, drconsole_*) is gathered at most once a
// second (liveMaxAge), and scrapes within it share the response's bytes.
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

	liveMu sync.Mutex
	live   *live // the newest gathering of Live (metrics_serve.go)
}

// exposition is the encoded kafka_mirror_* text of one set of snapshots.
type exposition struct {
	// key names the snapshots without keeping them alive (16 MB at 100k
	// partitions); a weak pointer never equals one made from a later
	// snapshot, even one allocated where a collected one was.
	key     []weak.Pointer[flowstate.FlowSnapshot]
	seq     uint64
	done    chan struct{}
	built   bool
	plain   []byte
	deflate []byte // plain, deflated and sync-flushed but not final: the live part is appended
	crc     uint32
	etag    string
	sizes   map[*family]int // bytes per family: the next build's buffer sizes
}

// textContentType is what promhttp sends for the text format.
var textContentType = string(expfmt.NegotiateAccept(http.Header{}, expfmt.FmtText))

// etagEpoch tells this process's generations from a previous one's.
var etagEpoch = strconv.FormatInt(time.Now().UnixNano(), 36)

// get returns the exposition of the snapshots published now, building it
// when none matches; concurrent callers share one build.
func (m *MetricsExposition) get(r *http.Request) *exposition {
	snaps := m.Collector.Monitor.Snapshots()
	key := make([]weak.Pointer[flowstate.FlowSnapshot], len(snaps))
	for i, s := range snaps {
		key[i] = weak.Make(s)
	}
	m.mu.Lock()
	if e := m.cur; e != nil && slices.Equal(e.key, key) {
		m.mu.Unlock()
		return e
	}
	if e := m.building; e != nil && slices.Equal(e.key, key) {
		m.mu.Unlock()
		select {
		case <-e.done:
			return e
		case <-r.Context().Done():
			return nil
		}
	}
	m.seq++
	e := &exposition{key: key, seq: m.seq, done: make(chan struct{})}
	m.building = e
	var prev map[*family]int
	if m.cur != nil {
		prev = m.cur.sizes
	}
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		if m.building == e {
			m.building = nil
		}
		if e.built && (m.cur == nil || m.cur.seq < e.seq) {
			m.cur = e
		}
		m.mu.Unlock()
		close(e.done)
	}()
	e.build(m.Collector, snaps, prev)
	return e
}

func (e *exposition) build(c MetricsCollector, snaps []*flowstate.FlowSnapshot, prev map[*family]int) {
	plain, sizes := encodeMirror(c, snaps, prev)
	e.sizes = sizes
	var z bytes.Buffer
	zw, _ := flate.NewWriter(&z, flate.BestSpeed) // level valid: no error
	zw.Write(plain)
	zw.Flush()
	e.deflate, e.crc = z.Bytes(), crc32.ChecksumIEEE(plain)
	e.etag = `W/"` + etagEpoch + "-" + strconv.FormatUint(e.seq, 10) + `"`
	e.plain, e.built = plain, true
}

// encodeMirror writes the kafka_mirror_* families of snaps in the
// Prometheus text format (version 0.0.4), each family's samples together,
// and returns each family's size. sizes (the previous build's) presize
// the buffers: 100k partitions are 16 MB, and growing by doubling would
// make as much garbage again.
func encodeMirror(c MetricsCollector, snaps []*flowstate.FlowSnapshot, sizes map[*family]int) ([]byte, map[*family]int) {
	bufs := map[*family]*bytes.Buffer{}
	c.eachMirror(snaps, func(f *family, v float64, labels ...string) {
		b := bufs[f]
		if b == nil {
			b = bytes.NewBuffer(make([]byte, 0, sizes[f]+sizes[f]/16))
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
	next := map[*family]int{}
	for f, b := range bufs {
		n += b.Len() + len(f.help) + 2*len(f.name) + 32
		next[f] = b.Len()
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
	return out.Bytes(), next
}

// The text format's escaping (as expfmt writes it).
var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)
