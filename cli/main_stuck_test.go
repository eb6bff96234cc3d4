package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMainProcess is not a test: it is the drconsole process the tests
// below start (the test binary run again with DRCONSOLE_MAIN_ARGS set).
func TestMainProcess(t *testing.T) {
	args := os.Getenv("DRCONSOLE_MAIN_ARGS")
	if args == "" {
		t.Skip("helper process only")
	}
	stuckGrace = time.Second
	os.Args = append([]string{"drconsole"}, strings.Split(args, "\x1f")...)
	Main(version)
}

// A CLI command blocked reading a named pipe (translate --syncs FIFO,
// whose writer never writes) stops after SIGTERM: the process exits within
// the grace instead of waiting forever with the signal caught.
func TestCommandStuckOnFIFOStopsAfterSIGTERM(t *testing.T) {
	dir := t.TempDir()
	offsets := filepath.Join(dir, "offsets.json")
	if err := os.WriteFile(offsets, []byte(`{"orders":{"0":5}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "syncs")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainProcess$")
	cmd.Env = append(os.Environ(), "DRCONSOLE_MAIN_ARGS="+strings.Join([]string{"translate", "--offsets", offsets, "--syncs", fifo}, "\x1f"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Opening the write end returns once the command has opened the pipe
	// to read it (so its signal handling is in place); nothing is written.
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		cmd.Process.Kill()
		t.Fatal(err)
	}
	defer w.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Fatalf("exit %v, want status 1 (stderr %q)", err, stderr.String())
		}
		if !strings.Contains(stderr.String(), "still busy after the stop signal") {
			t.Errorf("stderr %q does not say why it exited", stderr.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done // stderr is written until Wait returns
		t.Fatalf("still running 30 s after SIGTERM (stderr %q)", stderr.String())
	}
}
