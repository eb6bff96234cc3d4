package handlers

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/storage"
)

// pagesRig is a console's handlers over one flow of topics x parts
// partitions on two kfake clusters (no MM2: every lag is unknown, which
// costs the pages the same), with hours of RPO samples every 5 s.
type pagesRig struct {
	h      *Handlers
	mon    *monitor.Monitor
	store  *storage.Store
	cfg    *config.Config
	router chi.Router
	flow   string

	mu  sync.Mutex // now moves while pages are served (concurrency tests)
	now time.Time
}

// clock is the rig's now for the monitor and the handlers.
func (rig *pagesRig) clock() time.Time {
	rig.mu.Lock()
	defer rig.mu.Unlock()
	return rig.now
}

func newPagesRig(tb testing.TB, topics, parts int, history time.Duration) *pagesRig {
	tb.Helper()
	names := make([]string, topics)
	for i := range names {
		names[i] = fmt.Sprintf("t-%04d", i)
	}
	src := kfake.MustCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(parts), names...))
	tb.Cleanup(src.Close)
	dst := kfake.MustCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(parts), names...))
	tb.Cleanup(dst.Close)
	cfg := &config.Config{
		Clusters: map[string]*config.Cluster{"primary": {Bootstrap: src.ListenAddrs()}, "dr": {Bootstrap: dst.ListenAddrs()}},
		Flows: []*config.Flow{{Source: "primary", Target: "dr", ReplicationPolicy: "identity", OffsetSyncsLocation: "target",
			Topics: config.Topics{Include: []string{"t-.*"}}}},
		RefreshInterval: config.Duration(5 * time.Second),
	}
	if err := cfg.Normalize("test"); err != nil {
		tb.Fatal(err)
	}
	store, err := storage.Open(filepath.Join(tb.TempDir(), "db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { store.Close() })
	rig := &pagesRig{store: store, cfg: cfg, now: time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC), flow: cfg.Flows[0].Name}
	ctx := context.Background()
	for at := rig.now.Add(-history); at.Before(rig.now); at = at.Add(5 * time.Second) {
		rig.addSample(tb, at)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if rig.mon, err = monitor.NewMonitor(ctx, cfg, store, log); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(rig.mon.Close)
	rig.mon.Now = rig.clock
	rig.mon.Refresh(ctx) // saves the sample at rig.now
	if err := rig.mon.Flush(ctx); err != nil {
		tb.Fatal(err)
	}
	rig.h = &Handlers{Monitor: rig.mon, Store: store, Log: log, Now: rig.clock}
	r := chi.NewRouter()
	r.Get("/", rig.h.Overview)
	r.Get("/flows/{flow}", rig.h.Flow)
	r.Get("/flows/{flow}/topics/{topic}", rig.h.Topic)
	r.Get("/flows/{flow}/topics/{topic}/partitions/{partition}", rig.h.Partition)
	rig.router = r
	return rig
}

// addSample stores a flow sample at at; every 7th RPO is unknown (a gap).
func (rig *pagesRig) addSample(tb testing.TB, at time.Time) {
	tb.Helper()
	x := storage.FlowSample{AtMs: at.UnixMilli(), Status: "ok"}
	if n := at.Unix() / 5; n%7 != 0 {
		rpo := (n % 600) * 100
		x.RPOMs = &rpo
	}
	if err := rig.store.AddFlowSample(context.Background(), rig.flow, x); err != nil {
		tb.Fatal(err)
	}
}

// tick is the next refresh, d later.
func (rig *pagesRig) tick(d time.Duration) {
	rig.mu.Lock()
	rig.now = rig.now.Add(d)
	rig.mu.Unlock()
	rig.mon.Refresh(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rig.mon.Flush(ctx); err != nil {
		panic(err) // the test's store cannot be written
	}
}

// get serves one GET and returns the response.
func (rig *pagesRig) get(tb testing.TB, url string, header ...string) *httptest.ResponseRecorder {
	tb.Helper()
	req := httptest.NewRequest(http.MethodGet, url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	rig.router.ServeHTTP(w, req)
	return w
}

// catalogOf is the concrete catalog behind h.Catalog, for a worker the
// test builds; nil when the rig has none.
func catalogOf(h *Handlers) *catalog.Catalog {
	c, _ := h.Catalog.(*catalog.Catalog)
	return c
}
