package failover

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/runbook"
)

// Worker owns the console's long-running work: failover steps and
// savepoint triggers outlive the request that started them, so they run
// here, counted, where the pages read their progress and Shutdown can wait
// for them. The zero Worker (with Runbook, Catalog and Log set) is ready.
type Worker struct {
	Runbook *runbook.Runbook
	Catalog *catalog.Catalog
	Log     *slog.Logger
	// Now is the clock of the progress the pages show; nil is time.Now.
	Now func() time.Time

	mu      sync.Mutex
	wg      sync.WaitGroup
	closing bool
	stop    context.Context // cancelled when Shutdown gives up waiting
	cancel  context.CancelFunc
	seq     int64
	running map[int64]string // job number -> what it is, for Shutdown's report
	steps   map[stepKey]bool
	said    map[stepKey]string // a running step's latest progress
	drills  map[int64]bool     // drills running or being cleaned up here
	sp      spTriggers
}

type stepKey struct {
	run int64
	idx int
}

func (w *Worker) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

func (w *Worker) log() *slog.Logger {
	if w.Log != nil {
		return w.Log
	}
	return slog.Default()
}

// admit counts a job in before any of its work starts (so Shutdown waits
// for it), or refuses when the worker is shutting down. The returned
// context carries ctx's values (who asked, from where) but not its
// cancellation: the request ends long before the job does. Shutdown
// cancels it when its deadline passes. done counts the job out.
func (w *Worker) admit(ctx context.Context, what string) (jctx context.Context, done func(), err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closing {
		return nil, nil, runbook.ErrShuttingDown
	}
	if w.stop == nil {
		w.stop, w.cancel = context.WithCancel(context.Background())
		w.running = map[int64]string{}
	}
	w.seq++
	key := w.seq
	jctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	unhook := context.AfterFunc(w.stop, cancel)
	w.running[key] = what
	w.wg.Add(1)
	return jctx, func() {
		unhook()
		cancel()
		w.mu.Lock()
		delete(w.running, key)
		w.mu.Unlock()
		w.wg.Done()
	}, nil
}

// Execute checks and claims step idx of run id (Runbook.Begin: approval,
// order, confirmation, safety rules, one audited claim) and, when that
// passes, runs its effect in the background and returns at once; Executing
// shows it as running until its outcome is recorded.
func (w *Worker) Execute(ctx context.Context, who runbook.Actor, id int64, idx int, confirmation, override string) error {
	return w.ExecuteWith(ctx, who, id, idx, runbook.StepArgs{Confirmation: confirmation, Override: override})
}

// ExecuteWith is Execute with every argument an operator types
// (Runbook.BeginWith).
func (w *Worker) ExecuteWith(ctx context.Context, who runbook.Actor, id int64, idx int, args runbook.StepArgs) error {
	jctx, done, err := w.admit(ctx, fmt.Sprintf("failover run %d step %d", id, idx+1))
	if err != nil {
		return err
	}
	x, err := w.Runbook.BeginWith(ctx, who, id, idx, args)
	if err != nil {
		done()
		return err
	}
	w.setStep(id, idx, true)
	x.Progress = func(s string) { w.setProgress(id, idx, s) }
	go func() {
		defer done()
		defer w.setStep(id, idx, false)
		if err := x.Perform(jctx); err != nil {
			w.log().Error("failover step failed", "run", id, "step", idx+1, "err", err)
		}
	}()
	return nil
}

func (w *Worker) setStep(run int64, idx int, on bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.steps == nil {
		w.steps = map[stepKey]bool{}
	}
	if on {
		w.steps[stepKey{run, idx}] = true
	} else {
		delete(w.steps, stepKey{run, idx})
		delete(w.said, stepKey{run, idx})
	}
}

func (w *Worker) setProgress(run int64, idx int, s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.said == nil {
		w.said = map[stepKey]string{}
	}
	if w.steps[stepKey{run, idx}] {
		w.said[stepKey{run, idx}] = s
	}
}

// Progress is what run's first steps steps executing here last reported
// (a Kubernetes restore: the operator's view of the redeploy).
func (w *Worker) Progress(run int64, steps int) map[int]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[int]string{}
	for i := range steps {
		if s, ok := w.said[stepKey{run, i}]; ok {
			out[i] = s
		}
	}
	return out
}

// Executing reports which of run's first steps steps execute in this
// process right now.
func (w *Worker) Executing(run int64, steps int) map[int]bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[int]bool{}
	for i := range steps {
		if w.steps[stepKey{run, i}] {
			out[i] = true
		}
	}
	return out
}

// Shutdown stops accepting work and waits for the jobs running until ctx
// is done. Then it cancels them (their context ends: they stop asking
// Flink or Kafka as soon as they look) and returns an error naming each
// job still running. Safe to call more than once.
func (w *Worker) Shutdown(ctx context.Context) error {
	w.mu.Lock()
	w.closing = true
	w.mu.Unlock()
	idle := make(chan struct{})
	go func() { w.wg.Wait(); close(idle) }()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cancel != nil {
		w.cancel()
	}
	var left []string
	for _, what := range w.running {
		left = append(left, what)
	}
	if len(left) == 0 { // finished just as the deadline passed
		return nil
	}
	slices.Sort(left)
	return fmt.Errorf("%d job(s) still running when shutdown gave up waiting (cancelled): %s: %w", len(left), strings.Join(left, "; "), ctx.Err())
}
