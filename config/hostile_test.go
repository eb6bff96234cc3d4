package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drconsole/drconsole/safefile"
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

// hostileFiles makes a FIFO and a symbolic link to /dev/zero in a
// temporary directory.
func hostileFiles(t *testing.T) (fifo, zero string) {
	t.Helper()
	dir := t.TempDir()
	fifo, zero = filepath.Join(dir, "fifo"), filepath.Join(dir, "zero.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	return fifo, zero
}

// `serve --config` given a FIFO waited for a writer for ever; given a link
// to /dev/zero it read until the process ran out of memory.
func TestLoadRefusesFIFOAndDevice(t *testing.T) {
	fifo, zero := hostileFiles(t)
	for _, p := range []string{fifo, zero} {
		within(t, p, func() {
			if _, err := Load(p); !errors.Is(err, safefile.ErrNotRegular) {
				t.Errorf("Load(%s): %v, want a not-a-regular-file refusal", p, err)
			}
		})
	}
}

// Every file a config names is checked the same way: secret files, TLS
// files and the kubeconfig.
func TestNamedFilesRefuseFIFOAndDevice(t *testing.T) {
	fifo, zero := hostileFiles(t)
	within(t, "parse", func() {
		_, err := Parse("hostile.yaml", strings.NewReader(`
clusters:
  a: {bootstrap: ["127.0.0.1:9092"], tls: {ca_file: "`+fifo+`", cert_file: "`+zero+`", key_file: "`+fifo+`"}}
  b: {bootstrap: ["127.0.0.1:9093"]}
flows:
  - {source: a, target: b}
notifications:
  webhooks:
    - {name: chat, kind: slack, url_file: "`+fifo+`"}
    - {name: ops, url: "https://h.example/x", secret_file: "`+zero+`"}
`))
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		for _, want := range []string{
			"clusters.a.tls.ca_file: cannot read " + fifo + ": a named pipe (FIFO), not a regular file",
			"clusters.a.tls.cert_file: cannot read " + zero + ": a character device, not a regular file",
			"notifications.webhooks[0].url_file: cannot read: a named pipe (FIFO), not a regular file",
			"notifications.webhooks[1].secret_file: cannot read: a character device, not a regular file",
		} {
			if !strings.Contains(msg, want) {
				t.Errorf("missing %q in:\n%s", want, msg)
			}
		}
	})
	within(t, "TLS client config", func() {
		if _, err := (&TLS{CAFile: fifo}).ClientConfig(); !errors.Is(err, safefile.ErrNotRegular) {
			t.Errorf("ca_file FIFO: %v", err)
		}
		if _, err := (&TLS{CertFile: zero, KeyFile: zero}).ClientConfig(); !errors.Is(err, safefile.ErrNotRegular) {
			t.Errorf("cert_file /dev/zero: %v", err)
		}
	})
}
