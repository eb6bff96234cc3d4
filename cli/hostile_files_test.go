package cli

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/safefile"
)

// Files named on the command line may be FIFOs (a read waits for a writer
// for ever) or links to /dev/zero (a read never ends and fills memory).
// Each command below must refuse them at once. Each run is bounded, so a
// regression fails rather than hangs the suite.

// cliWithin runs the CLI and fails the test when it has not returned in
// 10 s.
func cliWithin(t *testing.T, args ...string) result {
	t.Helper()
	done := make(chan result, 1)
	go func() { done <- runCLI(t, "", args...) }()
	select {
	case r := <-done:
		return r
	case <-time.After(10 * time.Second):
		t.Fatalf("drconsole %s: still running after 10 s", strings.Join(args, " "))
	}
	return result{}
}

// hostile makes a FIFO and a symbolic link to /dev/zero.
func hostile(t *testing.T) (fifo, zero string) {
	t.Helper()
	dir := t.TempDir()
	fifo, zero = filepath.Join(dir, "fifo.json"), filepath.Join(dir, "zero.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	return fifo, zero
}

// refused checks a command's refusal: an error exit naming the file as
// not a regular one.
func refused(t *testing.T, what string, r result) {
	t.Helper()
	if r.code == 0 || !strings.Contains(r.stderr, "not a regular file") {
		t.Errorf("%s: exit %d, stderr %q: want a not-a-regular-file refusal", what, r.code, r.stderr)
	}
}

func TestCommandsRefuseFIFOs(t *testing.T) {
	fifo, _ := hostile(t)
	dir := t.TempDir()
	syncs := writeFile(t, dir, "syncs.jsonl", syncsJSONL)
	offsets := writeFile(t, dir, "offsets.json", `{"events-0": 150}`)
	_, db := cliConfigWithFourUsers(t)

	refused(t, "serve --config", cliWithin(t, "serve", "--config", fifo))
	refused(t, "translate --offsets", cliWithin(t, "translate", "--offsets", fifo, "--syncs", syncs))
	refused(t, "translate --syncs", cliWithin(t, "translate", "--offsets", offsets, "--syncs", fifo))
	refused(t, "savepoint rewrite --offsets", cliWithin(t, "savepoint", "rewrite", spEvents, "--offsets", fifo, "--out", filepath.Join(dir, "out")))
	refused(t, "audit verify --anchor", cliWithin(t, "audit", "verify", "--db", db, "--anchor", fifo))
	refused(t, "audit verify --evidence", cliWithin(t, "audit", "verify", "--db", db, "--evidence", fifo))

	// The audit anchor the console appends to: a FIFO without a reader.
	done := make(chan error, 1)
	go func() {
		done <- writeAnchor(context.Background(), http.DefaultClient, config.AuditAnchor{File: fifo}, time.Now(), 1, strings.Repeat("0", 64))
	}()
	select {
	case err := <-done:
		if !errors.Is(err, safefile.ErrNotRegular) {
			t.Errorf("anchor file FIFO: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("writing the anchor to a FIFO still blocked after 10 s")
	}
}

func TestCommandsRefuseDevZero(t *testing.T) {
	_, zero := hostile(t)
	dir := t.TempDir()
	syncs := writeFile(t, dir, "syncs.jsonl", syncsJSONL)
	refused(t, "serve --config", cliWithin(t, "serve", "--config", zero))
	refused(t, "translate --offsets", cliWithin(t, "translate", "--offsets", zero, "--syncs", syncs))
	refused(t, "savepoint rewrite --offsets", cliWithin(t, "savepoint", "rewrite", spEvents, "--offsets", zero, "--out", filepath.Join(dir, "out")))
	_, db := cliConfigWithFourUsers(t)
	refused(t, "audit verify --evidence", cliWithin(t, "audit", "verify", "--db", db, "--evidence", zero))
}

// restore: a FIFO as the copy or its manifest, a manifest linked to
// /dev/zero.
func TestRestoreRefusesHostileFiles(t *testing.T) {
	dir, copyPath := backupOf(t, 3)
	target := filepath.Join(dir, "standby.db")
	manifest, err := os.ReadFile(copyPath + ".json")
	if err != nil {
		t.Fatal(err)
	}

	fifoCopy := filepath.Join(dir, "fifocopy", "drconsole-20990101T000000.000Z.db")
	os.MkdirAll(filepath.Dir(fifoCopy), 0o700)
	if err := syscall.Mkfifo(fifoCopy, 0o600); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(fifoCopy+".json", manifest, 0o600)
	refused(t, "restore, FIFO copy", cliWithin(t, "restore", "--from", filepath.Dir(fifoCopy), "--db", target))

	raw, _ := os.ReadFile(copyPath)
	fifoManifest := filepath.Join(dir, "fifomanifest", "b.db")
	os.MkdirAll(filepath.Dir(fifoManifest), 0o700)
	os.WriteFile(fifoManifest, raw, 0o600)
	if err := syscall.Mkfifo(fifoManifest+".json", 0o600); err != nil {
		t.Fatal(err)
	}
	refused(t, "restore, FIFO manifest", cliWithin(t, "restore", "--from", fifoManifest, "--db", target))

	zeroManifest := filepath.Join(dir, "zeromanifest", "b.db")
	os.MkdirAll(filepath.Dir(zeroManifest), 0o700)
	os.WriteFile(zeroManifest, raw, 0o600)
	if err := os.Symlink("/dev/zero", zeroManifest+".json"); err != nil {
		t.Fatal(err)
	}
	refused(t, "restore, manifest linked to /dev/zero", cliWithin(t, "restore", "--from", zeroManifest, "--db", target))
	if exists(target) {
		t.Fatal("a refused restore left a database behind")
	}
}
