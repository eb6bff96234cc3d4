package switchover

import (
	"context"
	"fmt"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/config"
	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/runbook/failover"
	"github.com/drconsole/drconsole/runbook/internal/effect"
)

// unfenced is a rollback's result: the fence's entries it removed (none
// when they were gone already).
type unfenced struct {
	Asked   []kafka.TopicACL `json:"asked"`
	Removed []kafka.TopicACL `json:"removed"`
}

// Rollbackable: a switchover's fence by ACLs can be removed, exactly the
// entries its fence step recorded (done, or failed part way); a fence by
// command or by hand is undone the way it was made.
func (kind) Rollbackable(r *runbook.Run) (string, error) {
	var fr fenced
	if err := resultOf(r, KindFence, &fr); err != nil {
		return "", fmt.Errorf("the fence step has not run: %w", runbook.ErrNoRollback)
	}
	if fr.Method != config.FenceACL {
		return "", fmt.Errorf("the fence was made %s: undo it the same way: %w", map[string]string{config.FenceCommand: "by a command",
			config.FenceManual: "by hand"}[fr.Method], runbook.ErrNoRollback)
	}
	if len(fr.Added) == 0 {
		return "", fmt.Errorf("the fence added no ACL: %w", runbook.ErrNoRollback)
	}
	return fmt.Sprintf("remove the fence's %d DENY WRITE ACL(s): %s", len(fr.Added), aclList(fr.Added)), nil
}

// Rollback removes the fence's DENY WRITE entries from the primary.
func (kind) Rollback(ctx context.Context, w audit.Written, rb *runbook.Runbook, r *runbook.Run) (any, error) {
	var fr fenced
	if err := resultOf(r, KindFence, &fr); err != nil {
		return nil, err
	}
	primary, _ := failover.BookOf(rb).Monitor.Clients(r.Flow)
	if primary == nil {
		return nil, fmt.Errorf("no client of the primary of flow %s", r.Flow)
	}
	removed, err := effect.UnfenceWrites(ctx, w, primary, fr.Added)
	return unfenced{Asked: fr.Added, Removed: removed}, err
}
