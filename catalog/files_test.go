package catalog

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flink/flinktest"
	"github.com/drconsole/drconsole/flink/s3"
	"github.com/drconsole/drconsole/model"
)

const secret = "db_password=Hunter2-TOPSECRET-7f3a9c\n"

type regResult struct {
	id  int64
	err error
}

// A crafted savepoint inside a savepoint directory whose _metadata names a
// secret file elsewhere, or is itself a link to one: nothing of the secret
// is read, stored or said; the handle is named. The same absolute handle
// into another configured savepoint directory is read.
func TestRegisterRefusesFilesOutside(t *testing.T) {
	ctx := context.Background()
	root, other := t.TempDir(), t.TempDir()
	secretFile := filepath.Join(t.TempDir(), "secrets.env")
	if err := os.WriteFile(secretFile, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	store := openStore(t)
	c := &Catalog{Store: store, Config: &config.Config{SavepointDirs: []string{root, "file:" + other}}, Log: quietLog()}

	crafted := filepath.Join(root, "savepoint-crafted")
	writeFile(t, filepath.Join(crafted, "_metadata"), flinktest.Metadata(flinktest.FileHandle(secretFile, int64(len(secret))), 0))
	id, err := c.Register(ctx, crafted)
	if !errors.Is(err, model.ErrOffsetsUnreadable) || !strings.Contains(err.Error(), secretFile) ||
		!strings.Contains(err.Error(), "outside the savepoint's directory") || len(flinktest.Leaks(secret, err.Error())) > 0 {
		t.Fatalf("crafted absolute handle: %v", err)
	}
	sp, err := store.SavepointByID(ctx, id)
	if err != nil || sp.OffsetsJSON != "" || len(flinktest.Leaks(secret, sp.ReadError)) > 0 || !strings.Contains(sp.ReadError, secretFile) {
		t.Fatalf("stored entry: %+v %v", sp, err)
	}

	linked := filepath.Join(root, "savepoint-linked")
	if err := os.MkdirAll(linked, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secretFile, filepath.Join(linked, "_metadata")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Register(ctx, linked); !errors.Is(err, ErrOutsideDirs) || len(flinktest.Leaks(secret, err.Error())) > 0 {
		t.Fatalf("_metadata linked out: %v", err)
	}

	state := flinktest.ReaderState("orders", 1, 99)
	abs := filepath.Join(other, "shared", "state")
	writeFile(t, abs, state)
	ok := filepath.Join(root, "savepoint-ok")
	writeFile(t, filepath.Join(ok, "_metadata"), flinktest.Metadata(flinktest.FileHandle(abs, int64(len(state))), 0))
	if _, err := c.Register(ctx, ok); err != nil {
		t.Fatalf("absolute handle into another savepoint directory: %v", err)
	}
}

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// FIFOs as _metadata and as a state file: registration answers at once
// with an error naming the FIFO, and a sync still answers.
func TestRegisterFIFO(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	store := openStore(t)
	c := &Catalog{Store: store, Config: &config.Config{SavepointDirs: []string{root}}, Log: quietLog()}

	metaFIFO := filepath.Join(root, "savepoint-fifo-meta")
	if err := os.MkdirAll(metaFIFO, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(metaFIFO, "_metadata"), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	r := flinktest.Within(t, 5*time.Second, "register (FIFO _metadata)", func() regResult { id, err := c.Register(ctx, metaFIFO); return regResult{id, err} })
	if r.err == nil || !strings.Contains(r.err.Error(), "_metadata") {
		t.Fatalf("FIFO _metadata: %v", r.err)
	}

	stateFIFO := filepath.Join(root, "savepoint-fifo-state")
	writeFile(t, filepath.Join(stateFIFO, "_metadata"), flinktest.Metadata(flinktest.RelativeHandle("state", 10), 0))
	if err := syscall.Mkfifo(filepath.Join(stateFIFO, "state"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = flinktest.Within(t, 5*time.Second, "register (FIFO state file)", func() regResult { id, err := c.Register(ctx, stateFIFO); return regResult{id, err} })
	if !errors.Is(r.err, model.ErrOffsetsUnreadable) || !strings.Contains(r.err.Error(), "FIFO") || !strings.Contains(r.err.Error(), filepath.Join(stateFIFO, "state")) {
		t.Fatalf("FIFO state file: %v", r.err)
	}
	// Marked unread again, the sync's pending read meets the FIFO: prompt.
	if err := store.SetSavepointOffsets(ctx, r.id, "", "", 0, ""); err != nil {
		t.Fatal(err)
	}
	flinktest.Within(t, 5*time.Second, "sync", func() error { return c.Sync(ctx) })
	if sp, err := store.SavepointByID(ctx, r.id); err != nil || !strings.Contains(sp.ReadError, "FIFO") {
		t.Fatalf("after sync: %+v %v", sp, err)
	}
}

// A read that hangs (an S3 endpoint that never answers) is given up after
// the read timeout, and the sync holding the catalog returns; a sync
// waiting behind a stuck one gives up when its context is done.
func TestCatalogDeadlines(t *testing.T) {
	ctx := context.Background()
	store := openStore(t)
	release, asked := make(chan struct{}), make(chan struct{}, 100)
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hung.Close)
	t.Cleanup(func() { close(release) })
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "y")
	st, err := s3.New(&config.S3{Endpoint: hung.URL, Region: "us-east-1", PathStyle: true})
	if err != nil {
		t.Fatal(err)
	}
	c := &Catalog{Store: store, Config: &config.Config{}, Log: quietLog(), S3: st, ReadTimeout: 300 * time.Millisecond}
	id, err := store.UpsertSavepoint(ctx, model.Savepoint{Path: "s3://flink/savepoints/sp-hung", Origin: model.OriginManual,
		Status: model.SavepointCompleted, Kind: model.KindSavepoint}, time.Now().UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	flinktest.Within(t, 10*time.Second, "sync with a hung read", func() error { return c.Sync(ctx) })
	sp, err := store.SavepointByID(ctx, id)
	if err != nil || !strings.Contains(sp.ReadError, "did not finish within 300ms") {
		t.Fatalf("hung read: %+v %v", sp, err)
	}

	// A sync stuck on a read (the default read timeout is long), and one
	// behind it.
	if err := store.SetSavepointOffsets(ctx, id, "", "", 0, ""); err != nil {
		t.Fatal(err)
	}
	for len(asked) > 0 {
		<-asked
	}
	slow := &Catalog{Store: store, Config: &config.Config{}, Log: quietLog(), S3: st}
	go slow.Sync(ctx)
	<-asked
	sctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	err = flinktest.Within(t, 5*time.Second, "sync behind a stuck one", func() error { return slow.Sync(sctx) })
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "another sync") {
		t.Fatalf("sync behind a stuck one: %v", err)
	}
}
