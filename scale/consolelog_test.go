package scale

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// The rig counts retention's deletions from the console's own log lines,
// written here by the same slog text handler the console uses.
func TestReadConsoleLogCountsThinning(t *testing.T) {
	path := filepath.Join(t.TempDir(), "console.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(f, nil))
	log.Info("thinned offset syncs", "flow", "primary->dr", "deleted", 1200, "kept", 2_000_000)
	log.Error("refreshing", "err", "context deadline exceeded")
	log.Info("thinned offset syncs", "flow", "primary->dr", "deleted", 34, "kept", 2_000_100)
	f.Close()
	l := readConsoleLog(path)
	if l.thinPasses != 2 || l.thinned != 1234 || l.errors != 1 || l.deadlines != 1 {
		t.Fatalf("read %+v, want 2 passes deleting 1234, 1 error (a deadline)", l)
	}
}
