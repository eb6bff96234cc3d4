package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

// A CLI command blocked reading (translate --offsets - from a pipe whose
// writer never writes: files named by path are refused when they are FIFOs,
// stdin cannot be) stops after SIGTERM: the process exits within the grace
// instead of waiting forever with the signal caught.
func TestCommandStuckOnFIFOStopsAfterSIGTERM(t *testing.T) {
	dir := t.TempDir()
	syncs := filepath.Join(dir, "syncs.jsonl")
	if err := os.WriteFile(syncs, []byte(syncsJSONL), 0o644); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainProcess$")
	cmd.Env = append(os.Environ(), "DRCONSOLE_MAIN_ARGS="+strings.Join([]string{"translate", "--offsets", "-", "--syncs", syncs}, "\x1f"))
	cmd.Stdin = r
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	// Signal once the command reads stdin (its signal handling is in
	// place by then); nothing is written.
	readingStdin(t, cmd.Process.Pid)
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

// readingStdin waits until a thread of process pid is in read(0, ...),
// as /proc tells; where /proc does not say, it waits 2 s instead.
func readingStdin(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		tasks, err := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "syscall"))
		if err != nil || len(tasks) == 0 {
			break
		}
		for _, task := range tasks {
			if b, err := os.ReadFile(task); err == nil && strings.HasPrefix(string(b), "0 0x0 ") {
				return
			}
		}
	}
	time.Sleep(2 * time.Second)
}
