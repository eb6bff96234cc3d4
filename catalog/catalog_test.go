package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

const (
	fixtureEvents = "flink-2.2.1-p2-events4-stop"        // events-0..3, uid kafka-source, checkpoint 23
	fixtureOrders = "flink-2.2.1-p1-orders2-users3-stop" // orders-0..1 + users-0..2, uid orders-users-source, checkpoint 11
)

type expected struct {
	CheckpointID int64            `json:"checkpoint_id"`
	SourceUID    string           `json:"source_uid"`
	Offsets      map[string]int64 `json:"topic_partitions"`
}

func fixtureDir(name string) string {
	return filepath.Join("..", "flink", "testdata", "savepoints", name)
}

func loadExpected(t *testing.T, name string) expected {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir(name), "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e expected
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	if len(e.Offsets) == 0 || e.SourceUID == "" || e.CheckpointID == 0 {
		t.Fatalf("%s/expected.json: %+v", name, e)
	}
	return e
}

// copyFixture copies a real savepoint's _metadata into dst (created) and
// dates it a minute back, so that directory scans see it as settled.
func copyFixture(t *testing.T, name, dst string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir(name), "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	meta := filepath.Join(dst, "_metadata")
	if err := os.WriteFile(meta, b, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Minute)
	if err := os.Chtimes(meta, old, old); err != nil {
		t.Fatal(err)
	}
	return dst
}

