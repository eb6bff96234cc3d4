package failover

import (
	"context"

	"github.com/drconsole/drconsole/audit"
	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook/internal/effect"
	"github.com/drconsole/drconsole/storage"
)

// ApplyOffsets commits offsets to a DR group that has no members and
// records the change for undo (effect.ApplyOffsets), outside a run's
// translate step (the end-to-end tests drive it directly). w is its audit
// record: without a valid one nothing is committed.
func ApplyOffsets(ctx context.Context, w audit.Written, store *storage.Store, target *kafka.Client, flow, group string,
	offsets map[model.TP]int64, actor, reason string) (storage.GroupChange, error) {
	return effect.ApplyOffsets(ctx, w, store, target, flow, group, offsets, actor, reason)
}
