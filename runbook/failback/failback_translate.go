package failback

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/drconsole/drconsole/kafka"
	"github.com/drconsole/drconsole/mm2"
	"github.com/drconsole/drconsole/model"
	"github.com/drconsole/drconsole/runbook"
)

// Translating back from inside the log. A DR position short of DR's end
// recorded by stop-reverse (a consumer that lagged in DR, a savepoint taken
// before the job read everything) goes to the primary through the offset
// syncs of this failback's reverse flow, by MM2's own rule (mm2.Translate):
// the newest sync at or below it, downstream (+1 when not exact). Those
// syncs say where the reverse flow wrote DR's records on the primary, so
// the result never lies past the position's record: the group re-reads at
// most RereadMax records and skips none.
//
// Only syncs of this failback count: a sync's upstream offset at or past
// the partition's cut (where the reverse source started), written no
// earlier than the run was requested (less reverseSyncSkew for the
// workers' clocks). Syncs of an earlier failback's reverse flow, stored
// under the same name, describe another stretch of the logs. A position
// below the cut (a record the forward flow had copied to DR) has no such
// sync: it goes through the forward flow's syncs instead
// (translateForwardBack). One whose sync would land past the primary's end
// recorded by stop-reverse is refused. Under the default policy
// (failback_scope.go) the reverse source copied DR's own topics from 0,
// and a position inside a forward copy ("<primary>.<topic>") goes through
// the forward flow's syncs too.

// reverseSyncSkew is how far before the run's request a reverse flow's
// sync may be stamped (MM2 stamps it with its worker's clock).
const reverseSyncSkew = 5 * 60 * 1000

// reverseIndex holds the stored offset syncs of r's reverse flow that
// belong to this failback (scope: its cut).
func (rb Book) reverseIndex(ctx context.Context, r *runbook.Run, scope reverseScope) (*mm2.SyncIndex, error) {
	x := mm2.NewSyncIndex()
	since := r.CreatedMs - reverseSyncSkew
	err := x.AddFrom(func(add func(model.OffsetSync) error) error {
		return rb.Store.EachSync(ctx, ReverseFlowName(r.Flow), func(s model.OffsetSync) error {
			from, ok := scope.copies(model.TP{Topic: s.Topic, Partition: s.Partition})
			if !ok || s.Upstream < from || s.RecordMs < since {
				return nil
			}
			return add(s)
		})
	})
	if err != nil {
		return nil, fmt.Errorf("reading the reverse flow's offset syncs: %w", err)
	}
	return x, nil
}

// insideLog is a DR position inside the log that the translate-back rule
// at DR's end did not take.
type insideLog struct {
	tp        model.TP
	primaryTP model.TP // where tp's records are on the primary
	pos       int64
	drEnd     int64
	primaryTo int64 // the primary's end recorded by stop-reverse
	why       string
}

// translateInside moves each position through the reverse flow's syncs
// into b.Primary (and b.Translated), or refuses it in b.Refused.
func (rb Book) translateInside(ctx context.Context, r *runbook.Run, scope reverseScope, what string, b *back, inside []insideLog) error {
	if len(inside) == 0 {
		return nil
	}
	x, err := rb.reverseIndex(ctx, r, scope)
	if err != nil {
		return err
	}
	for _, in := range inside {
		tl := x.Translate(in.tp, in.pos)
		at := fmt.Sprintf("%s (%s at %d, DR's end was %d", mm2.TPKey(in.tp), what, in.pos, in.drEnd)
		switch {
		case !tl.Translated():
			b.Refused = append(b.Refused, at+in.why+"; no offset sync of this failback's reverse flow at or below it)")
		case tl.Offset > in.primaryTo:
			b.Refused = append(b.Refused, fmt.Sprintf("%s%s; the reverse flow's sync gives %d, past the primary's end %d)", at, in.why, tl.Offset, in.primaryTo))
		default:
			b.moved(in, tl.Offset, fmt.Sprintf("%s at %d → %d (reverse sync %d→%d, %s: at most %d re-read)",
				mm2.TPKey(in.tp), in.pos, tl.Offset, tl.Sync.Upstream, tl.Sync.Downstream, tl.Method, tl.RereadMax))
		}
	}
	return nil
}

// translateForwardBack moves each DR position among the records the
// forward flow had copied to DR (below the cut; under the default policy
// anywhere in a forward copy, "<primary>.<topic>") back to the primary
// through the forward flow's offset syncs, read backwards: the newest sync
// at or below the position (upstream U written at downstream D) gives U
// when the position is D, and U+1 past it. The forward flow copied the
// primary's records in order, so every one after that offset landed in DR
// after D: the group skips none. It re-reads the ones it had read in DR
// since D (at most position-D-1), then reads everything the primary holds
// after the cut: the records lost to DR, which it never read, and under
// the identity policy DR's own records copied back. Refused, naming the
// figures: no forward sync at or below the position, or an offset the
// primary's log no longer holds (retention since), where the group would
// start past records it has not read.
func (rb Book) translateForwardBack(ctx context.Context, r *runbook.Run, what string, b *back, items []insideLog) error {
	if len(items) == 0 {
		return nil
	}
	var topics []string
	for _, in := range items {
		if !slices.Contains(topics, in.primaryTP.Topic) {
			topics = append(topics, in.primaryTP.Topic)
		}
	}
	primary, _ := rb.Monitor.Clients(r.Flow)
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	bounds, err := kafka.ListBounds(rctx, primary, topics...)
	if err != nil {
		return fmt.Errorf("reading the primary's log starts: %w", err)
	}
	for _, in := range items {
		at := fmt.Sprintf("%s (%s at %d, DR's end was %d%s", mm2.TPKey(in.tp), what, in.pos, in.drEnd, in.why)
		s, ok := rb.Monitor.SyncSourceOf(r.Flow, in.primaryTP, in.pos)
		if !ok {
			b.Refused = append(b.Refused, at+"; a record the forward flow copied, and no offset sync of the forward flow at or below it)")
			continue
		}
		off, reread := s.Upstream, int64(0)
		if in.pos > s.Downstream {
			off, reread = s.Upstream+1, in.pos-s.Downstream-1
		}
		lb, read := bounds[in.primaryTP]
		switch {
		case !read:
			b.Refused = append(b.Refused, fmt.Sprintf("%s; the primary's log start of %s was not read)", at, mm2.TPKey(in.primaryTP)))
		case off < lb.Start:
			b.Refused = append(b.Refused, fmt.Sprintf("%s; the forward flow's sync %d→%d gives %d on the primary, below its log start %d: records it has not read are gone)",
				at, s.Upstream, s.Downstream, off, lb.Start))
		case off > in.primaryTo:
			b.Refused = append(b.Refused, fmt.Sprintf("%s; the forward flow's sync gives %d, past the primary's end %d)", at, off, in.primaryTo))
		default:
			b.moved(in, off, fmt.Sprintf("%s at %d → %s %d (forward sync %d→%d read backwards: at most %d re-read, then the primary's records after the cut, those lost to DR included)",
				mm2.TPKey(in.tp), in.pos, mm2.TPKey(in.primaryTP), off, s.Upstream, s.Downstream, reread))
		}
	}
	return nil
}

// moved records position in moved through syncs to off, saying how.
func (b *back) moved(in insideLog, off int64, how string) {
	b.Primary[in.primaryTP], b.From[in.primaryTP], b.How[in.primaryTP] = off, in.tp, how
	b.Translated = append(b.Translated, how)
}