func openStore(t *testing.T) *storage.Store {
	t.Helper()
	s, err := storage.Open(filepath.Join(t.TempDir(), "drconsole.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// fakeFlink is a stand-in JobManager answering with the shapes of real
// Flink 2.2.1 (as flink/rest_test.go does); routes can change mid-test.
type fakeFlink struct {
	URL    string
	mu     sync.Mutex
	routes map[string]func(w http.ResponseWriter, body map[string]any)
}

func newFakeFlink(t *testing.T) *fakeFlink {
	f := &fakeFlink{routes: map[string]func(http.ResponseWriter, map[string]any){}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		h, ok := f.routes[r.Method+" "+r.URL.Path]
		f.mu.Unlock()
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"errors":["Not found: `+r.URL.Path+`"]}`)
			return
		}
		var body map[string]any
		if r.Body != nil {
			json.NewDecoder(r.Body).Decode(&body)
		}
		w.Header().Set("Content-Type", "application/json")
		h(w, body)
	}))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

func (f *fakeFlink) set(route string, h func(w http.ResponseWriter, body map[string]any)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if h == nil {
		delete(f.routes, route)
		return
	}
	f.routes[route] = h
}

func (f *fakeFlink) json(route, body string) {
	f.set(route, func(w http.ResponseWriter, _ map[string]any) { io.WriteString(w, body) })
}

// deadURL is an http URL nothing listens on.
func deadURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

type clock struct{ t atomic.Int64 }

func (c *clock) now() time.Time      { return time.UnixMilli(c.t.Load()) }
func (c *clock) set(t time.Time)     { c.t.Store(t.UnixMilli()) }
func (c *clock) add(d time.Duration) { c.t.Add(d.Milliseconds()) }

func entriesByPath(t *testing.T, s *storage.Store) map[string]model.Savepoint {
	t.Helper()
	all, err := s.Savepoints(context.Background(), storage.SavepointFilter{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]model.Savepoint{}
	for _, sp := range all {
		out[sp.Path] = sp
	}
	return out
}

func checkOffsets(t *testing.T, sp model.Savepoint, want expected) {
	t.Helper()
	got, err := sp.Offsets()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want.Offsets) {
		t.Fatalf("%s: offsets %v, want %v (read error %q)", sp.Path, got, want.Offsets, sp.ReadError)
	}
	for k, v := range want.Offsets {
		if got[k] != v {
			t.Fatalf("%s: offsets %v, want %v", sp.Path, got, want.Offsets)
		}
	}
	if sp.SourceUID != want.SourceUID || sp.CheckpointID == nil || *sp.CheckpointID != want.CheckpointID || sp.ReadError != "" {
		t.Fatalf("%s: uid %q checkpoint %v read error %q, want uid %q checkpoint %d", sp.Path, sp.SourceUID, sp.CheckpointID, sp.ReadError, want.SourceUID, want.CheckpointID)
	}
}

func TestSyncRemembersWhatFlinkForgot(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	job := "a1b2c3d4e5f60718293a4b5c6d7e8f90"
	sp := copyFixture(t, fixtureEvents, filepath.Join(base, "sp", "savepoint-a1b2c3-5f0e1d2c3b4a"))
	chk11 := copyFixture(t, fixtureOrders, filepath.Join(base, "ck", job, "chk-11"))
	chk9 := copyFixture(t, fixtureOrders, filepath.Join(base, "ck", job, "chk-9")) // retained (num-retained 2)
	chk8 := copyFixture(t, fixtureOrders, filepath.Join(base, "ck", job, "chk-8")) // discarded: files not deleted yet
	chk4 := filepath.Join(base, "ck", job, "chk-4")                                // disposed: listed, gone

	ff := newFakeFlink(t)
	ff.json("GET /jobs/overview", `{"jobs":[
		{"jid":"`+job+`","name":"events","start-time":1,"end-time":-1,"duration":5,"state":"RUNNING","last-modification":2,"tasks":{"running":2},"pending-operators":0},
		{"jid":"ffff0000ffff0000ffff0000ffff0000","name":"batch","start-time":1,"end-time":3,"duration":2,"state":"FINISHED","last-modification":3,"tasks":{"finished":1},"pending-operators":0}]}`)
	ff.json("GET /jobs/"+job+"/checkpoints", `{"counts":{"restored":0,"total":6,"in_progress":1,"completed":4,"failed":1},
		"latest":{"completed":{"className":"completed","id":11,"status":"COMPLETED","is_savepoint":false,"checkpoint_type":"CHECKPOINT","external_path":"file:`+chk11+`","state_size":3700,"trigger_timestamp":5000,"latest_ack_timestamp":5100,"discarded":false},
		"savepoint":{"className":"completed","id":23,"status":"COMPLETED","is_savepoint":true,"checkpoint_type":"SAVEPOINT","external_path":"file:`+sp+`","state_size":4562,"trigger_timestamp":1000,"latest_ack_timestamp":1100,"discarded":false},
		"failed":null,"restored":null},
		"history":[
		{"className":"in_progress","id":12,"status":"IN_PROGRESS","is_savepoint":false,"checkpoint_type":"CHECKPOINT","trigger_timestamp":6000},
		{"className":"completed","id":11,"status":"COMPLETED","is_savepoint":false,"checkpoint_type":"CHECKPOINT","external_path":"file:`+chk11+`","state_size":3700,"trigger_timestamp":5000,"latest_ack_timestamp":5100},
		{"className":"failed","id":10,"status":"FAILED","is_savepoint":false,"checkpoint_type":"CHECKPOINT","trigger_timestamp":4000,"failure_message":"timeout"},
		{"className":"completed","id":9,"status":"COMPLETED","is_savepoint":false,"checkpoint_type":"CHECKPOINT","external_path":"file://`+chk9+`/","state_size":3700,"trigger_timestamp":3000,"latest_ack_timestamp":3050},
		{"className":"completed","id":8,"status":"COMPLETED","is_savepoint":false,"checkpoint_type":"CHECKPOINT","external_path":"file:`+chk8+`","state_size":3700,"trigger_timestamp":2000,"latest_ack_timestamp":2050,"discarded":true},
		{"className":"completed","id":4,"status":"COMPLETED","is_savepoint":false,"checkpoint_type":"CHECKPOINT","external_path":"file:`+chk4+`","state_size":3700,"trigger_timestamp":1900,"latest_ack_timestamp":1950},
		{"className":"completed","id":5,"status":"COMPLETED","is_savepoint":false,"checkpoint_type":"CHECKPOINT","external_path":"s3://bucket/ck/`+job+`/chk-5","state_size":3700,"trigger_timestamp":1800,"latest_ack_timestamp":1850},
		{"className":"completed","id":7,"status":"COMPLETED","is_savepoint":true,"checkpoint_type":"SYNC_SAVEPOINT","external_path":"s3://bucket/savepoints/savepoint-a1b2c3-000000000007","state_size":4000,"trigger_timestamp":1500,"latest_ack_timestamp":1600},
		{"className":"completed","id":23,"status":"COMPLETED","is_savepoint":true,"checkpoint_type":"SAVEPOINT","external_path":"file:`+sp+`","state_size":4562,"trigger_timestamp":1000,"latest_ack_timestamp":1100},
		{"className":"completed","id":6,"status":"COMPLETED","is_savepoint":false,"checkpoint_type":"CHECKPOINT","external_path":"<checkpoint-not-externally-addressable>","trigger_timestamp":900}]}`)
	// The finished batch job had checkpointing off: its stats are a 404.

	store := openStore(t)
	var clk clock
	t1 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clk.set(t1)
	cfg := &config.Config{FlinkTargets: []*config.FlinkTarget{
		{Name: "flink-dead", RestURL: deadURL(t), Region: "dr"},
		{Name: "flink-primary", RestURL: ff.URL, Region: "primary"},
	}}
	c := &Catalog{Store: store, Config: cfg, Log: quietLog(), Now: clk.now}

	err := c.Sync(ctx)
	if err == nil || !strings.Contains(err.Error(), "flink-dead") || strings.Contains(err.Error(), "flink-primary") {
		t.Fatalf("Sync error = %v; want only the dead target reported", err)
	}
	got := entriesByPath(t, store)
	spPath, chk11Path, chk9Path := "file:"+sp, "file:"+chk11, "file:"+chk9
	s3Path := "s3://bucket/savepoints/savepoint-a1b2c3-000000000007"
	if len(got) != 4 {
		t.Fatalf("catalog after the first sync has %d entries, want 4 (savepoint, chk-11, chk-9, s3 savepoint): %v", len(got), got)
	}
	for _, p := range []string{spPath, chk11Path, chk9Path, s3Path} {
		e, ok := got[p]
		if !ok {
			t.Fatalf("%s missing from the catalog: %v", p, got)
		}
		if e.FlinkTarget != "flink-primary" || e.JobID != job || e.JobName != "events" || e.Origin != model.OriginREST ||
			e.Status != model.SavepointCompleted || e.FirstSeenMs != t1.UnixMilli() || e.LastSeenMs != t1.UnixMilli() {
			t.Fatalf("%s: %+v", p, e)
		}
	}
	s := got[spPath]
	if s.Kind != model.KindSavepoint || *s.TriggerMs != 1000 || *s.CompletedMs != 1100 || *s.SizeBytes != 4562 {
		t.Fatalf("savepoint entry %+v", s)
	}
	checkOffsets(t, s, loadExpected(t, fixtureEvents))
	checkOffsets(t, got[chk11Path], loadExpected(t, fixtureOrders))
	checkOffsets(t, got[chk9Path], loadExpected(t, fixtureOrders))
	if got[chk11Path].Kind != model.KindCheckpoint || got[s3Path].Kind != model.KindSavepoint {
		t.Fatalf("kinds: chk-11 %s, s3 %s", got[chk11Path].Kind, got[s3Path].Kind)
	}
	if e := got[s3Path]; e.OffsetsJSON != "" || !strings.Contains(e.ReadError, "s3://") || !strings.Contains(e.ReadError, "s3.endpoint") {
		t.Fatalf("s3 entry: offsets %q, read error %q", e.OffsetsJSON, e.ReadError)
	}

	// Seen again a minute later: last-seen moves, first-seen stays. Flink
	// has meanwhile disposed of chk-9 (still listed): it is not seen again,
	// but remembered.
	if err := os.RemoveAll(chk9); err != nil {
		t.Fatal(err)
	}
	clk.add(time.Minute)
	if err := c.Sync(ctx); err == nil {
		t.Fatal("the dead target is still dead")
	}
	second := entriesByPath(t, store)
	if e := second[spPath]; e.FirstSeenMs != t1.UnixMilli() || e.LastSeenMs != t1.Add(time.Minute).UnixMilli() {
		t.Fatalf("after the second sync: first %d last %d", e.FirstSeenMs, e.LastSeenMs)
	}
	if e := second[chk9Path]; e.LastSeenMs != t1.UnixMilli() || e.OffsetsJSON != got[chk9Path].OffsetsJSON {
		t.Fatalf("disposed chk-9 after the second sync: %+v", e)
	}

	// The JobManager restarts and forgets everything; the catalog does not.
	ff.json("GET /jobs/overview", `{"jobs":[]}`)
	ff.set("GET /jobs/"+job+"/checkpoints", nil)
	clk.add(time.Minute)
	cfg.FlinkTargets = cfg.FlinkTargets[1:]
	if err := c.Sync(ctx); err != nil {
		t.Fatalf("sync after the restart: %v", err)
	}
	after := entriesByPath(t, store)
	if len(after) != 4 {
		t.Fatalf("catalog after Flink forgot: %d entries, want 4", len(after))
	}
	for p, e := range after {
		if e.LastSeenMs != second[p].LastSeenMs || e.OffsetsJSON != got[p].OffsetsJSON {
			t.Fatalf("%s after Flink forgot: %+v", p, e)
		}
	}
	checkOffsets(t, after[spPath], loadExpected(t, fixtureEvents))
}

func TestScanDirs(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	outside := t.TempDir()
	job := "0123456789abcdef0123456789abcdef"
	sp := copyFixture(t, fixtureEvents, filepath.Join(root, "savepoint-012345-aaaaaaaaaaaa"))
	chk := copyFixture(t, fixtureOrders, filepath.Join(root, "checkpoints", job, "chk-11"))
	three := copyFixture(t, fixtureEvents, filepath.Join(root, "x", "y", "savepoint-three"))
	copyFixture(t, fixtureEvents, filepath.Join(root, "a", "b", "c", "savepoint-too-deep"))
	copyFixture(t, fixtureEvents, filepath.Join(outside, "savepoint-outside"))
	// A half-built savepoint (a rewrite killed before its rename): hidden.
	copyFixture(t, fixtureEvents, filepath.Join(root, ".savepoint-dr.rewrite-1"))
	for link, target := range map[string]string{
		"loop":   root,                     // a link loop
		"alias":  filepath.Join(root, "x"), // a second way to x/y/savepoint-three
		"escape": outside,                  // leads out of the directory
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "savepoint-bad"), 0o755); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(root, "savepoint-bad", "_metadata")
	if err := os.WriteFile(bad, []byte("this is not a savepoint"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Minute)
	os.Chtimes(bad, old, old)
	fresh := filepath.Join(root, "savepoint-fresh")
	if err := os.MkdirAll(fresh, 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(sp, "_metadata"))
	if err := os.WriteFile(filepath.Join(fresh, "_metadata"), b, 0o644); err != nil {
		t.Fatal(err)
	}

	store := openStore(t)
	var clk clock
	clk.set(time.Now())
	c := &Catalog{Store: store, Config: &config.Config{SavepointDirs: []string{root}}, Log: quietLog(), Now: clk.now}
	if err := c.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	got := entriesByPath(t, store)
	want := []string{"file:" + sp, "file:" + chk, "file:" + three, "file:" + filepath.Join(root, "savepoint-bad")}
	if len(got) != len(want) {
		t.Fatalf("scan found %d entries, want %d: %v", len(got), len(want), keys(got))
	}
	for _, p := range want {
		e, ok := got[p]
		if !ok {
			t.Fatalf("scan missed %s; found %v", p, keys(got))
		}
		if e.Origin != model.OriginScan || e.Status != model.SavepointCompleted || e.CompletedMs == nil || e.SizeBytes == nil || *e.SizeBytes == 0 {
			t.Fatalf("%s: %+v", p, e)
		}
	}
	checkOffsets(t, got["file:"+sp], loadExpected(t, fixtureEvents))
	checkOffsets(t, got["file:"+three], loadExpected(t, fixtureEvents))
	c11 := got["file:"+chk]
	checkOffsets(t, c11, loadExpected(t, fixtureOrders))
	if c11.Kind != model.KindCheckpoint || c11.JobID != job || got["file:"+sp].Kind != model.KindSavepoint {
		t.Fatalf("kinds/job from directory names: chk %+v", c11)
	}
	if e := got["file:"+filepath.Join(root, "savepoint-bad")]; e.OffsetsJSON != "" || !strings.Contains(e.ReadError, "_metadata") {
		t.Fatalf("bad savepoint: offsets %q error %q", e.OffsetsJSON, e.ReadError)
	}

	// The fresh one is picked up once it has settled.
	clk.add(5 * time.Second)
	if err := c.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	e, ok := entriesByPath(t, store)["file:"+fresh]
	if !ok {
		t.Fatal("the settled savepoint was not found")
	}
	checkOffsets(t, e, loadExpected(t, fixtureEvents))

	// A directory that vanished is reported, the others still scanned.
	c.Config.SavepointDirs = []string{filepath.Join(root, "gone"), root}
	if err := c.Sync(ctx); err == nil || !strings.Contains(err.Error(), "gone") {
		t.Fatalf("missing directory: %v", err)
	}
}

func keys(m map[string]model.Savepoint) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestRegister(t *testing.T) {
	ctx := context.Background()
	parent := t.TempDir()
	root := filepath.Join(parent, "savepoints")
	evil := filepath.Join(parent, "savepoints-evil")
	outside := t.TempDir()
	ok := copyFixture(t, fixtureEvents, filepath.Join(root, "savepoint-ok"))
	copyFixture(t, fixtureEvents, filepath.Join(evil, "savepoint-x"))
	out := copyFixture(t, fixtureOrders, filepath.Join(outside, "savepoint-out"))
	if err := os.Symlink(out, filepath.Join(root, "link-out")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	store := openStore(t)
	c := &Catalog{Store: store, Config: &config.Config{SavepointDirs: []string{root + "/"}}, Log: quietLog()}

	for _, tc := range []struct {
		path, want string
		outside    bool
	}{
		{out, "not inside", true},
		{"file:" + out, "not inside", true},
		{root + "/../" + filepath.Base(outside) + "/savepoint-out", "not inside", true},
		{root + "/savepoint-ok/../../savepoints-evil/savepoint-x", "not inside", true},
		{"file://" + root + "/../savepoints-evil/savepoint-x", "not inside", true},
		{filepath.Join(evil, "savepoint-x"), "not inside", true}, // a name prefix is not a parent
		{filepath.Join(root, "link-out"), "not inside", true},    // a link out of the directory
		{"savepoint-ok", "not an absolute path", false},
		{"../savepoints/savepoint-ok", "not an absolute path", false},
		{"s3://bucket/savepoints/savepoint-ok", "s3://", false},
		{"file://otherhost" + ok, "host", false},
		{filepath.Join(root, "nope"), "does not exist", false},
		{filepath.Join(root, "empty"), "no _metadata", false},
	} {
		id, err := c.Register(ctx, tc.path)
		if err == nil || id != 0 || !strings.Contains(err.Error(), tc.want) || errors.Is(err, ErrOutsideDirs) != tc.outside {
			t.Errorf("Register(%q) = %d, %v; want an error containing %q", tc.path, id, err, tc.want)
		}
	}
	if all, _ := store.Savepoints(ctx, storage.SavepointFilter{}); len(all) != 0 {
		t.Fatalf("refused registrations left entries: %+v", all)
	}

	id, err := c.Register(ctx, filepath.Join(ok, "_metadata"))
	if err != nil || id == 0 {
		t.Fatalf("register: %d %v", id, err)
	}
	sp, err := store.SavepointByID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if sp.Path != "file:"+ok || sp.Origin != model.OriginManual || sp.Kind != model.KindSavepoint {
		t.Fatalf("registered %+v", sp)
	}
	checkOffsets(t, sp, loadExpected(t, fixtureEvents))
	if id2, err := c.Register(ctx, "file://"+ok+"/"); err != nil || id2 != id {
		t.Fatalf("registering the same savepoint as a file URI: %d %v (want %d)", id2, err, id)
	}

	// A broken savepoint is registered with its error; fixed and registered
	// again, the error is gone.
	broken := filepath.Join(root, "team-a", "savepoint-broken")
	if err := os.MkdirAll(broken, 0o755); err != nil {
		t.Fatal(err)
	}
	meta, _ := os.ReadFile(filepath.Join(ok, "_metadata"))
	if err := os.WriteFile(filepath.Join(broken, "_metadata"), meta[:100], 0o644); err != nil {
		t.Fatal(err)
	}
	bid, err := c.Register(ctx, broken)
	if bid == 0 || !errors.Is(err, model.ErrOffsetsUnreadable) {
		t.Fatalf("truncated savepoint: %d %v", bid, err)
	}
	if e, _ := store.SavepointByID(ctx, bid); e.ReadError == "" || e.OffsetsJSON != "" {
		t.Fatalf("truncated savepoint entry %+v", e)
	}
	if err := os.WriteFile(filepath.Join(broken, "_metadata"), meta, 0o644); err != nil {
		t.Fatal(err)
	}
	if id3, err := c.Register(ctx, broken); err != nil || id3 != bid {
		t.Fatalf("register after the fix: %d %v", id3, err)
	}
	e, _ := store.SavepointByID(ctx, bid)
	checkOffsets(t, e, loadExpected(t, fixtureEvents))

	c.Config.SavepointDirs = nil
	if _, err := c.Register(ctx, ok); err == nil || !strings.Contains(err.Error(), "savepoint_dirs") {
		t.Fatalf("without savepoint_dirs: %v", err)
	}
}

// testStart asks Flink for the savepoint the way runbook/internal/effect
// does (the catalog sends no POST itself; effect's tests check the request).
func testStart(ctx context.Context, cl *flink.RESTClient, jobID string, stop bool) (string, error) {
	path, body := "/jobs/"+jobID+"/savepoints", map[string]any{"cancel-job": false}
	if stop {
		path, body = "/jobs/"+jobID+"/stop", map[string]any{"drain": false}
	}
	b, err := json.Marshal(body)
	if err != nil {
		return "", err
	}
	resp, err := cl.HTTP.Post(cl.Base+path, "application/json", bytes.NewReader(b))
	var out struct {
		RequestID string `json:"request-id"`
	}
	err = flink.Answer(http.MethodPost, path, resp, err, &out)
	return out.RequestID, err
}

func TestTrigger(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	job := "a1b2c3d4e5f60718293a4b5c6d7e8f90"
	loc := copyFixture(t, fixtureEvents, filepath.Join(base, "savepoint-a1b2c3-0123456789ab"))
	stopLoc := copyFixture(t, fixtureOrders, filepath.Join(base, "savepoint-a1b2c3-ba9876543210"))
	ff := newFakeFlink(t)
	ff.json("GET /jobs/"+job, `{"jid":"`+job+`","name":"events","isStoppable":false,"state":"RUNNING","start-time":1,"end-time":-1,"duration":9,"maxParallelism":-1,"now":10,"timestamps":{},"vertices":[],"status-counts":{},"plan":{}}`)
	var polls atomic.Int32
	var body, stopBody map[string]any
	ff.set("POST /jobs/"+job+"/savepoints", func(w http.ResponseWriter, b map[string]any) {
		body = b
		io.WriteString(w, `{"request-id":"5b0c7e1f9a8d4c3b2a1f0e9d8c7b6a59"}`)
	})
	ff.set("GET /jobs/"+job+"/savepoints/5b0c7e1f9a8d4c3b2a1f0e9d8c7b6a59", func(w http.ResponseWriter, _ map[string]any) {
		if polls.Add(1) <= 2 {
			io.WriteString(w, `{"status":{"id":"IN_PROGRESS"},"operation":null}`)
			return
		}
		io.WriteString(w, `{"status":{"id":"COMPLETED"},"operation":{"location":"file:`+loc+`"}}`)
	})
	ff.json("GET /jobs/"+job+"/checkpoints", `{"counts":{},"latest":{"completed":null,"savepoint":{"className":"completed","id":23,"status":"COMPLETED","is_savepoint":true,"checkpoint_type":"SAVEPOINT","external_path":"file:`+loc+`","state_size":4562,"trigger_timestamp":1000,"latest_ack_timestamp":1100},"failed":null,"restored":null},"history":[]}`)
	ff.set("POST /jobs/"+job+"/stop", func(w http.ResponseWriter, b map[string]any) {
		stopBody = b
		io.WriteString(w, `{"request-id":"t-stop"}`)
	})
	ff.json("GET /jobs/"+job+"/savepoints/t-stop", `{"status":{"id":"COMPLETED"},"operation":{"location":"file:`+stopLoc+`"}}`)

	store := openStore(t)
	cfg := &config.Config{FlinkTargets: []*config.FlinkTarget{{Name: "flink-primary", RestURL: ff.URL, Region: "primary"}}}
	c := &Catalog{Store: store, Config: cfg, Log: quietLog()}

	var ticks []time.Duration
	start := time.Now()
	sp, err := c.Trigger(ctx, "flink-primary", job, false, testStart, func(d time.Duration) { ticks = append(ticks, d) })
	if err != nil {
		t.Fatal(err)
	}
	if len(ticks) != 2 || polls.Load() != 3 || time.Since(start) < 2*TriggerPoll {
		t.Fatalf("progress calls %v after %d polls in %s: want 2 calls, 500 ms apart", ticks, polls.Load(), time.Since(start))
	}
	if body["cancel-job"] != false || body["target-directory"] != nil {
		t.Fatalf("trigger body %v", body)
	}
	if sp.ID == 0 || sp.Path != "file:"+loc || sp.Origin != model.OriginTriggered || sp.Kind != model.KindSavepoint ||
		sp.FlinkTarget != "flink-primary" || sp.JobID != job || sp.JobName != "events" || sp.Status != model.SavepointCompleted ||
		*sp.SizeBytes != 4562 || *sp.TriggerMs != 1000 {
		t.Fatalf("triggered entry %+v", sp)
	}
	checkOffsets(t, sp, loadExpected(t, fixtureEvents))

	// Stop-with-savepoint; Flink's history does not list it (yet).
	sp2, err := c.Trigger(ctx, "flink-primary", job, true, testStart, nil)
	if err != nil {
		t.Fatal(err)
	}
	if stopBody["drain"] != false || sp2.Path != "file:"+stopLoc || sp2.SizeBytes != nil || sp2.TriggerMs == nil || sp2.CompletedMs == nil {
		t.Fatalf("stop-with-savepoint: body %v, entry %+v", stopBody, sp2)
	}
	checkOffsets(t, sp2, loadExpected(t, fixtureOrders))

	// A failed savepoint records nothing and says why.
	ff.json("GET /jobs/"+job+"/savepoints/t-stop", `{"status":{"id":"COMPLETED"},"operation":{"failure-cause":{"class":"java.util.concurrent.CompletionException","stack-trace":"java.util.concurrent.CompletionException: CheckpointException: Task not running\n\tat x"}}}`)
	if _, err := c.Trigger(ctx, "flink-primary", job, true, testStart, nil); err == nil || !strings.Contains(err.Error(), "Task not running") {
		t.Fatalf("failed savepoint: %v", err)
	}
	if _, err := c.Trigger(ctx, "flink-primary", "0000", false, testStart, nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("unknown job: %v", err)
	}
	if _, err := c.Trigger(ctx, "nope", job, false, testStart, nil); err == nil || !strings.Contains(err.Error(), "flink-primary") {
		t.Fatalf("unknown target: %v", err)
	}
	if all, _ := store.Savepoints(ctx, storage.SavepointFilter{}); len(all) != 2 {
		t.Fatalf("%d entries, want 2", len(all))
	}
}

func TestPaths(t *testing.T) {
	for in, want := range map[string]string{
		"file:/sp/savepoint-a":            "file:/sp/savepoint-a",
		"file:///sp/savepoint-a/":         "file:/sp/savepoint-a",
		"file://localhost/sp/x/_metadata": "file:/sp/x",
		"/sp/./x/../savepoint-a":          "file:/sp/savepoint-a",
		"s3://bucket/sp/savepoint-a/":     "s3://bucket/sp/savepoint-a",
		"s3://bucket/sp/x/_metadata":      "s3://bucket/sp/x",
	} {
		if got := flink.CanonicalPath(in); got != want {
			t.Errorf("CanonicalPath(%q) = %q, want %q", in, got, want)
		}
	}
	for _, bad := range []string{"relative/x", "s3://b/x", "hdfs://nn:8020/x", "file://host/x", "file:relative"} {
		if p, err := flink.LocalPath(bad); err == nil {
			t.Errorf("LocalPath(%q) = %q, want an error", bad, p)
		}
	}
}

func TestRunSyncsUntilDone(t *testing.T) {
	root := t.TempDir()
	copyFixture(t, fixtureEvents, filepath.Join(root, "savepoint-run"))
	store := openStore(t)
	c := &Catalog{Store: store, Config: &config.Config{SavepointDirs: []string{root}}, Log: quietLog()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		all, _ := store.Savepoints(context.Background(), storage.SavepointFilter{})
		if len(all) == 1 && all[0].OffsetsJSON != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Run did not sync at start: %+v", all)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}
