package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/storage"
)

// demo --data on a real console's directory refuses and deletes nothing;
// on its own (marked) directory it starts afresh; serve refuses a marked
// directory.
func TestDemoDataDirKeepsRealDatabase(t *testing.T) {
	ctx := context.Background()
	cfg, db := cliConfig(t)
	dir := filepath.Dir(db)
	s, err := storage.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if _, err := s.AppendAudit(ctx, model.AuditEntry{Actor: "alice", Action: "test", ClientIP: "local"}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()

	r := runCLI(t, "", "demo", "--data", dir, "--addr", "127.0.0.1:0")
	if r.code != 2 || !strings.Contains(r.stderr, "which the sandbox did not create") || !strings.Contains(r.stderr, "nothing was deleted") {
		t.Fatalf("demo --data on a real data directory: exit %d %q", r.code, r.stderr)
	}
	if s, err = storage.Open(db); err != nil {
		t.Fatal(err)
	}
	if n, bad, err := s.VerifyAudit(ctx); err != nil || bad != nil || n != 20 {
		t.Fatalf("after the refused demo: %d records (%v %v), want the 20 written", n, bad, err)
	}
	s.Close()
	if _, err := os.Stat(filepath.Join(dir, sandboxMarker)); err == nil {
		t.Fatal("a refused directory was marked as the sandbox's")
	}

	// A new directory becomes the sandbox's; its database goes next time.
	sbx := filepath.Join(t.TempDir(), "sandbox")
	if err := prepareSandboxDir(sbx); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sbx, "drconsole.db"), []byte("old run"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := prepareSandboxDir(sbx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(sbx, "drconsole.db")); !os.IsNotExist(err) {
		t.Fatalf("the previous sandbox database is still there: %v", err)
	}

	if err := refuseSandboxDir(sbx); err == nil || !strings.Contains(err.Error(), "sandbox directory") {
		t.Fatalf("serve on a sandbox directory: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, sandboxMarker), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, "", "serve", "--config", cfg); r.code != 1 || !strings.Contains(r.stderr, "is a sandbox directory") {
		t.Fatalf("serve with a marked data_dir: exit %d %q", r.code, r.stderr)
	}
}
