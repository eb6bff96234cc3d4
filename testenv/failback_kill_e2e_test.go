//go:build e2e

package testenv_test

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/config"
	connectrest "github.com/drconsole/drconsole/connect"
	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/storage"
	"github.com/drconsole/drconsole/testenv"
)

// A console killed during a failback step, against the real systems: the step runs in a child
// process (this test binary, TestFailbackKillChild) that opens the same database with its own
// monitor and runbook, as a console started on it would, and is killed with SIGKILL at a step
// boundary. Whoever comes next (another child, or the test) finds the step running under a
// dead process and resumes it.

const fbChildEnv = "DRCONSOLE_FAILBACK_KILL_CHILD" // JSON fbConsole + the step to run

// fbConsole is what a console of TestFailbackE2E's flow is started from.
type fbConsole struct {
	Primary, DR, ConnectURL, OffsetTopic string
	FlinkURL, SavepointDir, DB           string
	Run                                  int64
	Step                                 int
	Point                                string // the CrashHook point the child is killed at
	Policy                               string // the flow's replication policy; "" is identity
}

// withFlink adds TestFailbackE2E's Flink targets (one MiniCluster stands for both regions':
// the job's own arguments say which Kafka it reads) and savepoint directory to cfg.
func withFlink(cfg *config.Config, flinkURL, savepointDir string) {
	cfg.FlinkTargets = []*config.FlinkTarget{{Name: "flink-dr", RestURL: flinkURL, Region: "dr"}, {Name: "flink-primary", RestURL: flinkURL, Region: "primary"}}
	cfg.SavepointDirs = []string{savepointDir}
}

// fbRunbook is the failback test's runbook on cfg, store and mon.
func fbRunbook(cfg *config.Config, store *storage.Store, mon *monitor.Monitor, log *slog.Logger) *runbook.Runbook {
	return failover.Equip(&runbook.Runbook{Store: store, Config: cfg, Audit: runbook.StoreAuditor{Store: store}, Log: log,
		Connect: connectrest.New, ReverseCatchUp: 3 * time.Minute, Flink: flink.NewRESTClient}, failover.Env{Monitor: mon, Catalog: &catalog.Catalog{Store: store, Config: cfg, Monitor: mon, Log: log}})
}

// TestFailbackKillChild is the child process of TestFailbackE2E's killed steps; it does
// nothing unless started by it.
func TestFailbackKillChild(t *testing.T) {
	env := os.Getenv(fbChildEnv)
	if env == "" {
		t.Skip("the child of TestFailbackE2E")
	}
	var q fbConsole
	if err := json.Unmarshal([]byte(env), &q); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cfg := onConnectConfigPolicy(t, cmp.Or(q.Policy, "identity"), q.Primary, q.DR, q.ConnectURL, q.OffsetTopic)
	withFlink(cfg, q.FlinkURL, q.SavepointDir)
	store, mon, log := childMonitor(t, ctx, cfg, q.DB)
	rb := fbRunbook(cfg, store, mon, log)
	rb.CrashHook = func(p string) {
		if p == q.Point {
			fmt.Printf("REACHED %s\n", p)
			select {} // until the parent kills this process
		}
	}
	x, err := rb.Begin(ctx, runbook.Actor{Name: "alice", Role: "operator"}, q.Run, q.Step, fbFlowName, "")
	if err != nil {
		fmt.Printf("BEGIN FAILED %v\n", err)
		os.Exit(3)
	}
	err = x.Perform(ctx)
	fmt.Printf("FINISHED without reaching %s: %v\n", q.Point, err)
	os.Exit(4)
}

// killedAt runs step q.Step of run q.Run in a child console and kills it (SIGKILL) once it
// reaches q.Point, leaving the step as a dead console leaves it.
func killedAt(t *testing.T, q fbConsole) time.Duration {
	t.Helper()
	b, _ := json.Marshal(q)
	return killChildAt(t, "TestFailbackKillChild", fbChildEnv+"="+string(b), "REACHED "+q.Point,
		fmt.Sprintf("step %d to %s", q.Step+1, q.Point))
}

// childMonitor opens the database at db and starts a monitor on cfg, ready, as a console
// started on it would: for the child processes of the kill tests.
func childMonitor(t *testing.T, ctx context.Context, cfg *config.Config, db string) (*storage.Store, *monitor.Monitor, *slog.Logger) {
	t.Helper()
	store, err := storage.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	mon, err := monitor.NewMonitor(ctx, cfg, store, log)
	if err != nil {
		t.Fatal(err)
	}
	go mon.Run(ctx)
	if err := testenv.Eventually(60*time.Second, 100*time.Millisecond, func() error {
		if !mon.Ready() {
			return fmt.Errorf("monitor not ready")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return store, mon, log
}

// killChildAt runs this test binary's test in a child process with env added, and kills it
// (SIGKILL) once it prints line; it fails t when the child ends first or has not printed it
// within 4 minutes. doing says what the child was doing, for the failure.
func killChildAt(t *testing.T, test, env, line, doing string) time.Duration {
	t.Helper()
	start := time.Now()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.v")
	cmd.Env = append(os.Environ(), env)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var said []string
	deadline := time.After(4 * time.Minute)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				cmd.Wait()
				t.Fatalf("the child running %s ended without reaching it:\n%s", doing, strings.Join(said, "\n"))
			}
			said = append(said, l)
			if l == line {
				cmd.Process.Kill()
				cmd.Wait()
				for range lines {
				}
				return time.Since(start)
			}
		case <-deadline:
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the child running %s did not reach it within 4 minutes:\n%s", doing, strings.Join(said, "\n"))
		}
	}
}
