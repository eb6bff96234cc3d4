package failback

import (
	"context"
	"sync"

	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
)

// Book is the runbook as the failback uses it: the engine with the
// failover kinds' operations it builds on (which side is active, the cut,
// the restore and the rewrite), and the failback's own.
type Book struct{ failover.Book }

// kindState is what the failback keeps with a runbook between calls
// (Runbook.Local).
type kindState struct {
	// watchMu makes each WatchReverseFlows pass (its store read and its
	// SetWatched) one, so a pass that read before a step's outcome cannot
	// undo the pass that read after it.
	watchMu sync.Mutex
}

type kindStateKey struct{}

func (rb Book) state() *kindState {
	return rb.Local(kindStateKey{}, func() any { return new(kindState) }).(*kindState)
}

// book is rb as the failback uses it.
func book(rb *runbook.Runbook) Book { return Book{failover.BookOf(rb)} }

// BookOf is rb with the failback's operations.
func BookOf(rb *runbook.Runbook) Book { return book(rb) }

// markFailedOver is MarkFailedOver with its error logged.
func (rb Book) markFailedOver(ctx context.Context) {
	if err := rb.MarkFailedOver(ctx); err != nil && ctx.Err() == nil {
		rb.Log.Error("reading which flows are failed over", "err", err)
	}
}

// ReverseActive says whether failback r has reverse connectors now
// (ReverseActive), for the pages.
func (Book) ReverseActive(r *runbook.Run) bool { return ReverseActive(r) }
