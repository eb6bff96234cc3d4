package failover

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
)

// Shutdown waits for a running job, however long, while its context
// allows; then it returns nil, and later work is refused.
func TestWorkerShutdownWaitsForRunningJob(t *testing.T) {
	t.Parallel()
	w := &Worker{}
	_, done, err := w.admit(context.Background(), "a slow job")
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	go func() { <-release; done() }()
	stopped := make(chan error, 1)
	go func() { stopped <- w.Shutdown(context.Background()) }()
	select {
	case err := <-stopped:
		t.Fatalf("Shutdown returned %v with a job still running", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatalf("Shutdown after the job finished: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Shutdown did not return after the job finished")
	}
	if _, _, err := w.admit(context.Background(), "late"); !errors.Is(err, runbook.ErrShuttingDown) {
		t.Fatalf("work after Shutdown: %v, want runbook.ErrShuttingDown", err)
	}
	if err := w.Execute(context.Background(), runbook.Actor{}, 1, 0, "", ""); !errors.Is(err, runbook.ErrShuttingDown) {
		t.Fatalf("Execute after Shutdown: %v, want runbook.ErrShuttingDown", err)
	}
}

// When the deadline passes first, Shutdown returns at once with what was
// still running, and the job's context is cancelled.
func TestWorkerShutdownDeadline(t *testing.T) {
	t.Parallel()
	w := &Worker{}
	jctx, done, err := w.admit(context.WithValue(context.Background(), ctxKey{}, "who"), "savepoint of job abc on dr")
	if err != nil {
		t.Fatal(err)
	}
	if jctx.Value(ctxKey{}) != "who" {
		t.Fatal("the job's context lost the request's values")
	}
	cancelled := make(chan struct{})
	go func() { <-jctx.Done(); close(cancelled); time.Sleep(time.Hour); done() }()
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = w.Shutdown(ctx)
	if took := time.Since(start); took > 2*time.Second || took < 100*time.Millisecond {
		t.Fatalf("Shutdown took %s with a 150 ms deadline", took)
	}
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "savepoint of job abc on dr") {
		t.Fatalf("Shutdown: %v, want the deadline and the job named", err)
	}
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the job's context was not cancelled")
	}
}

type ctxKey struct{}

// A savepoint whose opening audit record cannot be written is refused
// before anything is asked of Flink (the worker has no catalog here: asking
// would panic), and leaves no trigger on the page.
func TestWorkerTriggerRefusedWithoutAudit(t *testing.T) {
	t.Parallel()
	w := &Worker{}
	var actions []audit.Action
	_, err := w.TriggerSavepoint(context.Background(), model.SavepointRequest{Target: "dr", JobID: "j", Actor: "ann"},
		func(_ context.Context, action audit.Action, _ string, _ any) (audit.Written, error) {
			actions = append(actions, action)
			return audit.Written{}, errors.New("disk full")
		})
	var refused *runbook.AuditRefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "nothing was asked of Flink: disk full") {
		t.Fatalf("TriggerSavepoint: %v, want an audit refusal", err)
	}
	if len(actions) != 1 || actions[0] != "savepoint.trigger" {
		t.Fatalf("audit records tried: %q", actions)
	}
	if got := w.SavepointTriggers(time.Now()); len(got) != 0 {
		t.Fatalf("triggers after a refusal: %+v", got)
	}
	if err := w.Shutdown(context.Background()); err != nil {
		t.Fatalf("a refused trigger is still counted as running: %v", err)
	}
}

// One savepoint per job at a time: a second trigger is a conflict.
func TestWorkerOneTriggerPerJob(t *testing.T) {
	t.Parallel()
	w := &Worker{}
	if _, err := w.sp.start("dr", "j", "", "ann", time.Now()); err != nil {
		t.Fatal(err)
	}
	_, err := w.TriggerSavepoint(context.Background(), model.SavepointRequest{Target: "dr", JobID: "j", Actor: "bob"},
		func(context.Context, audit.Action, string, any) (audit.Written, error) {
			t.Fatal("audited a refused trigger")
			return audit.Written{}, nil
		})
	if err == nil || !strings.Contains(err.Error(), "already in progress (started by ann)") {
		t.Fatalf("second trigger: %v", err)
	}
}
