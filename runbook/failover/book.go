package failover

import (
	"sync"

	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
)

// Book is the runbook as this package's plan kinds use it: the engine's
// runs, services and settings, with the kinds' own operations (the
// failover and the drill, their steps and their pages' figures; the
// failback's are on failback.Book, which embeds this).
type Book struct{ *runbook.Runbook }

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
func book(rb *runbook.Runbook) Book { return Book{rb} }

// BookOf is rb with this package's plan kinds' operations.
func BookOf(rb *runbook.Runbook) Book { return Book{rb} }
