package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within fails the test when f has not returned after 5 s: a regression
// that blocks on a FIFO fails rather than hangs the suite.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: still blocked after 5 s", what)
	}
}

// Hostile returns a directory holding a FIFO ("fifo"), a symbolic link to
// /dev/zero ("zero"), a link to the FIFO ("tofifo") and a regular file
// ("ok", 5 bytes).
func hostile(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	for link, to := range map[string]string{"zero": "/dev/zero", "tofifo": filepath.Join(dir, "fifo")} {
		if err := os.Symlink(to, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "ok"), []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestReadFileRefusesFIFOsAndDevices(t *testing.T) {
	dir := hostile(t)
	for _, name := range []string{"fifo", "tofifo", "zero"} {
		p := filepath.Join(dir, name)
		within(t, name, func() {
			b, err := ReadFile(p, 1<<20)
			if !errors.Is(err, ErrNotRegular) || b != nil || !strings.Contains(err.Error(), p) {
				t.Errorf("%s: %d bytes, %v: want ErrNotRegular naming the path", name, len(b), err)
			}
		})
		within(t, name+" (append)", func() {
			if f, err := OpenAppend(p, 0o600); !errors.Is(err, ErrNotRegular) {
				if f != nil {
					f.Close()
				}
				t.Errorf("%s: OpenAppend %v: want ErrNotRegular", name, err)
			}
		})
	}
	if _, err := ReadFile(dir, 1<<20); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "a directory") {
		t.Errorf("directory: %v", err)
	}
}

func TestReadFileBoundsSize(t *testing.T) {
	dir := hostile(t)
	p := filepath.Join(dir, "ok")
	if b, err := ReadFile(p, 5); err != nil || string(b) != "hello" {
		t.Fatalf("%q %v", b, err)
	}
	if _, err := ReadFile(p, 4); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("4-byte limit: %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing"), 5); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
	if _, err := ReadAll(strings.NewReader("hello!"), 5); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a reader that grew: %v", err)
	}
	f, err := OpenAppend(filepath.Join(dir, "new"), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if st, err := os.Stat(filepath.Join(dir, "new")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("created: %v %v", st, err)
	}
}
