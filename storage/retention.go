package storage

import (
	"context"
	"database/sql"
	"fmt"
)

// ThinSyncs bounds the stored sync history of a flow. Syncs recorded before
// cutoffMs are thinned to the first one per intervalMs bucket, per partition
// and per history segment; it returns how many were deleted.
//
// Why this is safe: within a segment (upstream and downstream both rising)
// translation uses the greatest sync at or below an offset, so deleting a
// sync only makes an offset fall back to an earlier sync with a smaller
// downstream offset: more re-reading, never skipped records. A segment
// boundary (an upstream rewind, or a downstream truncation) and the sync just before it are never
// deleted, and neither is the newest sync of a partition, which the live lag estimate
// and current translations rely on.
func (s *Store) ThinSyncs(ctx context.Context, flow string, cutoffMs, intervalMs int64) (int, error) {
	if intervalMs <= 0 {
		return 0, fmt.Errorf("storage: thinning interval must be positive")
	}
	type key struct {
		topic     string
		partition int32
		logOffset int64
	}
	var doomed []key
	var prev *Sync
	var lastKeptBucket int64
	var pendingNewest *key // the previous sync, deleted unless it turns out to be its partition's newest
	flush := func() {
		if pendingNewest != nil {
			doomed = append(doomed, *pendingNewest)
			pendingNewest = nil
		}
	}
	err := s.EachSync(ctx, flow, func(x Sync) error {
		samePartition := prev != nil && prev.Topic == x.Topic && prev.Partition == x.Partition
		boundary := !samePartition || x.Upstream < prev.Upstream || x.Downstream < prev.Downstream
		if boundary {
			// Keep the sync before a boundary too: translation detects an
			// upstream rewind by comparing neighbours.
			pendingNewest = nil
		} else {
			flush() // x follows it in its segment, so it may go
		}
		bucket := x.RecordMs / intervalMs
		switch {
		case boundary || x.RecordMs >= cutoffMs || bucket != lastKeptBucket:
			lastKeptBucket = bucket
		default:
			pendingNewest = &key{x.Topic, x.Partition, x.LogOffset}
		}
		prev = &x
		return nil
	})
	if err != nil {
		return 0, err
	}
	if len(doomed) == 0 {
		return 0, nil
	}
	id, err := s.flowID(ctx, flow)
	if err != nil {
		return 0, err
	}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `DELETE FROM offset_syncs WHERE flow_id=? AND topic=? AND partition=? AND log_offset=?`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, k := range doomed {
			if _, err := st.ExecContext(ctx, id, k.topic, k.partition, k.logOffset); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("storage: thinning syncs of %s: %w", flow, err)
	}
	return len(doomed), nil
}
