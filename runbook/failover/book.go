package failover

import (
	"context"
	"sync"

	"github.com/drconsole/drconsole/catalog"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/kube"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/monitor"
	"github.com/drconsole/drconsole/runbook"
)

// Book is the runbook as this package's plan kinds use it: the engine's
// runs, services and settings, with the kinds' own operations (the
// failover and the drill, their steps and their pages' figures; the
// failback's are on failback.Book, which embeds this).
type Book struct {
	*runbook.Runbook
	*Env
}

// Env is what this package's plan kinds (and the failback's, on them)
// read and call besides the engine: the monitor's figures and clients,
// the savepoint catalog, the Kubernetes client of a target. The engine
// names none of them; cli hands them in once, at wiring (Equip).
type Env struct {
	Monitor *monitor.Monitor
	// Catalog reads savepoints for the rewrite-savepoint step and
	// registers what it writes; nil: that step is refused.
	Catalog *catalog.Catalog
	// Kube builds the Kubernetes client of a target (nil: kube.New).
	Kube func(*config.Kubernetes) (*kube.Client, error)
}

type envKey struct{}

// envOf is the environment kept with rb (an empty one until Equip).
func envOf(rb *runbook.Runbook) *Env {
	return rb.Local(envKey{}, func() any { return new(Env) }).(*Env)
}

// Equip gives rb the plan kinds' environment and makes its monitor the
// engine's reader of flow state (runbook.Flows). Call it once, before rb
// runs anything; it returns rb.
func Equip(rb *runbook.Runbook, env Env) *runbook.Runbook {
	*envOf(rb) = env
	rb.Flows = flows{book(rb)}
	return rb
}

// kindState is what this package's plan kinds keep with a runbook
// between calls (Runbook.Local).
type kindState struct {
	lastLost lostMemo // the last lost-to-DR figures read (lost_last.go)
	// marksMu makes each MarkFailedOver pass one (failedover.go); marks
	// are the failed-over marks read per completed run, under it.
	marksMu sync.Mutex
	marks   map[int64]model.FailedOver
}

type kindStateKey struct{}

func (rb Book) state() *kindState {
	return rb.Local(kindStateKey{}, func() any { return new(kindState) }).(*kindState)
}

// book is rb as this package's kinds use it.
func book(rb *runbook.Runbook) Book { return Book{rb, envOf(rb)} }

// BookOf is rb with this package's plan kinds' operations.
func BookOf(rb *runbook.Runbook) Book { return book(rb) }

// The pages' questions of this package's figures, as methods of the
// runbook they are asked of (handlers' Failovers).

// ActiveSides says which side of each of flows is active (ActiveSides).
func (rb Book) ActiveSides(ctx context.Context, flows []string) ([]model.ActiveSide, error) {
	return ActiveSides(ctx, rb.Store, flows)
}

// ActiveSideOf says which side of flow is active (ActiveSideOf).
func (rb Book) ActiveSideOf(ctx context.Context, flow string) (model.ActiveSide, error) {
	return ActiveSideOf(ctx, rb.Store, flow)
}

// LostAtCut states what run r lost at its cut (LostAtCut).
func (Book) LostAtCut(r *runbook.Run) string { return LostAtCut(r) }

// RestoredJob is the job id step idx of r restored (RestoredJob).
func (Book) RestoredJob(r *runbook.Run, idx int) string { return RestoredJob(r, idx) }

// RewriteStep is the rewrite-savepoint step q asks for under cfg
// (RewriteStep).
func (Book) RewriteStep(cfg *config.Config, q runbook.Request) runbook.Step {
	return RewriteStep(cfg, q)
}
