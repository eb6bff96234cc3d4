package cli

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/flink/flinktest"
)

// A second console on a data directory a live console serves refuses to
// start: it would take the first one's running failover step for an
// interrupted one and run it again. Once the first is gone, it starts.
func TestSecondConsoleOnOneDataDirRefused(t *testing.T) {
	data := t.TempDir()
	unlock, err := lockDataDir(data)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{Listen: "127.0.0.1:0", DataDir: data, RefreshInterval: config.Duration(time.Second)}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err = flinktest.Within(t, 30*time.Second, "a second console refusing", func() error { return serveConsole(ctx, cfg, "(test)", nil, log) })
	if err == nil || !strings.Contains(err.Error(), "another drconsole is serving") {
		t.Fatalf("second console: %v, want a refusal naming the other console", err)
	}
	unlock()
	again, err := lockDataDir(data)
	if err != nil {
		t.Fatalf("after the first console is gone: %v", err)
	}
	again()
}
