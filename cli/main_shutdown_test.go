package cli

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flink/flinktest"
	"github.com/drconsole/drconsole/storage"
)

// The console stops promptly after the stop signal with a savepoint whose
// state file is a FIFO in a savepoint directory (it used to hang the
// catalog's sync, and shutdown waited for it forever).
func TestServeStopsWithFIFOSavepoint(t *testing.T) {
	root := t.TempDir()
	sp := filepath.Join(root, "savepoint-fifo")
	if err := os.MkdirAll(sp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sp, "_metadata"), flinktest.Metadata(flinktest.RelativeHandle("state", 10), 0), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(sp, "state"), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	old := time.Now().Add(-time.Hour) // settled: the scan takes it
	if err := os.Chtimes(filepath.Join(sp, "_metadata"), old, old); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	cfg := &config.Config{Listen: "127.0.0.1:0", DataDir: data, SavepointDirs: []string{root}, RefreshInterval: config.Duration(time.Second)}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- serveConsole(ctx, cfg, "(test)", nil, log) }()

	// Wait until the catalog has read the savepoint (new code: refused,
	// naming the FIFO), or recorded it and been stuck for 10 s (old code).
	var recorded time.Time
	for start := time.Now(); ; {
		if time.Since(start) > time.Minute {
			t.Fatal("the catalog never recorded the savepoint")
		}
		if st, err := storage.OpenReadOnly(filepath.Join(data, "drconsole.db")); err == nil {
			all, _ := st.Savepoints(context.Background(), storage.SavepointFilter{})
			st.Close()
			if len(all) == 1 && all[0].ReadError != "" {
				if !strings.Contains(all[0].ReadError, "FIFO") {
					t.Errorf("read error %q does not name the FIFO", all[0].ReadError)
				}
				break
			}
			if len(all) == 1 && recorded.IsZero() {
				recorded = time.Now()
			}
		}
		if !recorded.IsZero() && time.Since(recorded) > 10*time.Second {
			break
		}
		select {
		case err := <-errc:
			t.Fatalf("console stopped early: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("stopped with %v", err)
		}
	case <-time.After(ShutdownBound + 5*time.Second):
		t.Fatalf("still serving %s after the stop signal", ShutdownBound+5*time.Second)
	}
}

// Whatever is stuck, stopping returns within the bound after the signal.
func TestStopWithinBound(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithCancel(context.Background())
	stuck := make(chan struct{})
	defer close(stuck)
	errc := make(chan error, 1)
	go func() { errc <- stopWithin(ctx, 200*time.Millisecond, log, func() error { <-stuck; return nil }) }()
	cancel()
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "200ms after the stop signal") {
			t.Fatalf("stuck work: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("stopWithin waited for stuck work")
	}
	// Work that stops in time gives its own result.
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	want := errors.New("listen failed")
	if err := stopWithin(ctx, time.Second, log, func() error { return want }); !errors.Is(err, want) {
		t.Fatalf("prompt work: %v", err)
	}
}
