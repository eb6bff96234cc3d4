package handlers

import (
	"context"
	"net/http"

	"github.com/drconsole/drconsole/handlers/form"
)

// FailoverRollback is POST /failover/{run}/rollback: a switchover's
// fence removed (the run's kind says what it undoes), audited, the run
// cancelled if it had not completed.
func (h *Handlers) FailoverRollback(w http.ResponseWriter, r *http.Request) {
	f := form.NewReason(r)
	h.runAction(w, r, 0, "Rolled back: the fence's ACLs are removed. This is in the audit log.", func(ctx context.Context, id int64) error {
		if err := f.Validate(); err != nil {
			return err
		}
		return h.Runbook.Rollback(ctx, actor(r), id, f.Reason)
	})
}
