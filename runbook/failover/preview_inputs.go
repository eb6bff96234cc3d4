package failover

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strconv"

	"github.com/drconsole/drconsole/flink"
	"github.com/drconsole/drconsole/runbook"
	"github.com/drconsole/drconsole/storage"
)

// statusInputs: the safety rules read the monitor's snapshot; its lag
// moves at every refresh, so the page compares its verdict instead.
func (rb Book) statusInputs(flow string) []runbook.PreviewInput {
	if snap := rb.Monitor.Snapshot(flow); snap != nil {
		return []runbook.PreviewInput{{Name: "the flow's status", Value: string(snap.Status)},
			{Name: "primary reachable", Value: strconv.FormatBool(snap.Source.OK)},
			{Name: "DR reachable", Value: strconv.FormatBool(snap.Target.OK)}}
	}
	return nil
}

// syncsInput: the sync index's size moves when a sync arrives (or old
// ones are thinned out): either way a translation may differ.
func (rb Book) syncsInput(flow string) runbook.PreviewInput {
	_, syncs := rb.Monitor.Activity(flow)
	return runbook.PreviewInput{Name: "offset syncs ingested", Value: strconv.Itoa(syncs)}
}

// savepointInput sums up what a translation reads of a catalog entry:
// its status and offsets (not last_seen, which every catalog scan moves).
func (rb Book) savepointInput(ctx context.Context, path string) string {
	sp, err := rb.Store.SavepointByPath(ctx, flink.CanonicalPath(path))
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return "not in the catalog"
	case err != nil:
		return "unreadable (" + err.Error() + ")"
	}
	sum := sha256.Sum256([]byte(sp.OffsetsJSON + "\x00" + sp.ReadError))
	return fmt.Sprintf("%s, offsets %x", sp.Status, sum[:4])
}
